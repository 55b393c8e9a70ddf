"""Jet's ``SlidingWindowP``: aggregation by key and window on watermarks, in one stage
(``aggregateToSlidingWindowP``) or two (``accumulateByFrameP``, then ``combineToSlidingWindowP``).

Frames, late events, snapshots and a restore under another window size:
docs/internals/windows-and-watermarks.md."""

import bisect
import heapq
from collections.abc import Callable, Iterator
from typing import ClassVar

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, DeclaresCapabilities
from sparkjet.coredag.api.saves_changes import REMOVED, SavesChanges
from sparkjet.coredag.errors import ProcessorContractError
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.broadcast_key import BroadcastKey, broadcastKey
from sparkjet.coredag.model.event_time_policy import checkedTimestamp
from sparkjet.coredag.model.timestamp_kind import TimestampKind
from sparkjet.coredag.model.sliding_window_policy import SlidingWindowPolicy
from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN, Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.window_processor import OutputFn, WindowProcessor, lowestRestored, monotonicMillis

NEXT_WIN_TO_EMIT = "NEXT_WIN_TO_EMIT"
"""The broadcast snapshot key of the next window a last stage emits (Jet's ``Keys.NEXT_WIN_TO_EMIT``)."""


@attrs.frozen
class SnapshotKey:
    """The snapshot key of one key's accumulator in the frame ending at ``timestamp``; the
    entry belongs to the processor of ``key`` (Jet's ``SlidingWindowP.SnapshotKey``)."""

    timestamp: int
    key: object

    def partitionKey(self) -> object:
        """Return the key that decides which processor restores the entry."""
        return self.key


@attrs.frozen
class SlidingWindowP(DeclaresCapabilities):
    """Makes sliding-window processors: input ``i`` is keyed by ``keyFns[i]`` and falls into
    the frame holding the time ``frameTimestampFns[i]`` gives."""

    keyFns: tuple[Callable, ...]
    frameTimestampFns: tuple[Callable, ...]
    winPolicy: SlidingWindowPolicy
    aggrOp: AggregateOperation
    stageName: str
    outputFn: OutputFn = KeyedWindowResult
    earlyResultsPeriod: int = 0
    clock: Callable[[], int] = monotonicMillis
    isLastStage: bool = True
    """False for the first of two stages, which flushes its frames instead of saving them."""
    timestampKind: TimestampKind = TimestampKind.EVENT
    """What ``frameTimestampFns`` give: an event's time, or its frame's end (Jet's ``TimestampKind``)."""
    windowsByEventTime: ClassVar[bool] = True
    """Drawn as a window vertex."""

    def capabilities(self) -> Capabilities:
        """Return that its processors need a heartbeat where they emit early results, as time passes,
        and save only what changed."""
        return Capabilities(needsHeartbeat=self.earlyResultsPeriod > 0, savesChangesOnly=True)

    def __attrs_post_init__(self) -> None:
        if len(self.keyFns) != self.aggrOp.arity:
            raise ValueError(f"{len(self.keyFns)} key functions provided for {self.aggrOp.arity}-arity aggregate operation")
        if not self.winPolicy.isTumbling() and self.aggrOp.combineFn is None:
            raise ValueError("AggregateOperation.combineFn is required for sliding windows")
        if self.earlyResultsPeriod < 0:
            raise ValueError("earlyResultsPeriod must be zero or positive")

    def frameOf(self, ordinal: int, item: object) -> int:
        """Return the end of ``item``'s frame; a timestamp that is no int is refused."""
        timestampFn = self.frameTimestampFns[ordinal]
        timestamp = checkedTimestamp(timestampFn(item), timestampFn)
        return timestamp if self.timestampKind is TimestampKind.FRAME else self.winPolicy.higherFrameTs(timestamp)

    def __call__(self) -> "SlidingWindowProcessor":
        return SlidingWindowProcessor(self)


