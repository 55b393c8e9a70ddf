"""The planner: a pipeline becomes a Core DAG through pure phases run in order."""

import toolz

from coredag.dag import DAG
from pipeline.naming import makeNamesUnique
from pipeline.pipeline import Pipeline
from pipeline.pipeline_graph import PipelineGraph
from planner.explain import explanation
from planner.fusion import fuseStatelessChains
from planner.leakage import rejectDanglingStages
from planner.lowering import lowerToDag

PHASES = (makeNamesUnique, rejectDanglingStages, fuseStatelessChains, lowerToDag)


class PlannedDag(DAG):
    """The Core DAG of a pipeline, which can also say why it looks as it does."""

    def __init__(self, dag: DAG, named: PipelineGraph, fused: PipelineGraph) -> None:
        super().__init__()
        for vertex in dag.vertices():
            self.vertex(vertex)
        for edge in dag.edges():
            self.edge(edge)
        self._named, self._fused = named, fused

    def explain(self) -> str:
        """Return which stages each vertex runs, each edge's kind, and why each boundary exists."""
        return explanation(self._named, self._fused, self)


def plan(pipeline: Pipeline) -> PlannedDag:
    """Return the Core DAG that runs ``pipeline``; pure: no JVM starts."""
    named = toolz.pipe(pipeline.graph(), *PHASES[:2])
    fused = toolz.pipe(named, *PHASES[2:3])
    return PlannedDag(toolz.pipe(fused, *PHASES[3:]), named, fused)
