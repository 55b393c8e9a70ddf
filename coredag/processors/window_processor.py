"""What Jet's window processors share: a late-event counter, emitting what a watermark or the end
closes, and early results every period of an injectable clock."""

import abc
import time
from collections.abc import Callable, Iterator

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.errors import ProcessorContractError, UserFunctionError, shorten
from sparkjet.coredag.model.broadcast_key import BroadcastKey, broadcastKey
from sparkjet.coredag.model.event_time_policy import wallClockMillis

EARLY_RESULTS_AT = "EARLY_RESULTS_AT"
"""The broadcast snapshot key of the wall-clock time a window processor last emitted early
results: a stream's next micro-batch goes on from it."""

OutputFn = Callable[[int, int, object, object, bool], object]
"""Makes an output item of ``(start, end, key, result, isEarly)``, as Jet's KeyedWindowResultFunction."""


def monotonicMillis() -> int:
    """Return a monotonic clock in milliseconds, for early results."""
    return time.monotonic_ns() // 1_000_000


def lowestRestored(key: BroadcastKey, expectedKey: str, value: int, lowest: int) -> int:
    """Return the lower of ``lowest`` and the ``value`` restored under broadcast ``key``, which
    must be ``expectedKey`` (processors of another count may have saved several)."""
    if key.key != expectedKey:
        raise ProcessorContractError(f"Unexpected broadcast key: {key.key!r}")
    return min(value, lowest)


class WindowProcessor(AbstractProcessor):
    """A window processor: ``_accumulate`` takes an item, ``_output`` holds what a watermark or
    ``complete`` closes, ``_earlyWindows`` makes early results."""

    def __init__(self, stageName: str, earlyResultsPeriod: int, clock: Callable[[], int]) -> None:
        self._stageName, self._earlyResultsPeriod, self._clock = stageName, earlyResultsPeriod, clock
        self.lateEventsDropped = 0
        self._output: Iterator | None = None
        self._earlyOutput: Iterator | None = None
        self._lastEarlyResults = 0

    def onInit(self, context: ProcessorContext) -> None:
        """Start the early-results clock."""
        self._lastEarlyResults = self._clock()

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Take ``item`` of input ``ordinal``; as the idle hook, emit early results when due."""
        if ordinal is None:
            return self._emitEarlyResults()
        try:
            self._accumulate(ordinal, item)
        except Exception as cause:
            raise UserFunctionError(self._stageName, shorten(item), cause) from cause
        return True

    @abc.abstractmethod
    def _accumulate(self, ordinal: int, item: object) -> None:
        """Add ``item`` to its window, or count it as late."""

    @abc.abstractmethod
    def _earlyWindows(self) -> Iterator | None:
        """Return early results of the open windows, or None when there are none."""

    def saveEarlyResultsTime(self) -> bool:
        """Save when early results were last emitted (wall clock), where there are any."""
        if self._earlyResultsPeriod == 0:
            return True
        sinceLast = self._clock() - self._lastEarlyResults
        return self.tryEmitToSnapshot(broadcastKey(EARLY_RESULTS_AT), wallClockMillis() - sinceLast)

    def restoredEarlyResultsTime(self, key: BroadcastKey, value: int) -> bool:
        """Take back when early results were last emitted (the earliest saved), if ``key`` is
        that; return whether it was."""
        if key.key != EARLY_RESULTS_AT:
            return False
        self._lastEarlyResults = min(self._lastEarlyResults, self._clock() - (wallClockMillis() - value))
        return True

    def _emitOutput(self) -> bool:
        if self.emitFromTraverser(self._output):
            self._output = None
            return True
        return False

    def _emitEarlyResults(self) -> bool:
        if self._earlyOutput is None:
            now = self._clock()
            if self._earlyResultsPeriod == 0 or now < self._lastEarlyResults + self._earlyResultsPeriod:
                return True
            self._earlyOutput = self._earlyWindows()
            if self._earlyOutput is None:
                return True
            self._lastEarlyResults = now
        if self.emitFromTraverser(self._earlyOutput):
            self._earlyOutput = None
            return True
        return False
