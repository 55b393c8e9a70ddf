"""Jet's ``EventTimeMapper``: timestamps for a source's events and the watermarks that follow,
one watermark per source partition, the minimum over the active ones emitted."""

import time
from collections.abc import Callable

from sparkjet.coredag.model.event_time_policy import EventTimePolicy, checkedTimestamp
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MAX, LONG_MIN, Watermark

NO_NATIVE_TIME = LONG_MIN
"""The native timestamp of an event whose source gives none."""

Clock = Callable[[], int]
"""A monotonic clock in nanoseconds, as Java's ``System.nanoTime``."""


class EventTimeMapper:
    """Wraps each event with its timestamp and inserts watermarks before it where they advance;
    a partition without events for the idle timeout is left out, and when all are idle the top
    watermark is forwarded, then ``IDLE_MESSAGE``."""

    def __init__(self, policy: EventTimePolicy, clock: Clock = time.monotonic_ns) -> None:
        self._policy, self._clock = policy, clock
        self._idleTimeoutNanos = policy.idleTimeoutMillis * 1_000_000
        self._wmPolicies: list = []
        self._watermarks: list[int] = []
        self._markIdleAt: list[int] = []
        self._lastEmittedWm = LONG_MIN
        self._topObservedWm = LONG_MIN
        self._allAreIdle = False

    def flatMapEvent(self, event, partitionIndex: int, nativeEventTime: int = NO_NATIVE_TIME) -> list:
        """Return the watermark the event lets through, if any, then the (wrapped) event; a
        timestamp that is no int of epoch milliseconds is refused (see ``checkedTimestamp``)."""
        now = self._clock()
        timestampFn = self._policy.timestampFn
        if timestampFn is not None:
            eventTime = checkedTimestamp(timestampFn(event), timestampFn)
        elif nativeEventTime == NO_NATIVE_TIME:
            raise ValueError("Neither timestampFn nor nativeEventTime specified")
        else:
            eventTime = checkedTimestamp(nativeEventTime, None)
        self._wmPolicies[partitionIndex].reportEvent(eventTime)
        self._markIdleAt[partitionIndex] = now + self._idleTimeoutNanos
        self._allAreIdle = False
        # capped at the event's time: a wall-clock policy read after the event must not make it late
        output = self._advance(now, eventTime)
        output.append(self._policy.wrapFn(event, eventTime))
        return output

    def flatMapIdle(self) -> list:
        """Return what time alone lets through: a watermark, the idle message, or nothing."""
        return self._advance(self._clock(), LONG_MAX)

    def addPartitions(self, addedCount: int) -> None:
        """Track ``addedCount`` more partitions, active until their idle timeout passes."""
        if addedCount < 0:
            raise ValueError("addedCount must be >= 0")
        now = self._clock()
        for _ in range(addedCount):
            self._wmPolicies.append(self._policy.newWmPolicyFn())
            self._watermarks.append(LONG_MIN)
            self._markIdleAt.append(now + self._idleTimeoutNanos)

    def removePartition(self, partitionIndex: int) -> list:
        """Stop tracking a partition; return what that lets through."""
        for values in (self._wmPolicies, self._watermarks, self._markIdleAt):
            del values[partitionIndex]
        return self._advance(self._clock(), LONG_MAX)

    def partitionCount(self) -> int:
        """Return how many partitions are tracked."""
        return len(self._wmPolicies)

    def getWatermark(self, partitionIndex: int) -> int:
        """Return the watermark of one partition (to save in a snapshot)."""
        return self._watermarks[partitionIndex]

    def restoreWatermark(self, partitionIndex: int, watermark: int) -> None:
        """Restore a partition's watermark; no watermark at or below the lowest one is emitted again."""
        self._watermarks[partitionIndex] = watermark
        self._lastEmittedWm = min(self._watermarks)

    def idleAt(self, partitionIndex: int) -> int:
        """Return when (on the clock) a partition without more events turns idle."""
        return self._markIdleAt[partitionIndex]

    def restoreIdleAt(self, partitionIndex: int, idleAt: int) -> None:
        """Restore when a partition without more events turns idle (a stream's next micro-batch
        goes on counting its idle time)."""
        self._markIdleAt[partitionIndex] = idleAt

    def _advance(self, now: int, maxWatermark: int) -> list:
        lowest = LONG_MAX
        for index, policy in enumerate(self._wmPolicies):
            if self._idleTimeoutNanos > 0 and self._markIdleAt[index] <= now:
                continue
            watermark = max(self._watermarks[index], min(policy.getCurrentWatermark(), maxWatermark))
            self._watermarks[index] = watermark
            self._topObservedWm = max(self._topObservedWm, watermark)
            lowest = min(lowest, watermark)
        if lowest == LONG_MAX:
            if self._allAreIdle:
                return []
            lowest, self._allAreIdle = self._topObservedWm, True
        else:
            self._allAreIdle = False
        output = []
        if lowest > self._lastEmittedWm:
            throttled = self._policy.throttledWatermark(lowest)
            if throttled > self._lastEmittedWm:
                output.append(Watermark(throttled))
                self._lastEmittedWm = throttled
        if self._allAreIdle:
            output.append(IDLE_MESSAGE)
        return output
