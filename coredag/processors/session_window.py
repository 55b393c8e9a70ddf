"""Jet's ``SessionWindowP``: per key, windows of events no further apart than the session
timeout, merged as events bridge them, closed when the watermark passes their end; late events
(behind the watermark) dropped and counted. The state (each key's sorted windows, the deadlines,
the current watermark) is plain Python values."""

import bisect
from collections.abc import Callable, Iterator
from typing import ClassVar

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, DeclaresCapabilities
from sparkjet.coredag.api.saves_changes import SavesChanges, TouchedKeys
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.broadcast_key import BroadcastKey, broadcastKey
from sparkjet.coredag.model.event_time_policy import checkedTimestamp
from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN, Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.window_processor import OutputFn, WindowProcessor, lowestRestored, monotonicMillis


@attrs.frozen
class SessionWindowP(DeclaresCapabilities):
    """Makes session-window processors: input ``i`` keyed by ``keyFns[i]``, timed by ``timestampFns[i]``."""

    sessionTimeout: int
    keyFns: tuple[Callable, ...]
    timestampFns: tuple[Callable, ...]
    aggrOp: AggregateOperation
    stageName: str
    outputFn: OutputFn = KeyedWindowResult
    earlyResultsPeriod: int = 0
    clock: Callable[[], int] = monotonicMillis
    windowsByEventTime: ClassVar[bool] = True
    """Drawn as a window vertex."""

    def capabilities(self) -> Capabilities:
        """Return that its processors need a heartbeat where they emit early results, as time passes,
        and save only what changed."""
        return Capabilities(needsHeartbeat=self.earlyResultsPeriod > 0, savesChangesOnly=True)

    def __attrs_post_init__(self) -> None:
        if len(self.keyFns) != self.aggrOp.arity:
            raise ValueError(f"{len(self.keyFns)} key functions provided for {self.aggrOp.arity}-arity aggregate operation")
        if self.aggrOp.combineFn is None:
            raise ValueError("AggregateOperation.combineFn is required for session windows")

    def __call__(self) -> "SessionWindowProcessor":
        return SessionWindowProcessor(self)


@attrs.define
class Windows:
    """One key's open sessions, sorted by start: ``starts[i]``, ``ends[i]``, ``accs[i]``."""

    starts: list[int] = attrs.Factory(list)
    ends: list[int] = attrs.Factory(list)
    accs: list = attrs.Factory(list)

    def remove(self, index: int) -> None:
        """Remove session ``index``."""
        del self.starts[index], self.ends[index], self.accs[index]


CURRENT_WATERMARK = "CURRENT_WATERMARK"
"""The broadcast snapshot key of the watermark a session processor last saw (Jet's ``Keys.CURRENT_WATERMARK``)."""


