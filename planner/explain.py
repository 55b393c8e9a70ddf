"""Explaining a plan: which stages each vertex runs, each edge's kind, and why each
boundary between vertices exists."""

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import PREPARE_SUFFIX, edgeCaption
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import AggregateTransform, GroupTransform
from sparkjet.planner.fusion import STATELESS

if TYPE_CHECKING:
    from sparkjet.planner.planning import VertexRole


def explanation(
    named: PipelineGraph, fused: PipelineGraph, dag: DAG, roles: Mapping[str, "VertexRole"]
) -> str:
    """Explain ``dag``, planned from the uniquely named graph ``named`` fused into ``fused``;
    ``roles`` says what each vertex runs."""
    lines = [f"Core DAG of {len(dag.vertices())} vertices and {len(dag.edges())} edges", "", "Vertices"]
    for vertex in dag:
        lines.append(f"  {vertex.name} (parallelism {_parallelism(vertex.localParallelism)})")
        lines.append(f"    runs {_describe(roles[vertex.name])}")
    lines += ["", "Edges"]
    lines += [f"  {e.sourceName} -> {e.destName}: {edgeCaption(e)}" for e in dag.edges()]
    reasons = fusionReasons(named) + aggregationReasons(fused, dag)
    if reasons:
        lines += ["", "Why"] + [f"  {reason}" for reason in reasons]
    return "\n".join(lines)


def fusionReasons(graph: PipelineGraph) -> list[str]:
    """Say, for each link between two stateless stages, why they were not fused."""
    reasons = []
    for index, transform in enumerate(graph.transforms):
        if not isinstance(transform, STATELESS):
            continue
        for upstream in graph.upstream[index]:
            reason = _notFusedBecause(graph, upstream, index)
            if reason:
                reasons.append(f"not fused: {reason}")
    return list(dict.fromkeys(reasons))


def _notFusedBecause(graph: PipelineGraph, upstream: int, index: int) -> str | None:
    first, second = graph.transforms[upstream], graph.transforms[index]
    if not isinstance(first, STATELESS):
        return None
    if not graph.fusionEnabled:
        return f"`{first.name}` -> `{second.name}`: fusion is turned off for this pipeline"
    downstream = graph.downstream(upstream)
    if len(downstream) != 1:
        names = ", ".join(f"`{graph.transforms[i].name}`" for i in downstream)
        return f"`{first.name}` has {len(downstream)} downstream stages ({names})"
    if second.rebalancing(0) is not None:
        return f"`rebalance()` before `{second.name}`"
    if second.localParallelism != first.localParallelism:
        return (
            f"local parallelism {_parallelism(second.localParallelism)} of `{second.name}` "
            f"≠ {_parallelism(first.localParallelism)} of `{first.name}`"
        )
    return None


def aggregationReasons(graph: PipelineGraph, dag: DAG) -> list[str]:
    """Say, for each aggregation, whether it runs in one stage or two, and why."""
    reasons = []
    names = {vertex.name for vertex in dag.vertices()}
    for transform in graph.transforms:
        if not isinstance(transform, (GroupTransform, AggregateTransform)):
            continue
        if transform.name + PREPARE_SUFFIX in names:
            reason = "two-stage: prepare per task, combine after the shuffle"
        elif transform.aggrOp.combineFn is None:
            reason = "single-stage aggregation: the operation has no combine"
        else:
            reason = "single-stage aggregation: `rebalance()` before it sends every item across"
        reasons.append(f"`{transform.name}`: {reason}")
    return reasons


def _describe(role: "VertexRole") -> str:
    names = ", ".join(f"`{name}`" for name in role.stages)
    if not role.stages:
        return "no stage of the pipeline"
    if role.step:
        return f"the {role.step} step of {names}"
    if len(role.stages) > 1:
        return f"the stages {names}, fused into one loop"
    return f"the stage {names}"


def _parallelism(value: int) -> str:
    return "default" if value == LOCAL_PARALLELISM_USE_DEFAULT else str(value)
