"""Routing: how an edge spreads an upstream processor's items over the downstream processors,
and how the routed items are grouped into packets. Pure: no Spark, tested without a JVM."""

import itertools
import random
from collections.abc import Callable, Iterator

import attrs

from sparkjet.coredag.errors import DagError, UserFunctionError, shorten
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.partitioner import DefaultPartitioner
from sparkjet.coredag.model.vertex import Vertex

FIRST_PACKET_ITEMS = 64
"""How many items the first packet of a target holds; its pickled size sets the later ones'."""


@attrs.frozen
class Route:
    """How one edge spreads an upstream processor's items over the downstream partitions.

    ``narrow``: the routing lets each upstream processor feed one downstream processor (its
    items keep their place), ``narrowTarget`` says which."""

    routing: RoutingPolicy
    keyFn: object
    partitioner: object
    upstreamCount: int
    downstreamCount: int
    fixedTarget: int
    narrow: bool
    sourceName: str
    sourceOrdinal: int
    destName: str
    keyOwner: str
    """Whom an error of the key function or of partitioning names: the destination's stage
    (a ``StageName``, with where it was defined), or the edge of a Core DAG built by hand."""

    @property
    def edgeName(self) -> str:
        """Return the edge's name in messages: ``source -> destination``."""
        return f"{self.sourceName} -> {self.destName}"

    @classmethod
    def of(
        cls, edge: Edge, upstreamCount: int, downstreamCount: int, narrow: bool, destination: Vertex
    ) -> "Route":
        """Return the route of ``edge`` into ``destination``; an all-to-one target is drawn
        here, once per job."""
        if edge.allToOneKey is None:
            fixedTarget = random.randrange(downstreamCount)
        else:
            fixedTarget = DefaultPartitioner().getPartition(edge.allToOneKey, downstreamCount)
        return cls(
            edge.routing, edge.keyFn, edge.partitioner, upstreamCount, downstreamCount,
            fixedTarget, narrow, edge.sourceName, edge.sourceOrdinal, edge.destName,
            destination.stageName if destination.definedAt else f"key of edge {edge.sourceName} -> {edge.destName}",
        )

    def targets(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        """Yield ``(target partition, item)`` for the items of upstream processor ``index``."""
        if self.narrow:
            target = self.narrowTarget(index)
            return ((target, item) for item in items)
        return ROUTERS[self.routing].targets(self, index, items)

    def narrowTarget(self, index: int) -> int:
        """Return the one processor that upstream processor ``index`` feeds on a narrow path, as
        Spark's coalesce groups neighbours (``i * D // U``), an isolated edge by Jet's rule
        (``i mod D``)."""
        if self.routing is RoutingPolicy.ISOLATED:
            return index % self.downstreamCount
        return index * self.downstreamCount // self.upstreamCount

    def _partitioned(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        keyFn, getPartition, count = self.keyFn, self.partitioner.getPartition, self.downstreamCount
        for item in items:
            try:
                key = keyFn(item)
                partition = getPartition(key, count)
            except Exception as cause:
                raise UserFunctionError(self.keyOwner, shorten(item), cause) from cause
            if not 0 <= partition < count:
                raise DagError(
                    f"Edge {self.edgeName}: {type(self.partitioner).__name__}.getPartition("
                    f"{shorten(key)}, {count}) returned {partition!r}, expected 0 to {count - 1}"
                )
            yield partition, item

    def _broadcast(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        return ((target, item) for item in items for target in range(self.downstreamCount))

    def _allToOne(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        return ((self.fixedTarget, item) for item in items)

    def _isolated(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        """Processor i feeds, round-robin, the downstream processors j with ``j mod U = i mod D``
        (Jet's rule): those congruent to i where U <= D, processor ``i mod D`` alone where U >= D."""
        upstream, downstream = self.upstreamCount, self.downstreamCount
        targets = [j for j in range(downstream) if j % upstream == index % downstream]
        return zip(itertools.cycle(targets), items)

    def _unicast(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        """Round-robin over all downstream processors, each upstream starting at its own."""
        count = self.downstreamCount
        start = index % count
        return zip(itertools.cycle([*range(start, count), *range(start)]), items)


@attrs.frozen
class Router:
    """One routing policy: the targets of an upstream processor's items (where the edge is not
    narrow) and the promise it keeps, in words."""

    targets: Callable[[Route, int, Iterator], Iterator[tuple[int, object]]]
    promise: str


ROUTERS = {
    RoutingPolicy.UNICAST: Router(Route._unicast, "round-robin over the downstream processors"),
    RoutingPolicy.PARTITIONED: Router(Route._partitioned, "each key to one processor of the job"),
    RoutingPolicy.BROADCAST: Router(Route._broadcast, "every processor gets every item"),
    RoutingPolicy.ALL_TO_ONE: Router(Route._allToOne, "every item to one processor"),
    RoutingPolicy.ISOLATED: Router(Route._isolated, "each processor feeds, or is fed by, processors of its own"),
    RoutingPolicy.FANOUT: Router(Route._unicast, "one processor on every member: a job is one member, so unicast"),
}
"""Each routing policy's router: a new policy is a member of RoutingPolicy and a router here."""


def packets(
    pairs: Iterator, targetCount: int, packetSizeLimit: int, dumps: Callable[[list], bytes]
) -> Iterator[tuple[int, list]]:
    """Group ``(target, item)`` pairs into ``(target, [items])`` of about ``packetSizeLimit``
    pickled bytes; the items per packet are set from the size of the first packet ``dumps``
    pickles (which names what it cannot pickle)."""
    buckets: list[list] = [[] for _ in range(targetCount)]
    perPacket, measured = FIRST_PACKET_ITEMS, False
    for target, item in pairs:
        bucket = buckets[target]
        bucket.append(item)
        if len(bucket) < perPacket:
            continue
        if not measured:
            measured = True
            perPacket = max(1, perPacket * packetSizeLimit // max(1, len(dumps(bucket))))
            if len(bucket) < perPacket:
                continue
        yield target, bucket
        buckets[target] = []
    for target, bucket in enumerate(buckets):
        if bucket:
            yield target, bucket
