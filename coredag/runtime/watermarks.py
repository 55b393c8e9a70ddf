"""Watermarks between a job's processors, in the runtime's terms: carried in-band among the items
as markers naming their sender, and coalesced per input queue as a processor consumes its input,
by the rules of Jet's Processor API (docs/internals/windows-and-watermarks.md). No pyspark here."""

import operator
from collections.abc import Iterable, Iterator, Sequence

import attrs

from sparkjet.coredag.errors import ProcessorContractError
from sparkjet.coredag.model.watermark import LONG_MIN, Watermark
from sparkjet.coredag.model.watermark_coalescer import CoalescerState, WatermarkCoalescer

WAKE, DONE = LONG_MIN, None
"""A marker's ``timestamp`` where its queue sent an event after the idle message, or completed."""


@attrs.frozen
class WatermarkMarker:
    """What upstream processor ``sourceIndex`` sent to an edge, in its place among its items: a
    watermark's ``timestamp`` (``LONG_MAX``: the idle message), ``WAKE`` (an event after the idle
    message: its queue is active again) or ``DONE`` (it completed)."""

    sourceIndex: int
    timestamp: int | None


@attrs.frozen
class EdgeQueues:
    """The upstream processors of inbound edge ``ordinal`` that send watermarks to each processor:
    all ``upstreamCount`` of them, or, where the edge keeps items in their Spark task, those of
    ``groups[index]`` alone."""

    ordinal: int
    upstreamCount: int
    groups: tuple[tuple[int, ...], ...] | None = None

    def senders(self, index: int) -> Sequence[int]:
        """Return the upstream processors whose watermarks processor ``index`` receives."""
        return range(self.upstreamCount) if self.groups is None else self.groups[index]


def queuesOf(edges: Iterable[EdgeQueues], index: int) -> list[tuple[int, int]]:
    """Return the input queues of processor ``index``: ``(ordinal, upstream index)`` pairs."""
    return [(edge.ordinal, sender) for edge in edges for sender in edge.senders(index)]


class OutputWatermarks:
    """Turns each watermark of processor ``index``'s output into a marker in its place, keeping
    the last one sent to each outbound bucket (from ``emitted`` on, in a stream's later
    micro-batches: one not above that, which a processor restored from its snapshot may send
    again, is left out); after the idle message, the next item to a bucket wakes it. A vertex
    without outbound edges (``sends`` False) sends no markers: its output loses its watermarks."""

    def __init__(self, index: int, emitted: Sequence[int], sends: bool = True) -> None:
        self._index, self._sends, self._floor, self._last = index, sends, tuple(emitted), list(emitted)
        self._several = len(self._last) > 1
        self._idle = [False] * len(self._last)
        self.markerCount = 0
        """How many markers the output holds: they are not its items."""

    def emitted(self) -> tuple[int, ...]:
        """Return the last watermark sent to each bucket so far."""
        return tuple(self._last)

    def items(self, batches: Iterable[list]) -> Iterator[list]:
        """Yield the output batches with their watermarks made markers (a batch without one,
        to no idle bucket, as it is)."""
        for batch in batches:
            if not any(self._idle) and not _holds(batch, Watermark, self._several):
                yield batch
                continue
            marked = []
            for item in batch:
                ordinal, value = item if self._several else (0, item)
                if isinstance(value, Watermark):
                    marker = self._marker(ordinal, value)
                    if marker is not None and self._sends:
                        self._append(marked, ordinal, marker)
                    continue
                if self._idle[ordinal] and self._sends:
                    self._idle[ordinal] = False
                    self._append(marked, ordinal, WatermarkMarker(self._index, WAKE))
                marked.append(item)
            if marked:
                yield marked

    def _append(self, marked: list, ordinal: int, marker: WatermarkMarker) -> None:
        self.markerCount += 1
        marked.append((ordinal, marker) if self._several else marker)

    def _marker(self, ordinal: int, watermark: Watermark) -> WatermarkMarker | None:
        self._idle[ordinal] = watermark.isIdle()
        if not watermark.isIdle():
            if watermark.timestamp <= self._floor[ordinal]:
                return None
            self._last[ordinal] = watermark.timestamp
        return WatermarkMarker(self._index, watermark.timestamp)

    def done(self) -> Iterator[list]:
        """Yield the batch of done markers, one per bucket, that follows a completed processor's output."""
        marker = WatermarkMarker(self._index, DONE)
        yield [(ordinal, marker) for ordinal in range(len(self._last))] if self._several else [marker]