class SessionWindowProcessor(WindowProcessor, SavesChanges):
    """One processor's sessions; see the module. A snapshot of changes holds the keys whose
    sessions changed or closed since the last snapshot."""

    def __init__(self, supplier: SessionWindowP) -> None:
        super().__init__(supplier.stageName, supplier.earlyResultsPeriod, supplier.clock)
        self._supplier, self._op = supplier, supplier.aggrOp
        self.keyToWindows: dict[object, Windows] = {}
        self._touched = TouchedKeys()
        self.deadlineToKeys: dict[int, set] = {}
        self.currentWatermark = LONG_MIN
        self._minRestoredCurrentWatermark = LONG_MAX

    def _accumulate(self, ordinal: int, item: object) -> None:
        timestampFn = self._supplier.timestampFns[ordinal]
        timestamp = checkedTimestamp(timestampFn(item), timestampFn)
        if timestamp < self.currentWatermark:
            self.lateEventsDropped += 1
            return
        key = self._supplier.keyFns[ordinal](item)
        windows = self.keyToWindows.setdefault(key, Windows())
        index = self._resolve(windows, key, timestamp)
        windows.accs[index] = self._op.accumulateFn(windows.accs[index], (ordinal, item) if self._op.arity > 1 else item)
        self._touched.touch(key)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Emit the sessions that end before the watermark, then the watermark."""
        if self._output is None:
            self.currentWatermark = watermark.timestamp
            self._output = self._closeBefore(watermark.timestamp, watermark)
        return self._emitOutput()

    def saveToSnapshot(self) -> bool:
        """Save each key's open sessions and the current watermark, as Jet's does (and when
        early results were last emitted)."""
        self._touched.clear()
        return self.emitFromTraverserToSnapshot(iter(self.keyToWindows.items())) and self._saveTimes()

    def saveChangesToSnapshot(self) -> bool:
        """Save the sessions of each key touched or closed since the last snapshot, then the
        current watermark (and when early results were last emitted)."""
        changes = self._touched.changes(self.keyToWindows, self.keyToWindows.__getitem__)
        return self.emitFromTraverserToSnapshot(changes) and self._saveTimes()

    def _saveTimes(self) -> bool:
        return self.tryEmitToSnapshot(broadcastKey(CURRENT_WATERMARK), self.currentWatermark) and (
            self.saveEarlyResultsTime()
        )

    def restoreFromSnapshot(self, key: object, value: object) -> None:
        """Take back one key's sessions, the current watermark (the lowest of those restored) or
        when early results were last emitted."""
        if isinstance(key, BroadcastKey):
            if self.restoredEarlyResultsTime(key, value):
                return
            self._minRestoredCurrentWatermark = lowestRestored(
                key, CURRENT_WATERMARK, value, self._minRestoredCurrentWatermark
            )
            return
        self.keyToWindows[key] = value
        for end in value.ends:
            self.deadlineToKeys.setdefault(end, set()).add(key)

    def forgetFromSnapshot(self, key: object) -> None:
        """Drop one key's sessions and their deadlines."""
        windows = self.keyToWindows.pop(key, None)
        for end in windows.ends if windows is not None else ():
            self._removeDeadline(key, end)

    def finishSnapshotRestore(self) -> bool:
        """Set the current watermark to the restored one."""
        if self._minRestoredCurrentWatermark != LONG_MAX:
            self.currentWatermark, self._minRestoredCurrentWatermark = self._minRestoredCurrentWatermark, LONG_MAX
        return True

    def complete(self) -> bool:
        """Emit every session still open."""
        if self._output is None:
            self._output = self._closeBefore(LONG_MAX, None)
        return self._emitOutput()

    def _closeBefore(self, end: int, watermark: Watermark | None) -> Iterator:
        closing = sorted(deadline for deadline in self.deadlineToKeys if deadline < end)
        keys = dict.fromkeys(key for deadline in closing for key in self.deadlineToKeys[deadline])
        for deadline in closing:
            del self.deadlineToKeys[deadline]
        for key in keys:
            yield from self._closeWindows(key, end)
        if watermark is not None:
            yield watermark

    def _closeWindows(self, key: object, end: int) -> list:
        self._touched.touch(key)
        windows = self.keyToWindows[key]
        count = bisect.bisect_left(windows.ends, end)
        results = [
            self._supplier.outputFn(windows.starts[i], windows.ends[i], key, self._op.finishFn(windows.accs[i]), False)
            for i in range(count)
        ]
        if count == len(windows.starts):
            del self.keyToWindows[key]
        else:
            del windows.starts[:count], windows.ends[:count], windows.accs[:count]
        return [result for result in results if result is not None]

    def _resolve(self, w: Windows, key: object, timestamp: int) -> int:
        """Return the index of the session ``timestamp`` belongs to, extending or merging
        sessions, or inserting a new one, as Jet's ``resolveAcc`` does (touching sessions stay apart)."""
        eventEnd = timestamp + self._supplier.sessionTimeout
        i = 0
        while i < len(w.starts) and w.starts[i] < eventEnd:
            if w.ends[i] <= timestamp:
                i += 1
                continue
            if w.starts[i] <= timestamp and w.ends[i] >= eventEnd:
                return i
            if i + 1 == len(w.starts) or w.starts[i + 1] >= eventEnd:
                w.starts[i] = min(w.starts[i], timestamp)
                if w.ends[i] < eventEnd:
                    self._moveDeadline(key, w.ends[i], eventEnd)
                    w.ends[i] = eventEnd
                return i
            self._removeDeadline(key, w.ends[i])
            w.ends[i] = w.ends[i + 1]
            w.accs[i] = self._op.combineFn(w.accs[i], w.accs[i + 1])
            w.remove(i + 1)
            return i
        self.deadlineToKeys.setdefault(eventEnd, set()).add(key)
        w.starts.insert(i, timestamp)
        w.ends.insert(i, eventEnd)
        w.accs.insert(i, self._op.createFn())
        return i

    def _moveDeadline(self, key: object, old: int, new: int) -> None:
        self._removeDeadline(key, old)
        self.deadlineToKeys.setdefault(new, set()).add(key)

    def _removeDeadline(self, key: object, deadline: int) -> None:
        keys = self.deadlineToKeys[deadline]
        keys.discard(key)
        if not keys:
            del self.deadlineToKeys[deadline]

    def _earlyWindows(self) -> Iterator:
        """Return early results of every open session."""
        return self._earlyResultsOfSessions()

    def _earlyResultsOfSessions(self) -> Iterator:
        for key, w in list(self.keyToWindows.items()):
            for start, end, acc in zip(w.starts, w.ends, w.accs):
                result = self._supplier.outputFn(start, end, key, self._op.exportFn(acc), True)
                if result is not None:
                    yield result
