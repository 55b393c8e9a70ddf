"""What every stage kind's lowering shares: ``lowerStage``, the singledispatch function each kind
registers with, and the ``DagBuilder`` it adds the kind's vertices and edges to, which makes the
``LoweredDag`` (the DAG, each vertex's role, the reasons). How to add a stage kind:
docs/internals/core-dag-on-spark.md, "Adding a kind of stage"."""

import functools
from collections.abc import Callable, Mapping

import attrs

from sparkjet.coredag.errors import DagError, StageName
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex
from sparkjet.coredag.processors.peeking import ItemLogger, peeking
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import Peek, Transform
from sparkjet.planner.errors import PlanningError


EdgeCustomizer = Callable[[Edge], Edge]


@attrs.frozen
class VertexRole:
    """What a vertex runs: pipeline stages (several when fused; none for a vertex added by
    hand), whole or one step of them (``prepare``, ``collect``, ``joiner``, ``collector1``)."""

    stages: tuple[str, ...]
    step: str | None = None


NO_STAGE = VertexRole(())
"""The role of a vertex that lowering did not make: it runs no stage of the pipeline."""


@attrs.frozen
class LoweredDag:
    """What lowering made: the DAG, each vertex's role by vertex name, and the reason for each
    choice it made between one vertex and two, in the order of the stages."""

    dag: DAG
    roles: Mapping[str, VertexRole]
    reasons: tuple[str, ...]


