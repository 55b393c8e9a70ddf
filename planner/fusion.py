"""Fusion of stateless stages: ``... -> map -> filter -> ...`` becomes ``... -> fused(map, filter) -> ...``.

As Jet's Planner: find the chain (``findChain``), decide each link (``notFusedBecause``, which
also says why a link is not fused), build the fused stage (``fusedTransform``)."""

import attrs

from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import LOCAL_PARALLELISM_USE_DEFAULT, StatelessTransform, Transform


@attrs.frozen
class FusedTransform(Transform):
    """Several stateless stages run as one: their functions applied in order."""

    stages: tuple[StatelessTransform, ...]


def findChain(graph: PipelineGraph, start: int) -> list[int]:
    """Return the indexes of the stateless chain starting at ``start`` (maybe just ``start``)."""
    chain = [start]
    current = start
    while True:
        downstream = graph.downstream(current)
        if len(downstream) != 1 or not canFuse(graph, current, downstream[0]):
            return chain
        current = downstream[0]
        chain.append(current)


def canFuse(graph: PipelineGraph, upstream: int, downstream: int) -> bool:
    """Return whether the stateless stage ``upstream`` runs in one loop with ``downstream``."""
    second = graph.transforms[downstream]
    return isinstance(second, StatelessTransform) and notFusedBecause(graph, upstream, downstream) is None


def notFusedBecause(graph: PipelineGraph, upstream: int, downstream: int) -> str | None:
    """Return why two linked stateless stages are not fused, None if they are. Jet's rule:
    fusion is on, the first feeds only the second, whose input is not rebalanced and whose
    local parallelism is the same."""
    first, second = graph.transforms[upstream], graph.transforms[downstream]
    if not graph.fusionEnabled:
        return f"`{first.name}` -> `{second.name}`: fusion is turned off for this pipeline"
    fed = graph.downstream(upstream)
    if len(fed) != 1:
        names = ", ".join(f"`{graph.transforms[i].name}`" for i in fed)
        return f"`{first.name}` has {len(fed)} downstream stages ({names})"
    if second.rebalancing(0) is not None:
        return f"`rebalance()` before `{second.name}`"
    if second.localParallelism != first.localParallelism:
        return (
            f"local parallelism {parallelismText(second.localParallelism)} of `{second.name}` "
            f"≠ {parallelismText(first.localParallelism)} of `{first.name}`"
        )
    return None


def fusionReasons(graph: PipelineGraph) -> tuple[str, ...]:
    """Say, for each link between two stateless stages of ``graph``, why they were not fused."""
    reasons = (
        notFusedBecause(graph, upstream, index)
        for index, transform in enumerate(graph.transforms)
        if isinstance(transform, StatelessTransform)
        for upstream in graph.upstream[index]
        if isinstance(graph.transforms[upstream], StatelessTransform)
    )
    return tuple(dict.fromkeys(f"not fused: {reason}" for reason in reasons if reason))


def parallelismText(value: int) -> str:
    """Return a local parallelism as explanations say it: ``default`` or the number."""
    return "default" if value == LOCAL_PARALLELISM_USE_DEFAULT else str(value)


def fusedTransform(stages: list[StatelessTransform]) -> FusedTransform:
    """Return the transform running ``stages`` in order, named ``fused(a, b, ...)``."""
    name = f"fused({', '.join(stage.name for stage in stages)})"
    first = stages[0]
    return FusedTransform(
        name,
        tuple(stages),
        localParallelism=first.localParallelism,
        inputRebalancing=first.inputRebalancing,
        definedAt=first.definedAt,
    )


def fuseStatelessChains(graph: PipelineGraph) -> PipelineGraph:
    """Replace every chain of two or more stateless stages with one fused stage (unless the
    pipeline turned fusion off)."""
    if not graph.fusionEnabled:
        return graph
    newIndex: dict[int, int] = {}
    transforms: list[Transform] = []
    upstreams: list[tuple[int, ...]] = []
    for index, transform in enumerate(graph.transforms):
        if index in newIndex:
            continue
        chain = findChain(graph, index) if isinstance(transform, StatelessTransform) else [index]
        members = [graph.transforms[i] for i in chain]
        transforms.append(fusedTransform(members) if len(chain) > 1 else transform)
        upstreams.append(tuple(newIndex[i] for i in graph.upstream[index]))
        for member in chain:
            newIndex[member] = len(transforms) - 1
    return attrs.evolve(graph, transforms=tuple(transforms), upstream=tuple(upstreams))
