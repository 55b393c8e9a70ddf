"""The planner: a pipeline becomes a frozen ``Plan`` through pure phases run in order.

``plan(pipeline)`` runs, each result kept by name: ``makeNamesUnique`` and
``rejectDanglingStages`` (the named graph), ``fuseStatelessChains`` (the fused graph, with
``fusionReasons`` saying why links stayed apart), ``lowerToDag`` (the Core DAG, each vertex's
role and why each aggregation has one vertex or two). To add a stage kind, see
planner/lowering.py. A job's plan also holds its physical plan (``physical``: each vertex's real
parallelism and loop, each edge kept in the task, coalesced or shuffled), fixed when the job
starts on a session; before that, ``physicalPlan()`` assumes the parallelism ``local[*]`` gives.
"""

import functools
import os
import types
from collections.abc import Callable, Iterator, Mapping
from typing import ClassVar

import attrs

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.vertex import Vertex
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan, measureInputBytes, physicalPlan
from sparkjet.pipeline.naming import makeNamesUnique
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.planner.explain import explanation
from sparkjet.planner.fusion import fuseStatelessChains, fusionReasons
from sparkjet.planner.leakage import rejectDanglingStages
from sparkjet.planner.lowering import NO_STAGE, VertexRole, lowerToDag

_EMPTY_GRAPH = PipelineGraph((), ())


