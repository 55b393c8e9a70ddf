"""How a source or an ``add-timestamps`` vertex gives events their time and derives watermarks
(Jet's ``EventTimePolicy`` and ``WatermarkPolicy``)."""

import abc
import operator
import time
from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import SourceLocation, shorten
from sparkjet.coredag.model.jet_event import eventTimestamp
from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN

DEFAULT_IDLE_TIMEOUT = 60_000
"""Jet's default: a source partition with no events for 60 s is idle."""


class WatermarkPolicy(abc.ABC):
    """The watermark of one source partition, from the timestamps it has seen."""

    @abc.abstractmethod
    def reportEvent(self, timestamp: int) -> None:
        """Take note of an event's timestamp."""

    @abc.abstractmethod
    def getCurrentWatermark(self) -> int:
        """Return the watermark now."""


class _LimitingLagPolicy(WatermarkPolicy):
    def __init__(self, lag: int) -> None:
        self._lag, self._watermark = lag, LONG_MIN

    def reportEvent(self, timestamp: int) -> None:
        self._watermark = max(self._watermark, timestamp - self._lag)

    def getCurrentWatermark(self) -> int:
        return self._watermark


class _RealTimeLagPolicy(WatermarkPolicy):
    def __init__(self, lag: int, wallClockMillis: Callable[[], int]) -> None:
        self._lag, self._wallClockMillis = lag, wallClockMillis

    def reportEvent(self, timestamp: int) -> None:
        pass

    def getCurrentWatermark(self) -> int:
        return self._wallClockMillis() - self._lag


class _NoWatermarksPolicy(WatermarkPolicy):
    def reportEvent(self, timestamp: int) -> None:
        pass

    def getCurrentWatermark(self) -> int:
        return LONG_MIN


def wallClockMillis() -> int:
    """Return the wall-clock time in milliseconds since the epoch, as Java's ``currentTimeMillis``."""
    return time.time_ns() // 1_000_000


def ingestionTimestamp(item: object) -> int:
    """Return the time ``item`` is read at: ``withIngestionTimestamps``' timestamp function."""
    return wallClockMillis()


@attrs.frozen
class LimitingLag:
    """Makes policies whose watermark is the highest timestamp seen minus ``lag``."""

    lag: int

    def __call__(self) -> WatermarkPolicy:
        return _LimitingLagPolicy(self.lag)


@attrs.frozen
class LimitingRealTimeLag:
    """Makes policies whose watermark is the wall clock minus ``lag``, events or not."""

    lag: int
    wallClockMillis: Callable[[], int] = wallClockMillis

    def __call__(self) -> WatermarkPolicy:
        return _RealTimeLagPolicy(self.lag, self.wallClockMillis)


@attrs.frozen
class NoWatermarks:
    """Makes policies that never emit a watermark."""

    def __call__(self) -> WatermarkPolicy:
        return _NoWatermarksPolicy()


def limitingLag(lag: int) -> LimitingLag:
    """Return Jet's ``WatermarkPolicy.limitingLag(lag)``: watermark = top timestamp - lag."""
    _checkNotNegative(lag, "lag must not be negative")
    return LimitingLag(lag)


def limitingRealTimeLag(lag: int) -> LimitingRealTimeLag:
    """Return Jet's ``WatermarkPolicy.limitingRealTimeLag(lag)``: watermark = wall clock - lag."""
    _checkNotNegative(lag, "lag must not be negative")
    return LimitingRealTimeLag(lag)


def _checkNotNegative(value: int, message: str) -> None:
    if value < 0:
        raise ValueError(message)


TIMESTAMP_ADVICE = (
    "an event's timestamp is an int of epoch milliseconds (Jet's long): return int(seconds * 1000) "
    "for seconds as time.time() gives them"
)
"""What a timestamp is, as errors about one say."""


def checkedTimestamp(timestamp: object, timestampFn: Callable | None) -> int:
    """Return ``timestamp``, what ``timestampFn`` returned (None: the source's own time), as
    an event time: an int of epoch milliseconds within Java's long, as Jet's ``ToLongFunction``
    makes it (an integer of another type, say numpy's, becomes an int); else raise naming the
    function, what it returned and what to return."""
    if type(timestamp) is int and LONG_MIN <= timestamp <= LONG_MAX:
        return timestamp
    given = f"{_returnedBy(timestampFn)} {shorten(timestamp)}"
    if isinstance(timestamp, bool) or not hasattr(type(timestamp), "__index__"):
        raise TypeError(f"{given} ({type(timestamp).__name__}), but {TIMESTAMP_ADVICE}")
    value = operator.index(timestamp)
    if not LONG_MIN <= value <= LONG_MAX:
        raise ValueError(f"{given}, out of a Java long's range, but {TIMESTAMP_ADVICE}")
    return value


def _returnedBy(timestampFn: Callable | None) -> str:
    """Return how an error says where a timestamp came from: ``timestampFn tsOf (defined at job.py:7) returned``."""
    if timestampFn is None or timestampFn is eventTimestamp:
        return "The source gave the native timestamp"
    name = getattr(timestampFn, "__qualname__", None) or shorten(timestampFn)
    code = getattr(timestampFn, "__code__", None)
    where = "" if code is None else f" (defined at {SourceLocation(code.co_filename, code.co_firstlineno)})"
    return f"timestampFn {name}{where} returned"


def _noWrapping(event, timestamp: int):
    return event


def _noTimestamp(event) -> int:
    return LONG_MIN


@attrs.frozen
class EventTimePolicy:
    """Where events' timestamps come from (``timestampFn``, or the source's native time when
    None), how each partition's watermark follows them, how watermarks are throttled to a frame
    (size 0: none at all), and after how long without events a partition is idle (0: never)."""

    timestampFn: Callable[[object], int] | None
    newWmPolicyFn: Callable[[], WatermarkPolicy]
    watermarkThrottlingFrameSize: int
    watermarkThrottlingFrameOffset: int = 0
    idleTimeoutMillis: int = DEFAULT_IDLE_TIMEOUT
    wrapFn: Callable[[object, int], object] = _noWrapping

    def __attrs_post_init__(self) -> None:
        _checkNotNegative(self.watermarkThrottlingFrameSize, "watermarkThrottlingFrameSize must be >= 0")
        _checkNotNegative(self.watermarkThrottlingFrameOffset, "watermarkThrottlingFrameOffset must be >= 0")
        if self.watermarkThrottlingFrameSize and self.watermarkThrottlingFrameOffset >= self.watermarkThrottlingFrameSize:
            raise ValueError("offset must be smaller than frame size")
        _checkNotNegative(self.idleTimeoutMillis, "idleTimeoutMillis must be >= 0 (0 means disabled)")

    def throttledWatermark(self, watermark: int) -> int:
        """Return ``watermark`` floored to the throttling frame (``LONG_MIN``: emit none)."""
        size, offset = self.watermarkThrottlingFrameSize, self.watermarkThrottlingFrameOffset
        if size == 0:
            return LONG_MIN
        return watermark - (watermark - offset) % size


def noEventTime() -> EventTimePolicy:
    """Return Jet's ``EventTimePolicy.noEventTime()``: no timestamps, no watermarks."""
    return EventTimePolicy(_noTimestamp, NoWatermarks(), 0, 0, 0)