class SlidingWindowProcessor(WindowProcessor, SavesChanges):
    """One processor's frames; see the module."""

    def __init__(self, supplier: SlidingWindowP) -> None:
        super().__init__(supplier.stageName, supplier.earlyResultsPeriod, supplier.clock)
        self._supplier = supplier
        self._policy, self._op = supplier.winPolicy, supplier.aggrOp
        self.tsToKeyToAcc: dict[int, dict] = {}
        self._frameHeap: list[int] = []
        """The frames held, lowest first, and some evicted ones (dropped as they come up)."""
        self.slidingWindow: dict | None = None
        self._slidingWindowEnd = LONG_MIN
        """The end of the window ``slidingWindow`` holds."""
        self.nextWinToEmit = LONG_MIN
        self.topTs = LONG_MIN
        self._emptyAcc = self._op.createFn()
        self._minRestoredNextWinToEmit = LONG_MAX
        self._badFrameRestored = False
        self._keepsFrames = supplier.isLastStage
        self._touched: dict[int, set] = {}
        """The keys of each frame whose accumulator changed, was made or went since the last snapshot."""

    def _accumulate(self, ordinal: int, item: object) -> None:
        frameTs = self._supplier.frameOf(ordinal, item)
        if frameTs < self.nextWinToEmit:
            self.lateEventsDropped += 1
            return
        key = self._supplier.keyFns[ordinal](item)
        frame = self._frame(frameTs)
        acc = frame[key] if key in frame else self._op.createFn()
        frame[key] = self._op.accumulateFn(acc, (ordinal, item) if self._op.arity > 1 else item)
        self.topTs = max(self.topTs, frameTs)
        if self._keepsFrames:
            touched = self._touched.get(frameTs)
            if touched is None:
                touched = self._touched[frameTs] = set()
            touched.add(key)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Emit the windows the watermark closes, then the watermark."""
        if self._output is None:
            self._output = self._closeWindows(watermark)
        return self._emitOutput()

    def complete(self) -> bool:
        """Emit every window still open, as if the watermark had passed them all."""
        return self._flush()

    def saveToSnapshot(self) -> bool:
        """A last stage saves its frames and the next window to emit; a first stage emits its
        frames instead and saves nothing, as Jet's does (its late events reach the last stage,
        which drops them, until a watermark sets its next window to emit again)."""
        if not self._supplier.isLastStage:
            return self._flush()
        self._touched = {}
        frames = (
            (SnapshotKey(frameTs, key), acc) for frameTs, frame in self.tsToKeyToAcc.items() for key, acc in frame.items()
        )
        return self.emitFromTraverserToSnapshot(frames) and self._saveBroadcastEntries()

    def saveChangesToSnapshot(self) -> bool:
        """Save the accumulator of each frame and key changed since the last snapshot
        (``REMOVED`` where its frame was evicted), then the next window to emit; a first stage
        saves as ``saveToSnapshot`` does."""
        if not self._keepsFrames:
            return self.saveToSnapshot()
        touched, self._touched = self._touched, {}
        frames = self.tsToKeyToAcc
        changes = (
            (SnapshotKey(frameTs, key), frames[frameTs][key] if key in frames.get(frameTs, ()) else REMOVED)
            for frameTs, keys in touched.items() for key in keys
        )
        return self.emitFromTraverserToSnapshot(changes) and self._saveBroadcastEntries()

    def forgetFromSnapshot(self, key: object) -> None:
        """Drop one key's accumulator of one frame (a ``SnapshotKey``)."""
        frame = self.tsToKeyToAcc.get(key.timestamp)
        if frame is not None:
            frame.pop(key.key, None)
            if not frame:
                del self.tsToKeyToAcc[key.timestamp]
        self.slidingWindow = None

    def _saveBroadcastEntries(self) -> bool:
        return self.tryEmitToSnapshot(broadcastKey(NEXT_WIN_TO_EMIT), self.nextWinToEmit) and self.saveEarlyResultsTime()

    def _touch(self, frameTs: int, keys) -> None:
        """Note that the accumulators of ``keys`` in the frame ending at ``frameTs`` changed or went."""
        if self._keepsFrames:
            self._touched.setdefault(frameTs, set()).update(keys)

    def restoreFromSnapshot(self, key: object, value: object) -> None:
        """Take back one key's accumulator of a frame (moved to this policy's frame that holds
        it, merged with what is there when a changed slide puts several into one), the next
        window to emit (the lowest of those restored; a first stage reads the one an earlier
        sparkjet saved for it) or when early results were last emitted."""
        if isinstance(key, BroadcastKey):
            if self.restoredEarlyResultsTime(key, value):
                return
            self._minRestoredNextWinToEmit = lowestRestored(key, NEXT_WIN_TO_EMIT, value, self._minRestoredNextWinToEmit)
            return
        frameTs = self._policy.higherFrameTs(key.timestamp - 1)
        if frameTs != key.timestamp and not self._badFrameRestored:
            self._badFrameRestored = True
            self.context.logger.warning(
                "Frames in the state of '%s' do not match its frame size: they were likely saved for another"
                " window slide or offset. Its window results will probably be incorrect until all restored frames"
                " are emitted.", self._stageName,
            )
        frame = self._frame(frameTs)
        if key.key in frame:
            frame[key.key] = self._mergedRestored(key, frame[key.key], value)
        else:
            frame[key.key] = value
        self.topTs = max(self.topTs, frameTs)
        if frameTs != key.timestamp:  # moved: the next snapshot of changes removes it where it was saved
            self._touch(key.timestamp, (key.key,))
            self._touch(frameTs, (key.key,))

    def _mergedRestored(self, key: SnapshotKey, acc: object, restored: object) -> object:
        """Return two restored accumulators of one key and frame combined: several frames of
        another slide that fall into one of this policy's."""
        if not self._badFrameRestored:
            raise ProcessorContractError(f"Duplicate key in snapshot: {key!r}")
        if self._op.combineFn is None:
            raise ProcessorContractError(
                f"'{self._stageName}' restores several frames into one and its AggregateOperation has no"
                " combineFn to merge them"
            )
        return self._op.combineFn(acc, restored)

    def finishSnapshotRestore(self) -> bool:
        """Set the next window to emit to the restored one, on a frame boundary, and drop the
        restored frames no window from it holds (a window made shorter since the snapshot)."""
        restored, self._minRestoredNextWinToEmit = self._minRestoredNextWinToEmit, LONG_MAX
        if restored != LONG_MAX:
            self.nextWinToEmit = self._policy.higherFrameTs(restored - 1) if restored > LONG_MIN else restored
            oldest = self.nextWinToEmit - self._policy.windowSize
            for frameTs in [frameTs for frameTs in self.tsToKeyToAcc if frameTs <= oldest]:
                self._touch(frameTs, self.tsToKeyToAcc.pop(frameTs))
        return True

    def _flush(self) -> bool:
        """Emit every window still open and evict its frames."""
        if self._output is None:
            if not self.tsToKeyToAcc:
                return True
            self._output = self._windowsUpTo(self.topTs + self._policy.windowSize - self._policy.frameSize)
        return self._emitOutput()

    def _frame(self, frameTs: int) -> dict:
        """Return the accumulators by key of the frame ending at ``frameTs``, a new one if needed."""
        frame = self.tsToKeyToAcc.get(frameTs)
        if frame is None:
            frame = self.tsToKeyToAcc[frameTs] = {}
            heapq.heappush(self._frameHeap, frameTs)
        return frame

    def _closeWindows(self, watermark: Watermark) -> Iterator:
        yield from self._windowsUpTo(watermark.timestamp)
        if not watermark.isIdle():
            self.nextWinToEmit = self._policy.higherFrameTs(watermark.timestamp)
        yield watermark

    def _windowsUpTo(self, end: int) -> Iterator:
        """Yield the results of every window ending at or before ``end`` that holds a frame,
        evicting as it goes."""
        start = self._startingWindowTs(end)
        if start == LONG_MIN:
            return
        for winEnd in self._windowEnds(start, end, self._evictingLowestFrameAbove):
            for key, acc in list(self._computeWindow(winEnd).items()):
                yield self._result(winEnd - self._policy.windowSize, winEnd, key, self._op.finishFn(acc), False)
            self._completeWindow(winEnd)

    def _windowEnds(self, start: int, end: int, lowestFrameAbove: Callable[[int], int | None]) -> Iterator[int]:
        """Yield the ends of the windows from ``start`` to ``end`` that hold a frame, jumping
        over those that hold none to the lowest frame ``lowestFrameAbove(t)`` finds after ``t``."""
        step, windowSize = self._policy.frameSize, self._policy.windowSize
        winEnd = start
        while winEnd <= end:
            lowest = lowestFrameAbove(winEnd - windowSize)
            if lowest is None:
                return
            if lowest > winEnd:
                winEnd = self._policy.higherFrameTs(lowest - 1)
                continue
            yield winEnd
            winEnd += step

    def _evictingLowestFrameAbove(self, bound: int) -> int | None:
        """Return the lowest frame held above ``bound``; evict those at or below it: no window
        still to emit holds them."""
        heap = self._frameHeap
        while heap and (heap[0] <= bound or heap[0] not in self.tsToKeyToAcc):
            frameTs = heapq.heappop(heap)
            self._touch(frameTs, self.tsToKeyToAcc.pop(frameTs, ()))
        return heap[0] if heap else None

    def _result(self, start: int, end: int, key: object, result: object, isEarly: bool) -> object:
        return self._supplier.outputFn(start, end, key, result, isEarly)

    def _startingWindowTs(self, end: int) -> int:
        if self.nextWinToEmit != LONG_MIN:
            return self.nextWinToEmit
        if not self.tsToKeyToAcc:
            return LONG_MIN
        return min(min(self.tsToKeyToAcc), self._policy.floorFrameTs(end))

    def _computeWindow(self, winEnd: int) -> dict:
        if self._policy.isTumbling():
            return self.tsToKeyToAcc.get(winEnd, {})
        if self._op.deductFn is None:
            return self._recomputeWindow(winEnd)
        if self.slidingWindow is None or self._slidingWindowEnd != winEnd - self._policy.frameSize:
            self.slidingWindow = self._recomputeWindow(winEnd)
        else:
            self._patchSlidingWindow(self._op.combineFn, self.tsToKeyToAcc.get(winEnd))
        self._slidingWindowEnd = winEnd
        return self.slidingWindow

    def _recomputeWindow(self, winEnd: int) -> dict:
        window: dict = {}
        for frameTs in self._framesOf(winEnd):
            for key, acc in self.tsToKeyToAcc[frameTs].items():
                window[key] = self._op.combineFn(window[key] if key in window else self._op.createFn(), acc)
        return window

    def _framesOf(self, winEnd: int) -> list[int]:
        """Return the frames held of the window ending at ``winEnd``, in order: looked up one by
        one, or picked from those held where they are fewer."""
        step, windowStart, frames = self._policy.frameSize, winEnd - self._policy.windowSize, self.tsToKeyToAcc
        if self._policy.framesPerWindow <= len(frames):
            return [frameTs for frameTs in range(windowStart + step, winEnd + 1, step) if frameTs in frames]
        return sorted(frameTs for frameTs in frames if windowStart < frameTs <= winEnd)

    def _patchSlidingWindow(self, patch: Callable, frame: dict | None) -> None:
        if not frame:
            return
        window = self.slidingWindow
        for key, acc in frame.items():
            patched = patch(window[key] if key in window else self._op.createFn(), acc)
            if patched == self._emptyAcc:
                window.pop(key, None)
            else:
                window[key] = patched

    def _completeWindow(self, winEnd: int) -> None:
        frameTs = winEnd - self._policy.windowSize + self._policy.frameSize
        evicted = self.tsToKeyToAcc.pop(frameTs, None)
        if evicted is not None:
            self._touch(frameTs, evicted)
            if not self._policy.isTumbling() and self._op.deductFn is not None:
                self._patchSlidingWindow(self._op.deductFn, evicted)

    def _earlyWindows(self) -> Iterator | None:
        """Return early results of every window from the next to emit to the last holding a
        frame, skipping those without one and leaving the state as it was (None when no frame
        is open)."""
        start = self._startingWindowTs(LONG_MAX)
        if self.topTs == LONG_MIN or start == LONG_MIN:
            return None
        frames = sorted(self.tsToKeyToAcc)

        def lowestFrameAbove(bound: int) -> int | None:
            index = bisect.bisect_right(frames, bound)
            return frames[index] if index < len(frames) else None

        end = self.topTs + self._policy.windowSize - self._policy.frameSize
        return self._earlyResults(self._windowEnds(start, end, lowestFrameAbove))

    def _earlyResults(self, winEnds: Iterator[int]) -> Iterator:
        for winEnd in winEnds:
            if self._policy.isTumbling():
                window = self.tsToKeyToAcc.get(winEnd, {})
            else:
                window = self._recomputeWindow(winEnd)
            for key, acc in list(window.items()):
                yield self._result(winEnd - self._policy.windowSize, winEnd, key, self._op.exportFn(acc), True)


