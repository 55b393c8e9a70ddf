"""The planner: a pipeline becomes a Core DAG through pure phases run in order."""

import re

import attrs
import toolz

from sparkjet.coredag.model.dag import DAG
from sparkjet.pipeline.naming import makeNamesUnique
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import Transform
from sparkjet.planner.explain import explanation
from sparkjet.planner.fusion import FusedTransform, fuseStatelessChains
from sparkjet.planner.leakage import rejectDanglingStages
from sparkjet.planner.lowering import lowerToDag

PHASES = (makeNamesUnique, rejectDanglingStages, fuseStatelessChains, lowerToDag)

_STEP_VERTEX = re.compile(r"(?P<stage>.+)-(?P<step>prepare|collect|joiner|collector\d+)")
"""The names lowering gives the vertices of a stage's steps: ``count-prepare``, ``sort-collect``,
``join-joiner``, ``join-collector1``."""


@attrs.frozen
class VertexRole:
    """What a vertex runs: pipeline stages (several when fused; none for a vertex added by
    hand), whole or one step of them (``prepare``, ``collect``, ``joiner``, ``collector1``)."""

    stages: tuple[str, ...]
    step: str | None = None


def vertexRoles(fused: PipelineGraph, dag: DAG) -> dict[str, VertexRole]:
    """Map each vertex of ``dag``, lowered from ``fused``, to what it runs: ``fused(a, b)``
    runs the stages a and b, ``count-prepare`` the prepare step of ``count``."""
    members = {transform.name: _memberNames(transform) for transform in fused.transforms}
    return {vertex.name: _role(vertex.name, members) for vertex in dag}


def _memberNames(transform: Transform) -> tuple[str, ...]:
    stages = transform.stages if isinstance(transform, FusedTransform) else (transform,)
    return tuple(stage.name for stage in stages)


def _role(vertexName: str, members: dict[str, tuple[str, ...]]) -> VertexRole:
    if vertexName in members:
        return VertexRole(members[vertexName])
    step = _STEP_VERTEX.fullmatch(vertexName)
    if step and step["stage"] in members:
        return VertexRole(members[step["stage"]], step["step"])
    return VertexRole(())


class PlannedDag(DAG):
    """The Core DAG of a pipeline, which can also say why it looks as it does."""

    def __init__(self, dag: DAG, named: PipelineGraph, fused: PipelineGraph) -> None:
        super().__init__()
        for vertex in dag.vertices():
            self.vertex(vertex)
        for edge in dag.edges():
            self.edge(edge)
        self._named, self._fused = named, fused

    def pipelineGraph(self) -> PipelineGraph:
        """Return the pipeline's stages as planned: uniquely named, before fusion."""
        return self._named

    def vertexRoles(self) -> dict[str, VertexRole]:
        """Return what each vertex runs: which stages, whole or which step of them."""
        return vertexRoles(self._fused, self)

    def stageVertices(self) -> dict[str, tuple[str, ...]]:
        """Return the vertices running each stage, stages in creation order:
        ``{'filter': ('fused(flat-map, filter)',), 'count': ('count-prepare', 'count'), ...}``."""
        roles = self.vertexRoles()
        return {
            transform.name: tuple(name for name, role in roles.items() if transform.name in role.stages)
            for transform in self._named.transforms
        }

    def explain(self) -> str:
        """Return which stages each vertex runs, each edge's kind, and why each boundary exists."""
        return explanation(self._named, self._fused, self, self.vertexRoles())


def plan(pipeline: Pipeline) -> PlannedDag:
    """Return the Core DAG that runs ``pipeline``; pure: no JVM starts."""
    named = toolz.pipe(pipeline.graph(), *PHASES[:2])
    fused = toolz.pipe(named, *PHASES[2:3])
    return PlannedDag(toolz.pipe(fused, *PHASES[3:]), named, fused)
