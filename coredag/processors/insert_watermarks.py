"""The ``add-timestamps`` processor: Jet's ``InsertWatermarksP``, one source partition per
processor, watermarks inserted before the events that advance them; late events pass (the
window processors downstream drop and count them). A timestamp function that fails, or returns
what is no int of epoch milliseconds, fails the job naming the stage, the function and the item."""

import time
from collections.abc import Iterator
from typing import ClassVar

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, DeclaresCapabilities
from sparkjet.coredag.api.processor import AbstractProcessor
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.broadcast_key import BroadcastKey, broadcastKey
from sparkjet.coredag.model.event_time_mapper import Clock, EventTimeMapper
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, LimitingRealTimeLag, wallClockMillis
from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN

IDLE_AT = "IDLE_AT"
"""The broadcast snapshot key of the wall-clock time an add-timestamps processor's partition turns idle."""


@attrs.frozen
class InsertWatermarksP(DeclaresCapabilities):
    """Makes processors giving events their time by ``eventTimePolicy``; ``clock`` tells
    nanoseconds for idle timeouts (a monotonic clock unless a test gives its own)."""

    eventTimePolicy: EventTimePolicy
    clock: Clock = time.monotonic_ns
    emitsWatermarks: ClassVar[bool] = True
    """Drawn as a vertex inserting watermarks."""

    def capabilities(self) -> Capabilities:
        """Return that its processors insert watermarks, turn idle after the policy's idle
        timeout (0: never), and need a heartbeat where the watermark follows the wall clock
        (ingestion time), moving without events."""
        return Capabilities(
            emitsWatermarks=True,
            turnsIdle=self.eventTimePolicy.idleTimeoutMillis > 0,
            needsHeartbeat=isinstance(self.eventTimePolicy.newWmPolicyFn, LimitingRealTimeLag),
        )

    def __call__(self) -> "InsertWatermarksProcessor":
        return InsertWatermarksProcessor(EventTimeMapper(self.eventTimePolicy, self.clock), self.clock)


class InsertWatermarksProcessor(AbstractProcessor):
    """Emits each event after the watermark it lets through; between events, time alone may
    let a watermark or the idle message through."""

    def __init__(self, eventTimeMapper: EventTimeMapper, clock: Clock) -> None:
        self._eventTimeMapper, self._clock = eventTimeMapper, clock
        self._eventTimeMapper.addPartitions(1)
        self._output: Iterator | None = None
        self._minRestoredWm = LONG_MAX
        self._latestRestoredIdleAt = LONG_MIN

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Emit what ``item`` (or, as the idle hook, the passing time) lets through."""
        if self._output is None:
            self._output = iter(self._eventTimeMapper.flatMapIdle() if ordinal is None else self._timestamped(item))
        if self.emitFromTraverser(self._output):
            self._output = None
            return True
        return False

    def _timestamped(self, item: object) -> list:
        """Return the watermark ``item`` lets through, if any, then the item with its timestamp;
        a failure names the vertex (a ``StageName`` knows where the user defined the stage)."""
        try:
            return self._eventTimeMapper.flatMapEvent(item, 0)
        except Exception as cause:
            raise UserFunctionError(self.context.vertexName, shorten(item), cause) from cause

    def saveToSnapshot(self) -> bool:
        """Save the watermark this processor's partition reached, under a key of its own, as
        Jet's does, and (wall clock) when it turns idle without more events."""
        mapper = self._eventTimeMapper
        idleAt = wallClockMillis() + (mapper.idleAt(0) - self._clock()) // 1_000_000
        return self.tryEmitToSnapshot(
            broadcastKey(self.context.globalProcessorIndex), mapper.getWatermark(0)
        ) and self.tryEmitToSnapshot(broadcastKey(IDLE_AT), idleAt)

    def restoreFromSnapshot(self, key: BroadcastKey, value: int) -> None:
        """Take the lowest of the watermarks restored, and the latest time to turn idle."""
        if key.key == IDLE_AT:
            self._latestRestoredIdleAt = max(value, self._latestRestoredIdleAt)
        else:
            self._minRestoredWm = min(self._minRestoredWm, value)

    def finishSnapshotRestore(self) -> bool:
        """Start from the restored watermark (none at or below it is emitted again) and idle time."""
        if self._minRestoredWm != LONG_MAX:
            self._eventTimeMapper.restoreWatermark(0, self._minRestoredWm)
        if self._latestRestoredIdleAt != LONG_MIN:
            nanosLeft = (self._latestRestoredIdleAt - wallClockMillis()) * 1_000_000
            self._eventTimeMapper.restoreIdleAt(0, self._clock() + nanosLeft)
        return True