def toEveryBucket(watermark: Watermark, bucketCount: int) -> list:
    """Return ``watermark`` as a processor's output to every outbound bucket."""
    return [watermark] if bucketCount == 1 else [(ordinal, watermark) for ordinal in range(bucketCount)]


class InboundWatermarks:
    """Takes the markers out of a processor's input and coalesces them per queue (``queues``:
    ``(ordinal, upstream index)`` pairs; ``tagged``: the items are ``(ordinal, item)`` pairs,
    else all of edge ``ordinal``), starting from ``state`` (else having observed ``observed``).
    The input then yields each watermark the processor is to observe in its place, between its
    item batches; the idle message where every queue is idle."""

    def __init__(
        self, queues: Sequence[tuple[int, int]], tagged: bool, ordinal: int,
        state: CoalescerState | None = None, observed: int = LONG_MIN,
    ) -> None:
        self._queueOf = {queue: number for number, queue in enumerate(queues)}
        self._tagged, self._ordinal = tagged, ordinal
        self._coalescer = WatermarkCoalescer(len(queues), state, observed)
        self.markerCount = 0
        """How many markers the input held: they are not its items."""

    def state(self) -> CoalescerState:
        """Return the coalescer's state, for the next micro-batch."""
        return self._coalescer.state()

    @property
    def observed(self) -> int:
        """Return the last watermark the processor observed (``LONG_MIN``: none yet)."""
        return self._coalescer.coalescedWm()

    def items(self, batches: Iterable[list]) -> Iterator[list | Watermark]:
        """Yield the input's item batches, and in their places the watermarks to observe."""
        tagged = self._tagged
        for batch in batches:
            if not _holds(batch, WatermarkMarker, tagged):
                yield batch
                continue
            start = 0
            for position, item in enumerate(batch):
                if type(item[1] if tagged else item) is not WatermarkMarker:
                    continue
                if position > start:
                    yield batch[start:position]
                start = position + 1
                yield from self._observed(*(item if tagged else (self._ordinal, item)))
            if start == 0:
                yield batch
            elif start < len(batch):
                yield batch[start:]

    def _observed(self, ordinal: int, marker: WatermarkMarker) -> Iterator[Watermark]:
        """Yield what the processor observes now that ``marker`` arrived on edge ``ordinal``."""
        self.markerCount += 1
        queue = self._queueOf.get((ordinal, marker.sourceIndex))
        if queue is None:
            raise ProcessorContractError(
                f"A watermark from processor {marker.sourceIndex} of inbound edge {ordinal} reached a processor "
                f"that does not count it among its {len(self._queueOf)} input queues"
            )
        coalescer = self._coalescer
        if coalescer.isDone(queue):
            return  # the output of a vertex no stream reaches, read again in a later micro-batch
        if marker.timestamp == WAKE:
            coalescer.observeEvent(queue)
            return
        if marker.timestamp is DONE:
            forwarded = coalescer.queueDone(queue)
        else:
            forwarded = coalescer.observeWm(queue, Watermark(marker.timestamp))
        for watermark in (forwarded, coalescer.checkWmHistory()):
            if watermark is not None:
                yield watermark


def _holds(batch: list, kind: type, tagged: bool) -> bool:
    """Return whether ``batch`` (of ``(ordinal, item)`` pairs where ``tagged``) holds a ``kind``:
    its items' types are gathered at C speed, the common batch holding none."""
    types = set(map(type, map(operator.itemgetter(1), batch) if tagged else batch))
    return any(issubclass(itemType, kind) for itemType in types)
