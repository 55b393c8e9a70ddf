"""Unique stage names, as Jet makes them: ``loggerSink``, ``loggerSink-2``, ``loggerSink-3``."""

import re

import attrs

from sparkjet.pipeline.pipeline_graph import PipelineGraph

_TRAILING_INDEX = re.compile(r"(.*)-([0-9]+)")


def addOrIncrementIndexInName(name: str) -> str:
    """Turn ``name-N`` into ``name-(N+1)`` when N >= 2, else append ``-2``."""
    match = _TRAILING_INDEX.fullmatch(name)
    if match and int(match.group(2)) + 1 > 2:
        return f"{match.group(1)}-{int(match.group(2)) + 1}"
    return f"{name}-2"


def makeNamesUnique(graph: PipelineGraph) -> PipelineGraph:
    """``map, map, map`` becomes ``map, map-2, map-3``, in the order stages were created."""
    used: set[str] = set()
    lastTaken: dict[str, str] = {}
    renamed = []
    for transform in graph.transforms:
        name = lastTaken.get(transform.name, transform.name)
        while name in used:
            name = addOrIncrementIndexInName(name)
        used.add(name)
        lastTaken[transform.name] = name
        renamed.append(attrs.evolve(transform, name=name))
    return attrs.evolve(graph, transforms=tuple(renamed))
