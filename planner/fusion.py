"""Fusion of stateless stages: ``... -> map -> filter -> ...`` becomes ``... -> fused(map, filter) -> ...``."""

import attrs

from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import FilterTransform, FlatMapTransform, MapTransform, Transform

STATELESS = (MapTransform, FilterTransform, FlatMapTransform)


@attrs.frozen
class FusedTransform(Transform):
    """Several stateless stages run as one: their functions applied in order."""

    stages: tuple[Transform, ...]


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
    """Jet's rule: the next stage is stateless too, has the same local parallelism, and
    its input is not rebalanced."""
    first, second = graph.transforms[upstream], graph.transforms[downstream]
    return (
        isinstance(second, STATELESS)
        and second.localParallelism == first.localParallelism
        and second.rebalancing(0) is None
    )


def fusedTransform(stages: list[Transform]) -> FusedTransform:
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
        chain = findChain(graph, index) if isinstance(transform, STATELESS) else [index]
        members = [graph.transforms[i] for i in chain]
        transforms.append(fusedTransform(members) if len(chain) > 1 else transform)
        upstreams.append(tuple(newIndex[i] for i in graph.upstream[index]))
        for member in chain:
            newIndex[member] = len(transforms) - 1
    return PipelineGraph(tuple(transforms), tuple(upstreams), graph.fusionEnabled)