class DagBuilder:
    """The vertices and edges lowered so far, the stage being lowered (``current``) and the
    stage that made each vertex and its role, the vertex each stage emits from, the next free
    outbound ordinal of each vertex, and the reasons given so far."""

    def __init__(self, graph: PipelineGraph) -> None:
        self.graph = graph
        self.current: Transform | None = None
        self._vertices: dict[str, Vertex] = {}
        self._madeBy: dict[str, Transform] = {}
        self._roles: dict[str, VertexRole] = {}
        self._reasons: list[str] = []
        self._edges: list[Edge] = []
        self._exits: dict[int, Vertex] = {}
        self._nextOrdinal: dict[str, int] = {}

    def addVertex(
        self, name: str, supplier, localParallelism: int, step: str | None = None,
        stages: tuple[str, ...] | None = None,
    ) -> Vertex:
        """Add a vertex running ``step`` of the stage being lowered (the whole stage if None),
        or of ``stages`` (a fused chain's) if given, and return it."""
        vertex = Vertex(name, supplier, localParallelism, definedAt=self.current.definedAt)
        if name in self._vertices:
            raise DagError(
                f"Vertex {name} is already defined. {self.current.describe()} and "
                f"{self._madeBy[name].describe()} both need a vertex named '{name}'; "
                "rename one of them with setName()"
            )
        self._vertices[name] = vertex
        self._madeBy[name] = self.current
        self._roles[name] = VertexRole(stages or (self.current.name,), step)
        return vertex

    def addReason(self, reason: str) -> None:
        """Record why the stage being lowered got the vertices it got."""
        self._reasons.append(f"`{self.current.name}`: {reason}")

    def setExit(self, index: int, vertex: Vertex, logsItsPeek: bool = False) -> None:
        """Record ``vertex`` as the one stage ``index`` emits from; a peeked stage's vertex
        logs what it emits (unless its steps already do: ``logsItsPeek``)."""
        transform = self.graph.transforms[index]
        if transform.peek is not None and not logsItsPeek:
            logger = itemLogger(transform.name, transform.peek)
            vertex = attrs.evolve(vertex, processorSupplier=peeking(vertex.processorSupplier, logger))
            self._vertices[vertex.name] = vertex
        self._exits[index] = vertex

    def emittingStage(self, index: int) -> str:
        """Return the name of the stage whose items stage ``index`` emits: the last of a fused chain."""
        return self._roles[self._exits[index].name].stages[-1]

    def build(self) -> LoweredDag:
        """Return the DAG of everything added, checked edge by edge, with roles and reasons;
        each edge joins the final vertices of its names (``setExit`` replaces a peeked one)."""
        dag = DAG()
        for vertex in self._vertices.values():
            dag.vertex(vertex)
        for edge in self._edges:
            source, destination = self._vertices[edge.sourceName], self._vertices[edge.destName]
            dag.edge(attrs.evolve(edge, source=source, destination=destination))
        return LoweredDag(dag, dict(self._roles), tuple(self._reasons))

    def addEdges(self, index: int, vertex: Vertex, customize: EdgeCustomizer = lambda e: e) -> None:
        """Connect the stages feeding stage ``index`` to ``vertex``, at ordinals 0, 1, ...;
        a rebalanced input becomes distributed (and partitioned by its key, if it has one)."""
        transform = self.graph.transforms[index]
        for destOrdinal, upstream in enumerate(self.graph.upstream[index]):
            edge = rebalanced(self.edgeFrom(upstream).to(vertex, destOrdinal), transform)
            self.addEdge(customize(edge))

    def upstreamParallelism(self, index: int) -> int:
        """Return the parallelism of the vertex stage ``index``'s first input comes from, as planned."""
        return self._exits[self.graph.upstream[index][0]].localParallelism

    def orderKept(self, index: int, localParallelism: int) -> tuple[int, EdgeCustomizer]:
        """Return the parallelism and the input edges of unkeyed stateless stage ``index``: where
        the pipeline preserves order, as Jet's planner gives them, its upstream's parallelism
        (the lower of both where it has its own) behind isolated edges (a rebalanced input stays
        distributed), so each upstream processor's items reach one processor in their order."""
        if not self.graph.preserveOrder:
            return localParallelism, lambda e: e
        upstreams = [self._exits[up].localParallelism for up in self.graph.upstream[index]]
        upstream = min((p for p in upstreams if p > 0), default=LOCAL_PARALLELISM_USE_DEFAULT)
        if upstream != LOCAL_PARALLELISM_USE_DEFAULT:
            localParallelism = upstream if localParallelism <= 0 else min(upstream, localParallelism)
        self.addReason("the pipeline preserves order: its upstream's parallelism, behind isolated edges")
        return localParallelism, lambda e: e if e.isDistributed else e.isolated()

    def edgeFrom(self, upstream: int) -> Edge:
        """Return a half-built edge from the next free ordinal of stage ``upstream``'s vertex."""
        source = self._exits[upstream]
        return Edge.from_(source, self._nextOrdinal.get(source.name, 0))

    def addEdge(self, edge: Edge) -> None:
        """Add an edge, counting its source ordinal as used."""
        self._nextOrdinal[edge.sourceName] = max(self._nextOrdinal.get(edge.sourceName, 0), edge.sourceOrdinal + 1)
        self._edges.append(edge)


def itemLogger(stageName: str, peek: Peek) -> ItemLogger:
    """Return the per-item logger of a peeked stage."""
    return ItemLogger(stageName, peek.shouldLogFn, peek.toStringFn)


def rebalanced(edge: Edge, transform: Transform) -> Edge:
    """Apply ``rebalance()`` of the destination's input: distributed, maybe partitioned."""
    rebalancing = transform.rebalancing(edge.destOrdinal)
    if rebalancing is None:
        return edge
    edge = edge.distributed()
    return edge.partitioned(rebalancing.keyFn) if rebalancing.keyFn else edge


@functools.singledispatch
def lowerStage(transform: Transform, builder: DagBuilder, index: int) -> None:
    """Add the vertices and edges of stage ``index``; one registered function per kind (a
    subclass of a kind is lowered as that kind)."""
    kind = type(transform)
    raise PlanningError(
        f"Unknown transform: kind '{kind.__module__}.{kind.__qualname__}' of "
        f"{transform.describe()} has no lowering; register one with "
        "@sparkjet.planner.lowering.lowerStage.register"
    )


def stageName(transform: Transform) -> StageName:
    """Return the name a stage's processors report in errors, knowing where it was defined."""
    return StageName(transform.name, transform.definedAt)