@attrs.frozen(eq=False, repr=False)
class Plan:
    """A planned job, as a value: the pipeline graph uniquely named (``named``) and fused
    (``fused``), the Core DAG lowered from it (``dag``), each vertex's role as lowering recorded
    it (``roles``, by vertex name), the reason for every boundary (``reasons``) and, once a job
    runs it, the physical plan it runs (``physical``). A DAG built by hand is a plan of empty
    graphs whose vertices run no stage (``Plan.ofDag``).

    The DAG's read-only methods are the plan's too: ``vertices()``, ``edges()``, ``getVertex``,
    iteration in topological order, ``validate()``, ``toDotString()``."""

    named: PipelineGraph
    fused: PipelineGraph
    dag: DAG
    roles: Mapping[str, VertexRole]
    """Read-only: ``plan`` and ``ofDag`` give it as a mapping proxy."""
    reasons: tuple[str, ...] = ()
    physical: PhysicalPlan | None = None

    notebookDisplay: ClassVar[Callable[["Plan"], dict[str, str]] | None] = None
    """How a notebook shows a plan: planner/notebook.py sets it to a function drawing the plan,
    which this module cannot import (it draws with planner/render.py, which imports this one)."""

    @classmethod
    def ofDag(cls, dag: DAG) -> "Plan":
        """Return the plan of a Core DAG built by hand: no stages, no reasons."""
        return cls(_EMPTY_GRAPH, _EMPTY_GRAPH, dag, types.MappingProxyType({}))

    def hasStages(self) -> bool:
        """Return whether the plan came from a pipeline (a DAG built by hand has no stages)."""
        return bool(self.named.transforms)

    def __repr__(self) -> str:
        stages = f"{len(self.named.transforms)} stages, " if self.hasStages() else ""
        return f"<Plan: {stages}{len(self.dag.vertices())} vertices, {len(self.dag.edges())} edges>"

    def pipelineGraph(self) -> PipelineGraph:
        """Return the pipeline's stages as planned: uniquely named, before fusion."""
        return self.named

    def roleOf(self, vertexName: str) -> VertexRole:
        """Return what vertex ``vertexName`` runs (no stage, if lowering did not make it)."""
        return self.roles.get(vertexName, NO_STAGE)

    def vertexRoles(self) -> dict[str, VertexRole]:
        """Return what each vertex of the DAG runs: which stages, whole or which step of them."""
        return {vertex.name: self.roleOf(vertex.name) for vertex in self.dag.vertices()}

    def stageVertices(self) -> dict[str, tuple[str, ...]]:
        """Return the vertices running each stage, stages in creation order:
        ``{'filter': ('fused(flat-map, filter)',), 'count': ('count-prepare', 'count'), ...}``."""
        roles = self.vertexRoles()
        return {
            transform.name: tuple(name for name, role in roles.items() if transform.name in role.stages)
            for transform in self.named.transforms
        }

    def physicalPlan(self, defaultParallelism: int | None = None) -> PhysicalPlan:
        """Return the physical plan the job runs (``physical``); before a job fixed it on its
        session, the one a session of ``defaultParallelism`` would run (by default what
        ``local[*]`` gives on this machine: a parallelism of its CPU count)."""
        if self.physical is not None:
            return self.physical
        assumed = defaultParallelism or os.cpu_count() or 1
        return physicalPlan(self.dag, assumed, measureInputBytes(self.dag))

    def explain(self, defaultParallelism: int | None = None) -> str:
        """Return which stages each vertex runs, each edge's kind, why each boundary exists,
        and the physical plan (see physicalPlan): how each vertex and edge runs on Spark."""
        logical = explanation(self.dag, self.vertexRoles(), self.reasons)
        physical = self.physicalPlan(defaultParallelism)
        lines = physical.lines()
        if self.physical is None:
            lines.insert(1, (
                "  (assumed, as no job runs this plan yet: a session of default parallelism "
                f"{physical.sessionParallelism}, input files not listed)"
            ))
        return logical + "\n\n" + "\n".join(lines)

    def vertices(self) -> tuple[Vertex, ...]:
        """Return the DAG's vertices in the order they were added."""
        return self.dag.vertices()

    def edges(self) -> tuple[Edge, ...]:
        """Return the DAG's edges in the order they were added."""
        return self.dag.edges()

    def getVertex(self, name: str) -> Vertex:
        """Return the DAG's vertex called ``name``."""
        return self.dag.getVertex(name)

    def getInboundEdges(self, name: str) -> list[Edge]:
        """Return the DAG's edges arriving at vertex ``name``, by destination ordinal."""
        return self.dag.getInboundEdges(name)

    def getOutboundEdges(self, name: str) -> list[Edge]:
        """Return the DAG's edges leaving vertex ``name``, by source ordinal."""
        return self.dag.getOutboundEdges(name)

    def __iter__(self) -> Iterator[Vertex]:
        """Iterate the DAG's vertices in topological order."""
        return iter(self.dag)

    def validate(self) -> "Plan":
        """Check the DAG as a whole (see DAG.validate); return this plan."""
        self.dag.validate()
        return self

    def toDotString(self, *args, **kwargs) -> str:
        """Return the DAG in Jet's DOT format (see DAG.toDotString)."""
        return self.dag.toDotString(*args, **kwargs)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str] | None:
        """Return the notebook's display of the plan (see ``notebookDisplay``); None, for the
        plain repr, when none is set."""
        display = Plan.notebookDisplay
        return None if display is None else display(self)


def plan(pipeline: Pipeline) -> Plan:
    """Return the plan that runs ``pipeline``; pure: no JVM starts."""
    named = rejectDanglingStages(makeNamesUnique(pipeline.graph()))
    fused = fuseStatelessChains(named)
    lowered = lowerToDag(fused)
    roles = types.MappingProxyType(dict(lowered.roles))
    return Plan(named, fused, lowered.dag, roles, fusionReasons(named) + lowered.reasons)


@functools.singledispatch
def planOf(work: object) -> Plan:
    """Return the plan of ``work``: a Plan as it is, a Pipeline planned, a Core DAG wrapped.
    Entry points taking any of them call this once and pass the plan on."""
    msg = f"Expected a Pipeline, a Core DAG or a Plan, got {type(work).__name__}: {work!r:.80}"
    raise TypeError(msg)


planOf.register(Plan, lambda work: work)
planOf.register(Pipeline, plan)
planOf.register(DAG, Plan.ofDag)

