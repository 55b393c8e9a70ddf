"""Watermarks between a job's processors, by seed 003's rules, in the runtime's terms.

A processor's watermarks do not travel as items: the runtime keeps the last one each processor
emits to each outbound edge, and after its last item sends a ``WatermarkMarker`` to every
processor downstream, whatever the edge's routing (rule 2). A processor observes, once its input
is consumed and before ``complete()``, the watermark every upstream processor has reached: the
markers of all its input queues coalesced (rule 3, ``WatermarkCoalescer``), idle queues left out.
Delaying a watermark to the end of a run is what Jet allows any edge to do; no event is made late
by it. No pyspark here."""

import operator
from collections.abc import Iterable, Iterator

import attrs

from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MIN, Watermark
from sparkjet.coredag.model.watermark_coalescer import WatermarkCoalescer


@attrs.frozen
class WatermarkMarker:
    """The last watermark upstream processor ``sourceIndex`` emitted to an edge (``LONG_MIN``:
    none yet) and whether it then went ``idle``, sent after its items to every downstream
    processor: a queue that reached a watermark, then turned idle, is both, in that order."""

    sourceIndex: int
    timestamp: int
    idle: bool = False


class OutputWatermarks:
    """Takes the watermarks out of a processor's output, keeping the last one of each outbound
    bucket (from ``emitted`` on, in a stream's later micro-batches) and whether the idle message
    followed it, and makes the markers that follow its last item."""

    def __init__(self, emitted: list[int]) -> None:
        self._last = list(emitted)
        self._idle = [False] * len(self._last)

    def emitted(self) -> tuple[int, ...]:
        """Return the last watermark emitted to each bucket so far."""
        return tuple(self._last)

    def items(self, batches: Iterable[list]) -> Iterator[list]:
        """Yield the output batches without their watermarks."""
        for batch in batches:
            kept = [item for item in batch if not self._isWatermark(item)]
            if kept:
                yield kept

    def markers(self, index: int) -> Iterator[list]:
        """Yield the batch of processor ``index``'s markers, one per bucket (``(ordinal, marker)``
        pairs where there are several), once its output is consumed."""
        markers = [WatermarkMarker(index, timestamp, idle) for timestamp, idle in zip(self._last, self._idle)]
        yield markers if len(markers) == 1 else list(enumerate(markers))

    def _isWatermark(self, item: object) -> bool:
        several = len(self._last) > 1
        watermark = item[1] if several and isinstance(item, tuple) else item
        if not isinstance(watermark, Watermark):
            return False
        for ordinal in (item[0],) if several else (0,):
            if watermark.isIdle():
                self._idle[ordinal] = True
            else:
                self._last[ordinal], self._idle[ordinal] = watermark.timestamp, False
        return True


def toEveryBucket(watermark: Watermark, bucketCount: int) -> list:
    """Return ``watermark`` as a processor's output to every outbound bucket."""
    return [watermark] if bucketCount == 1 else [(ordinal, watermark) for ordinal in range(bucketCount)]


class InputMarkers:
    """Takes the markers out of a processor's input and coalesces them once it is consumed;
    a watermark not above ``observed`` (the last one the processor observed) is not given again."""

    def __init__(self, tagged: bool, ordinal: int, observed: int = LONG_MIN) -> None:
        self._tagged, self._ordinal = tagged, ordinal
        self._markers: dict[tuple[int, int], WatermarkMarker] = {}
        self.observed = observed

    def items(self, batches: Iterable[list]) -> Iterator[list]:
        """Yield the input batches without their markers, recording those."""
        for batch in batches:
            kept = [item for item in batch if not self._isMarker(item)]
            if kept:
                yield kept

    def _isMarker(self, item: object) -> bool:
        ordinal, marker = item if self._tagged else (self._ordinal, item)
        if not isinstance(marker, WatermarkMarker):
            return False
        self._markers[(ordinal, marker.sourceIndex)] = marker
        return True

    def coalesced(self) -> tuple[Watermark | None, bool]:
        """Return the watermark every input queue has reached (None if some queue has none yet),
        and whether every queue is idle (the idle message goes on, as Jet's tasklet forwards it).
        Each queue's last watermark is observed first, lowest first, then the idle messages."""
        markers = sorted(self._markers.values(), key=operator.attrgetter("timestamp"))
        coalescer, reached, idle = WatermarkCoalescer(len(markers)), None, False
        observed = [
            coalescer.observeWm(queue, Watermark(marker.timestamp))
            for queue, marker in enumerate(markers)
            if marker.timestamp != LONG_MIN  # a queue without a watermark holds the others back
        ]
        observed += [coalescer.observeWm(queue, IDLE_MESSAGE) for queue, marker in enumerate(markers) if marker.idle]
        for watermark in [*observed, coalescer.checkWmHistory()]:
            if watermark is not None and watermark.isIdle():
                idle = True
            elif watermark is not None and watermark.timestamp > self.observed:
                reached = watermark
        if reached is not None:
            self.observed = reached.timestamp
        return reached, idle

