"""Explaining a plan: which stages each vertex runs, each edge's kind, and why each
boundary between vertices exists."""

import re

from coredag.dag import DAG
from coredag.dot import PREPARE_SUFFIX, edgeCaption
from coredag.vertex import LOCAL_PARALLELISM_USE_DEFAULT
from pipeline.pipeline_graph import PipelineGraph
from pipeline.transforms import AggregateTransform, GroupTransform, Transform
from planner.fusion import STATELESS, FusedTransform


def explanation(named: PipelineGraph, fused: PipelineGraph, dag: DAG) -> str:
    """Explain ``dag``, planned from the uniquely named graph ``named`` fused into ``fused``."""
    lines = [f"Core DAG of {len(dag.vertices())} vertices and {len(dag.edges())} edges", "", "Vertices"]
    for vertex in dag:
        lines.append(f"  {vertex.name} (parallelism {_parallelism(vertex.localParallelism)})")
        lines.append(f"    runs {_stagesOf(vertex.name, fused)}")
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


_STEP_ROLES = re.compile(r"-(prepare|collect|joiner|collector\d+)")


def _stagesOf(vertexName: str, graph: PipelineGraph) -> str:
    for transform in graph.transforms:
        if vertexName == transform.name:
            return _describe(transform)
    for transform in graph.transforms:
        role = _STEP_ROLES.fullmatch(vertexName[len(transform.name) :])
        if vertexName.startswith(transform.name) and role:
            return f"the {role.group(1)} step of `{transform.name}`"
    return "no stage of the pipeline"


def _describe(transform: Transform) -> str:
    if isinstance(transform, FusedTransform):
        names = ", ".join(f"`{stage.name}`" for stage in transform.stages)
        return f"the stages {names}, fused into one loop"
    return f"the stage `{transform.name}`"


def _parallelism(value: int) -> str:
    return "default" if value == LOCAL_PARALLELISM_USE_DEFAULT else str(value)
