"""Explaining a plan: which stages each vertex runs, each edge's kind, and why each
boundary between vertices exists, all as the planner recorded them."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import edgeCaption
from sparkjet.planner.fusion import parallelismText

if TYPE_CHECKING:
    from sparkjet.planner.lowering import VertexRole


def explanation(dag: DAG, roles: Mapping[str, "VertexRole"], reasons: Sequence[str]) -> str:
    """Explain ``dag``: ``roles`` says what each vertex runs, ``reasons`` why each boundary
    between its vertices exists (as fusion and lowering gave them)."""
    lines = [f"Core DAG of {len(dag.vertices())} vertices and {len(dag.edges())} edges", "", "Vertices"]
    for vertex in dag:
        lines.append(f"  {vertex.name} (parallelism {parallelismText(vertex.localParallelism)})")
        lines.append(f"    runs {describeRole(roles[vertex.name])}")
    lines += ["", "Edges"]
    lines += [f"  {e.sourceName} -> {e.destName}: {edgeCaption(e)}" for e in dag.edges()]
    if reasons:
        lines += ["", "Why"] + [f"  {reason}" for reason in reasons]
    return "\n".join(lines)


def describeRole(role: "VertexRole") -> str:
    """Say what a vertex runs: ``the prepare step of `count```, ``the stages `a`, `b`, fused ...``."""
    names = ", ".join(f"`{name}`" for name in role.stages)
    if not role.stages:
        return "no stage of the pipeline"
    if role.step:
        return f"the {role.step} step of {names}"
    if len(role.stages) > 1:
        return f"the stages {names}, fused into one loop"
    return f"the stage {names}"