def frameResultLastMoment(result: KeyedWindowResult) -> int:
    """Return the last moment a partial frame result covers: the second stage puts it in its
    frame that holds it, Jet's ``higherFrameTs(end - 1)`` (the frame itself where the slides match)."""
    return result.end - 1


def frameResultKey(result: KeyedWindowResult) -> object:
    """Return the key of a partial frame result."""
    return result.key


def frameResultAccumulator(result: KeyedWindowResult) -> object:
    """Return the partial accumulator of a frame result."""
    return result.result


def aggregateToSlidingWindowP(
    keyFns: tuple, timestampFns: tuple, winPolicy: SlidingWindowPolicy, aggrOp: AggregateOperation,
    stageName: str, outputFn: OutputFn = KeyedWindowResult, earlyResultsPeriod: int = 0,
    clock: Callable[[], int] = monotonicMillis, timestampKind: TimestampKind = TimestampKind.EVENT,
) -> SlidingWindowP:
    """Return the one-stage window aggregation of items timed by ``timestampFns`` (event times,
    or their frames' ends with ``TimestampKind.FRAME``)."""
    return SlidingWindowP(
        tuple(keyFns), tuple(timestampFns), winPolicy, aggrOp, stageName, outputFn,
        earlyResultsPeriod=earlyResultsPeriod, clock=clock, timestampKind=timestampKind,
    )


