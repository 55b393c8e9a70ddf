"""Jet's ``TransformStatefulP``: a stateful map, filter or flat-map of a stream, each key's state
kept across micro-batches in snapshots and, given a time-to-live, evicted once the watermark
passes its last event by more than that (``onEvictFn``'s output emitted at the watermark's time);
events behind the watermark are then dropped and counted."""

from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor
from sparkjet.coredag.api.saves_changes import SavesChanges, TouchedKeys
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.broadcast_key import BroadcastKey, broadcastKey
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN, Watermark
from sparkjet.coredag.processors.keyed import MapStatefulP
from sparkjet.coredag.processors.window_processor import lowestRestored

WATERMARK = "WATERMARK"
"""The broadcast snapshot key of the watermark a processor last saw (Jet's ``SnapshotKeys.WATERMARK``)."""

NO_TTL = 0
"""A time-to-live of 0: states live as long as the job."""


@attrs.frozen
class EvictedEvents:
    """``onEvictFn(state, key, watermark)``'s outputs (one, or an iterable where ``flat``), each
    an event at the watermark's time, as Jet's ``adaptOnEvictFn`` makes them."""

    onEvictFn: Callable
    flat: bool = False

    def __call__(self, state: object, key: object, watermark: int) -> Iterable:
        result = self.onEvictFn(state, key, watermark)
        results = (result if result is not None else ()) if self.flat else (() if result is None else (result,))
        return [JetEvent(watermark, item) for item in results]


@attrs.frozen
class TransformStatefulP:
    """Makes processors running ``step``'s function on each event with its key's state; with a
    ``ttl`` (event time, milliseconds), a key not touched for longer than that behind the
    watermark is evicted, ``onEvict(state, key, watermark)`` giving what to emit then."""

    step: MapStatefulP
    ttl: int = NO_TTL
    onEvict: Callable[[object, object, int], Iterable] | None = None

    def __call__(self) -> "TransformStatefulProcessor":
        return TransformStatefulProcessor(self)


class TransformStatefulProcessor(AbstractProcessor, SavesChanges):
    """One processor's states; see the module. Keys are kept in the order they were last
    touched, so eviction stops at the first key still alive, as Jet's access-ordered map does.
    A snapshot of changes holds the keys touched or evicted since the last snapshot."""

    def __init__(self, supplier: TransformStatefulP) -> None:
        self._supplier, self._step = supplier, supplier.step
        self.states: dict = {}
        self.lastTouched: dict = {}
        self._touched = TouchedKeys()
        self.currentWatermark = LONG_MIN
        self.lateEventsDropped = 0
        self._minRestoredWatermark = LONG_MAX
        self._flatMapper = self.flatMapper(self._flatMapEvent)
        self._evicting: Iterator | None = None

    def tryProcess0(self, item) -> bool:
        """Emit the step's outputs for ``item`` (nothing for a late event)."""
        return self._flatMapper.tryProcess(item)

    def _flatMapEvent(self, item: object) -> Iterable:
        ttl = self._supplier.ttl
        timestamp = item.timestamp if isinstance(item, JetEvent) else None
        if ttl != NO_TTL and timestamp < self.currentWatermark:
            self.lateEventsDropped += 1
            return ()
        try:
            key = self._step.keyFn(item)
            if timestamp is not None:
                self.lastTouched[key] = max(self.lastTouched.pop(key, LONG_MIN), timestamp)
            outputs = self._step.step(self.states, key, item)
        except Exception as cause:
            raise UserFunctionError(self._step.stageName, shorten(item), cause) from cause
        self._touched.touch(key)
        return outputs

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Evict the keys the watermark leaves behind by more than the time-to-live, emit what
        ``onEvictFn`` gives for them, then forward the watermark."""
        if self._evicting is None:
            self.currentWatermark = watermark.timestamp
            self._evicting = self._evicted(watermark.timestamp - self._supplier.ttl, watermark.timestamp)
        if not self.emitFromTraverser(self._evicting):
            return False
        if not self.tryEmit(watermark):
            return False
        self._evicting = None
        return True

    def complete(self) -> bool:
        """At the end of a finite stream, evict every key, at the flushing watermark's time
        (the greatest), as Jet does when it has a time-to-live."""
        if self._evicting is None:
            self._evicting = self._evicted(None, LONG_MAX)
        return self.emitFromTraverser(self._evicting)

    def _evicted(self, touchedBefore: int | None, watermark: int) -> Iterator:
        """Yield the outputs of evicting the keys last touched before ``touchedBefore`` (None:
        all); nothing without a time-to-live."""
        if self._supplier.ttl == NO_TTL:
            return
        while self.lastTouched:
            key, touched = next(iter(self.lastTouched.items()))
            if touchedBefore is not None and touched >= touchedBefore:
                return
            del self.lastTouched[key]
            state = self.states.pop(key)
            self._touched.touch(key)
            if self._supplier.onEvict is not None:
                try:
                    evicted = self._supplier.onEvict(state, key, watermark)
                except Exception as cause:
                    raise UserFunctionError(self._step.stageName, f"(evicting key {shorten(key)})", cause) from cause
                yield from evicted

    def saveToSnapshot(self) -> bool:
        """Save each key's state and last event time, then the current watermark."""
        self._touched.clear()
        return self.emitFromTraverserToSnapshot(map(self._entryOf, self.states)) and self._saveWatermark()

    def saveChangesToSnapshot(self) -> bool:
        """Save the state and last event time of each key touched or evicted since the last
        snapshot, then the current watermark."""
        return self.emitFromTraverserToSnapshot(self._touched.changes(self.states, self._valueOf)) and (
            self._saveWatermark()
        )

    def _entryOf(self, key: object) -> tuple:
        return key, self._valueOf(key)

    def _valueOf(self, key: object) -> tuple:
        return self.lastTouched.get(key), self.states[key]

    def _saveWatermark(self) -> bool:
        return self.tryEmitToSnapshot(broadcastKey(WATERMARK), self.currentWatermark)

    def restoreFromSnapshot(self, key: object, value: object) -> None:
        """Take a key's state, or the lowest watermark saved."""
        if isinstance(key, BroadcastKey):
            self._minRestoredWatermark = lowestRestored(key, WATERMARK, value, self._minRestoredWatermark)
            return
        touched, state = value
        self.states[key] = state
        if touched is not None:
            self.lastTouched[key] = touched

    def forgetFromSnapshot(self, key: object) -> None:
        """Drop one key's state and last event time."""
        self.states.pop(key, None)
        self.lastTouched.pop(key, None)

    def finishSnapshotRestore(self) -> bool:
        """Start from the restored watermark and keep the keys in last-touched order."""
        if self._minRestoredWatermark != LONG_MAX:
            self.currentWatermark, self._minRestoredWatermark = self._minRestoredWatermark, LONG_MAX
        self.lastTouched = dict(sorted(self.lastTouched.items(), key=_touchedTime))
        return True


def _touchedTime(entry: tuple) -> int:
    return entry[1]
