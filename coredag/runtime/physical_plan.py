"""The physical plan: what will really run for a Core DAG, decided once, before Spark is asked.

A pure step (no Spark): ``physicalPlan(dag, defaultParallelism, inputBytes)`` fixes each
vertex's parallelism and loop and how each edge crosses between Spark tasks, with the reason,
and keeps each vertex's supplier's ``Capabilities``, read once here. The Spark runtime executes
it and decides nothing; ``explain()`` and the picture read it.
"""

import enum
from collections.abc import Mapping

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, capabilitiesOf
from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.metrics import counted
from sparkjet.coredag.model.routing import ROUTERS
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex
from sparkjet.coredag.processors.sinks import CollectToList

SMALL_JOB_BYTES = 4 << 20
"""A job whose sources all read less than this runs its default-parallelism vertices as
one processor each: one Spark task, no shuffle, instead of a fixed cost per task and stage."""


class Loop(enum.Enum):
    """How a vertex's processors run inside their Spark tasks."""

    STANDARD = "standard loop"
    """The fast path: one tight loop over the partition's batches (a standard supplier)."""
    COOPERATIVE = "cooperative loop"
    """Jet's loop: the processor called with an inbox and an outbox until it is done."""


@attrs.frozen
class VertexPlan:
    """How one vertex runs: ``parallelism`` processors (why: ``origin``), in ``loop``, emitting
    into ``buckets`` outbox buckets (one serves all outbound edges where it is 1), doing what its
    supplier's ``capabilities`` say."""

    name: str
    parallelism: int
    origin: str
    loop: Loop
    buckets: int
    capabilities: Capabilities

    def line(self) -> str:
        """Return the vertex as one line: ``name: parallelism 2 (the default), standard loop``."""
        return f"{self.name}: parallelism {self.parallelism} ({self.origin}), {self.loop.value}"


@attrs.frozen
class EdgePlan:
    """How one edge runs: its ``exchange`` and why. ``narrow``: its routing lets processor i of
    U feed processor ``i * D // U``, so its items keep their place even through a shuffle."""

    sourceName: str
    sourceOrdinal: int
    destName: str
    exchange: Exchange
    narrow: bool
    reason: str

    def line(self) -> str:
        """Return the edge as one line: ``a -> b: shuffled (a local partitioned edge: ...)``."""
        return f"{self.sourceName} -> {self.destName}: {self.exchange.description} ({self.reason})"


@attrs.frozen
class PhysicalPlan:
    """What will run for a Core DAG on a session of ``sessionParallelism``: vertices of default
    parallelism run ``defaultParallelism`` processors (1 for a small job of ``inputBytes``)."""

    sessionParallelism: int
    defaultParallelism: int
    inputBytes: int | None
    vertices: tuple[VertexPlan, ...]
    edges: tuple[EdgePlan, ...]

    def vertex(self, name: str) -> VertexPlan:
        """Return the plan of vertex ``name``."""
        for vertex in self.vertices:
            if vertex.name == name:
                return vertex
        names = ", ".join(v.name for v in self.vertices)
        raise KeyError(f"The physical plan has no vertex '{name}'; it has: {names}")

    def edge(self, edge: Edge) -> EdgePlan:
        """Return the plan of ``edge`` (of the DAG this plan was made for)."""
        for planned in self.edges:
            if (planned.sourceName, planned.sourceOrdinal) == (edge.sourceName, edge.sourceOrdinal):
                return planned
        raise KeyError(f"The physical plan has no edge {edge!r}")

    def exchangeOf(self, edge: Edge) -> Exchange:
        """Return how ``edge`` crosses between Spark tasks."""
        return self.edge(edge).exchange

    def exchanges(self) -> dict[tuple[str, int], Exchange]:
        """Return each edge's exchange by its source's name and ordinal, which tell an edge
        apart from the others joining the same two vertices (for the picture)."""
        return {(e.sourceName, e.sourceOrdinal): e.exchange for e in self.edges}

    def shuffledEdges(self) -> set[tuple[str, int]]:
        """Return the source names and ordinals of the edges that cross a shuffle."""
        return {pair for pair, exchange in self.exchanges().items() if exchange is Exchange.SHUFFLED}

    def lines(self) -> list[str]:
        """Return the plan as text lines: a heading, then one line per vertex and per edge."""
        return [self._heading(), "Vertices", *(f"  {v.line()}" for v in self.vertices),
                "Edges", *(f"  {e.line()}" for e in self.edges)]

    def format(self) -> str:
        """Return the plan as text (``lines()`` joined)."""
        return "\n".join(self.lines())

    def _heading(self) -> str:
        if self.defaultParallelism == self.sessionParallelism:
            return f"Physical plan: default parallelism {self.defaultParallelism} (the session's)"
        return (
            f"Physical plan: default parallelism {self.defaultParallelism}, a small job "
            f"(its sources read {counted(self.inputBytes or 0, 'byte')}, under {SMALL_JOB_BYTES >> 20} MiB; "
            f"the session's is {self.sessionParallelism})"
        )


def terminalOutputOf(supplier: object) -> object:
    """Return where a sink's items go (None for any other supplier)."""
    return capabilitiesOf(supplier).output


def measureInputBytes(dag: DAG) -> dict[str, int | None]:
    """Return about how many bytes each source vertex of ``dag`` reads (None: unknown). It may
    list files: run it on the driver, before ``physicalPlan``."""
    return {
        v.name: _inputBytes(v.processorSupplier) for v in dag.vertices()
        if not dag.getInboundEdges(v.name)
    }