def accumulateByFrameP(
    keyFns: tuple, timestampFns: tuple, winPolicy: SlidingWindowPolicy, aggrOp: AggregateOperation, stageName: str,
    timestampKind: TimestampKind = TimestampKind.EVENT,
) -> SlidingWindowP:
    """Return the first stage: each frame's accumulators, emitted on watermarks as
    ``KeyedWindowResult(frameStart, frameEnd, key, acc)``; ``timestampFns`` give event times,
    or their frames' ends with ``TimestampKind.FRAME``."""
    return SlidingWindowP(
        tuple(keyFns), tuple(timestampFns), winPolicy.toTumblingByFrame(), aggrOp.withIdentityFinish(),
        stageName, KeyedWindowResult, isLastStage=False, timestampKind=timestampKind,
    )


def combineToSlidingWindowP(
    winPolicy: SlidingWindowPolicy, aggrOp: AggregateOperation, stageName: str,
    outputFn: OutputFn = KeyedWindowResult,
) -> SlidingWindowP:
    """Return the second stage: combines the first stage's frame results into windows."""
    return SlidingWindowP(
        (frameResultKey,), (frameResultLastMoment,), winPolicy, aggrOp.withCombiningAccumulateFn(frameResultAccumulator),
        stageName, outputFn,
    )
