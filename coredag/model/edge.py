"""Edges of the Core DAG: which processors of the downstream vertex get each item."""

import enum
from collections.abc import Callable

import attrs

from sparkjet.coredag.model.edge_config import EdgeConfig
from sparkjet.coredag.model.partitioner import DefaultPartitioner, Partitioner
from sparkjet.coredag.model.vertex import Vertex


class RoutingPolicy(enum.Enum):
    """How an edge chooses the downstream processors of an item (Jet's routing policies)."""

    UNICAST = "unicast"
    ISOLATED = "isolated"
    PARTITIONED = "partitioned"
    BROADCAST = "broadcast"
    ALL_TO_ONE = "all-to-one"
    FANOUT = "fanout"


@attrs.frozen
class Ordering:
    """The order an ordered edge delivers items in: by ``key(item)``, maybe reversed."""

    key: Callable[[object], object] | None = None
    reverse: bool = False


@attrs.frozen
class Edge:
    """A connection from an outbound ordinal of one vertex to an inbound ordinal of another."""

    sourceName: str
    sourceOrdinal: int = 0
    destName: str | None = None
    destOrdinal: int = 0
    routing: RoutingPolicy = RoutingPolicy.UNICAST
    keyFn: Callable[[object], object] | None = None
    partitioner: Partitioner | None = None
    allToOneKey: object = None
    isDistributed: bool = False
    isBuffered: bool = False
    priorityNumber: int = 0
    ordering: Ordering | None = None
    config: EdgeConfig = attrs.field(factory=EdgeConfig)
    source: Vertex | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)
    """The source vertex itself, which a DAG checks is its own and not another of that name."""
    destination: Vertex | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)
    """The destination vertex itself, checked as ``source`` is."""

    @classmethod
    def between(cls, source: Vertex, destination: Vertex) -> "Edge":
        """Return an edge from ordinal 0 of ``source`` to ordinal 0 of ``destination``."""
        return cls(source.name, 0, destination.name, 0, source=source, destination=destination)

    @classmethod
    def from_(cls, source: Vertex, ordinal: int = 0) -> "Edge":
        """Return a half-built edge leaving ``source`` at ``ordinal``; finish it with ``to()``."""
        return cls(source.name, ordinal, source=source)

    def to(self, destination: Vertex, ordinal: int = 0) -> "Edge":
        """Return this edge arriving at ``destination`` at ``ordinal``."""
        return attrs.evolve(self, destName=destination.name, destOrdinal=ordinal, destination=destination)

    def unicast(self) -> "Edge":
        """Send each item to exactly one downstream processor (the default)."""
        return self._routed(RoutingPolicy.UNICAST)

    def isolated(self) -> "Edge":
        """Set up isolated paths: where the upstream has no more processors than the downstream,
        each downstream processor hears from one upstream processor; where it has no fewer,
        each upstream processor sends to one downstream processor. Local edges only."""
        return self._routed(RoutingPolicy.ISOLATED)

    def fanout(self) -> "Edge":
        """Send each item to one processor on every member: a sparkjet job is one member, so
        this is unicast, as Jet's FANOUT is on a cluster of one."""
        return self._routed(RoutingPolicy.FANOUT)

    def broadcast(self) -> "Edge":
        """Send every item to every downstream processor."""
        return self._routed(RoutingPolicy.BROADCAST)

    def partitioned(
        self, keyFn: Callable[[object], object], partitioner: Partitioner | None = None
    ) -> "Edge":
        """Send all items with the same ``keyFn(item)`` to the same downstream processor."""
        return attrs.evolve(
            self._routed(RoutingPolicy.PARTITIONED),
            keyFn=keyFn,
            partitioner=partitioner or DefaultPartitioner(),
        )

    def allToOne(self, key: object = None) -> "Edge":
        """Send every item to one downstream processor, the same for the whole job."""
        return attrs.evolve(self._routed(RoutingPolicy.ALL_TO_ONE), allToOneKey=key)

    def distributed(self) -> "Edge":
        """Let items reach processors in any Spark task: the edge becomes a shuffle."""
        return attrs.evolve(self, isDistributed=True)

    def local(self) -> "Edge":
        """Keep items inside the Spark task that produced them where parallelism allows."""
        return attrs.evolve(self, isDistributed=False)

    def priority(self, priority: int) -> "Edge":
        """Consume this edge before edges with a higher number (default 0)."""
        return attrs.evolve(self, priorityNumber=priority)

    def ordered(self, key: Callable[[object], object] | None = None, reverse: bool = False) -> "Edge":
        """Deliver the items to each processor sorted by ``key`` (the items' own order)."""
        return attrs.evolve(self, ordering=Ordering(key, reverse))

    def buffered(self) -> "Edge":
        """Allow unbounded buffering, for a lower-priority edge of a fork that rejoins."""
        return attrs.evolve(self, isBuffered=True)

    def setConfig(self, config: EdgeConfig) -> "Edge":
        """Return this edge with the given tuning options."""
        return attrs.evolve(self, config=config)

    def _routed(self, routing: RoutingPolicy) -> "Edge":
        return attrs.evolve(self, routing=routing, keyFn=None, partitioner=None, allToOneKey=None)

    def __repr__(self) -> str:
        return _builder_call(self)


def _builder_call(edge: Edge) -> str:
    """Return the builder call that makes ``edge``, defaults omitted, as Jet's toString does."""
    if edge.sourceOrdinal == 0 and edge.destOrdinal == 0:
        text = f'between("{edge.sourceName}", "{edge.destName}")'
    else:
        source = f'"{edge.sourceName}"' + (f", {edge.sourceOrdinal}" if edge.sourceOrdinal else "")
        dest = f'"{edge.destName}"' + (f", {edge.destOrdinal}" if edge.destOrdinal else "")
        text = f"from({source}).to({dest})"
    text += {
        RoutingPolicy.UNICAST: "",
        RoutingPolicy.ISOLATED: ".isolated()",
        RoutingPolicy.BROADCAST: ".broadcast()",
        RoutingPolicy.FANOUT: ".fanout()",
        RoutingPolicy.ALL_TO_ONE: ".allToOne()",
        RoutingPolicy.PARTITIONED: (
            ".partitioned(?)"
            if isinstance(edge.partitioner, DefaultPartitioner)
            else ".partitioned(?, ?)"
        ),
    }[edge.routing]
    if edge.ordering is not None:
        text += ".ordered(?)"
    if edge.isDistributed:
        text += ".distributed()"
    if edge.priorityNumber:
        text += f".priority({edge.priorityNumber})"
    if edge.isBuffered:
        text += ".buffered()"
    return text