def _inputBytes(supplier: object) -> int | None:
    return supplier.inputBytes() if isinstance(supplier, StandardProcessorSupplier) else None


def physicalPlan(
    dag: DAG, defaultParallelism: int, inputBytes: Mapping[str, int | None] | None = None
) -> PhysicalPlan:
    """Return what will run for a validated ``dag`` on a session of ``defaultParallelism``,
    given its sources' ``inputBytes`` (from ``measureInputBytes``; None: unknown, not small)."""
    total = _totalBytes(inputBytes)
    default = 1 if total is not None and total < SMALL_JOB_BYTES else defaultParallelism
    capabilities = {v.name: capabilitiesOf(v.processorSupplier) for v in dag}
    parallelism = {v.name: v.determineLocalParallelism(default) for v in dag}
    beside = _listSinksBesideTheirUpstream(dag, parallelism, capabilities)
    parallelism |= beside
    vertices = tuple(
        _vertexPlan(dag, v, capabilities[v.name], parallelism[v.name], _origin(v, beside, default, defaultParallelism))
        for v in dag
    )
    edges = tuple(_edgePlan(dag, e, parallelism, capabilities) for e in dag.edges())
    return PhysicalPlan(defaultParallelism, default, total, vertices, edges)


def _totalBytes(inputBytes: Mapping[str, int | None] | None) -> int | None:
    if inputBytes is None or None in inputBytes.values():
        return None
    return sum(inputBytes.values())


def _origin(vertex: Vertex, beside: Mapping[str, int], default: int, sessionDefault: int) -> str:
    if vertex.name in beside:
        return "beside its upstream"
    if vertex.localParallelism != LOCAL_PARALLELISM_USE_DEFAULT:
        return "its own"
    return "the default" if default == sessionDefault else "a small job"


def _listSinksBesideTheirUpstream(
    dag: DAG, parallelism: Mapping[str, int], capabilities: Mapping[str, Capabilities]
) -> dict[str, int]:
    """Return the parallelism of each list sink fed by one local unicast or isolated edge: its
    upstream's. Its items go to the driver in partition order either way, so this gives the
    same list, and the upstream's processors keep their own tasks instead of being coalesced
    into the sink's one."""
    beside = {}
    for vertex in dag:
        inbound = dag.getInboundEdges(vertex.name)
        if (
            isinstance(capabilities[vertex.name].output, CollectToList)
            and len(inbound) == 1
            and not inbound[0].isDistributed
            and inbound[0].routing in (RoutingPolicy.UNICAST, RoutingPolicy.ISOLATED)
        ):
            beside[vertex.name] = parallelism[inbound[0].sourceName]
    return beside


def _vertexPlan(dag: DAG, vertex: Vertex, capabilities: Capabilities, parallelism: int, origin: str) -> VertexPlan:
    """A standard supplier offers every item to all its outbound edges, so one output serves
    them all; it runs its fast path unless it has several inputs it cannot tell apart."""
    standard = capabilities.hasFastPath
    buckets = 1 if capabilities.output is not None or standard else len(dag.getOutboundEdges(vertex.name))
    inputs = len(dag.getInboundEdges(vertex.name))
    fast = standard and (inputs <= 1 or capabilities.takesOrdinalPairs) and buckets <= 1
    loop = Loop.STANDARD if fast else Loop.COOPERATIVE
    return VertexPlan(vertex.name, parallelism, origin, loop, buckets, capabilities)


def _edgePlan(dag: DAG, edge: Edge, parallelism: Mapping[str, int], capabilities: Mapping[str, Capabilities]) -> EdgePlan:
    upstream, downstream = parallelism[edge.sourceName], parallelism[edge.destName]
    narrow, reason = _narrowness(edge, upstream, downstream, capabilities[edge.destName])
    inputs = len(dag.getInboundEdges(edge.destName))
    if inputs > 1:
        exchange = Exchange.SHUFFLED
        reason += f"; one of {inputs} inputs of '{edge.destName}', merged by priority"
    elif not narrow:
        exchange = Exchange.SHUFFLED
    else:
        exchange = Exchange.NARROW if upstream == downstream else Exchange.COALESCED
    return EdgePlan(edge.sourceName, edge.sourceOrdinal, edge.destName, exchange, narrow, reason)


def _narrowness(edge: Edge, upstream: int, downstream: int, destination: Capabilities) -> tuple[bool, str]:
    """Return whether ``edge`` can keep items in their Spark task, and why (or why not)."""
    routing = edge.routing.value
    if upstream == downstream == 1:
        return True, "parallelism 1 at both ends"
    if edge.isDistributed:
        return False, f"a distributed {routing} edge: {ROUTERS[edge.routing].promise}"
    if downstream == 1:
        return True, f"a local edge into parallelism 1, from {upstream}"
    if edge.routing in (RoutingPolicy.UNICAST, RoutingPolicy.ISOLATED, RoutingPolicy.FANOUT):
        if downstream == upstream:
            return True, f"a local {routing} edge between equal parallelisms"
        if downstream < upstream:
            return True, f"a local {routing} edge into fewer processors, {upstream} -> {downstream}"
        promise = ROUTERS[edge.routing].promise
        return False, f"a local {routing} edge into more processors, {upstream} -> {downstream}: {promise}"
    if downstream == upstream and destination.acceptsAnyRouting:
        return True, "a local edge into a prepare vertex, which accepts any routing"
    return False, f"a local {routing} edge: {ROUTERS[edge.routing].promise}"
