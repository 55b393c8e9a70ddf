"""Writing a vertex's items into a shuffle: routed to their targets, packed, pickled, counted.

No pyspark here: the RDD builder hands ``routeItems`` to Spark as the function of an upstream
partition, and the shuffle moves the ``(target, pickled packet)`` pairs it yields."""

import functools
import itertools
from collections.abc import Iterator

from sparkjet.coredag.model.metrics import TaskMetrics
from sparkjet.coredag.model.routing import Route, packets
from sparkjet.coredag.runtime.crossing import Crossing, OutputBatch, pickledPacket
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError
from sparkjet.coredag.runtime.watermarks import WatermarkMarker


def routeItems(
    route: Route, ordinal: int | None, packetSizeLimit: int, counts, index: int, batches: Iterator
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(target, pickled packet)`` for the items of upstream processor ``index``, counting the
    bytes into the accumulator ``counts``; an item that cannot be pickled fails naming the stage that
    emitted it. With an ``ordinal``, items go as ``(ordinal, item)`` pairs. Watermark markers go to
    every target in their places among the items, and each downstream processor reads them in the
    order sent (docs/internals/windows-and-watermarks.md)."""
    metrics = TaskMetrics()
    batches, crossing = _crossingOfRoute(route, ordinal, batches)
    markers = _Markers()
    items = (item for item in itertools.chain.from_iterable(batches) if not _keptMarker(item, markers))
    pairs = _inPlace(route.targets(index, items), markers, route.downstreamCount)
    if ordinal is not None:
        pairs = ((target, (ordinal, item)) for target, item in pairs)
    pickled = functools.partial(pickledPacket, crossing=crossing)
    try:
        for target, packet in packets(pairs, route.downstreamCount, packetSizeLimit, pickled):
            data = pickled(packet)
            metrics.countShuffled(route.sourceName, route.sourceOrdinal, len(packet), len(data))
            yield target, data
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    # the markers' bytes crossed the shuffle, but they are not the edge's items
    metrics.countShuffled(route.sourceName, route.sourceOrdinal, -markers.count * route.downstreamCount, 0)
    counts.add(metrics.total())


def _keptMarker(item: object, markers: "_Markers") -> bool:
    """Keep ``item`` aside if it is a watermark marker; return whether it was."""
    if type(item) is WatermarkMarker:
        markers.append(item)
        return True
    return False


class _Markers(list):
    """The markers read since the last routed item, and how many there were in all."""

    count = 0

    def append(self, marker: WatermarkMarker) -> None:
        self.count += 1
        super().append(marker)


def _inPlace(routed: Iterator[tuple[int, object]], markers: _Markers, downstreamCount: int) -> Iterator:
    """Yield the routed pairs with each marker to every downstream processor (the second rule of
    Jet's Processor API) in its place: a router takes the next item once it has yielded the pairs
    of the one before, so a marker read on the way to an item goes out before that item's pairs."""
    for pair in routed:
        if markers:
            yield from _toEveryTarget(markers, downstreamCount)
        yield pair
    yield from _toEveryTarget(markers, downstreamCount)


def _toEveryTarget(markers: _Markers, downstreamCount: int) -> Iterator[tuple[int, object]]:
    """Yield each of ``markers`` to every downstream processor and forget them."""
    while markers:
        marker = markers.pop(0)
        for target in range(downstreamCount):
            yield target, marker


def homePacket(index: int) -> tuple[int, bytes]:
    """Return partition ``index``'s record of a vertex's home: an empty packet, which the vertex skips."""
    return index, b""


def targetPartition(target: int) -> int:
    """Spark's partition function of a shuffle: the target ``routeItems`` chose."""
    return target


def _crossingOfRoute(route: Route, ordinal: int | None, batches: Iterator) -> tuple[Iterator, Crossing]:
    """Return the batches and where the edge of ``route`` sends their items: the stage that
    emitted them is named as its ``OutputBatch``es name it (with where it was defined)."""
    batches = iter(batches)
    first = next(batches, None)
    producer = first.crossing.producer if isinstance(first, OutputBatch) else route.sourceName
    crossing = Crossing(producer, f"Stage '{route.destName}'", tagged=ordinal is not None)
    return (batches if first is None else itertools.chain([first], batches)), crossing
