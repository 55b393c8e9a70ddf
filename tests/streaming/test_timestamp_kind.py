"""TimestampKind on the window processor functions, as Jet's ``Processors.accumulateByFrameP``
and ``aggregateToSlidingWindowP`` take it: with FRAME the timestamp function gives the frame's
end itself, so Jet's SlidingWindowPTest inputs (frame timestamps) give Jet's expected windows
unchanged, where EVENT needs each event one before its frame's end."""

import operator

import pytest

from sparkjet.coredag import TimestampKind
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.sliding_window import accumulateByFrameP, aggregateToSlidingWindowP

KEY = 77
SUMMING = AggregateOperation(int, lambda acc, item: acc + item[1], operator.add, operator.sub)
POLICY = slidingWinPolicy(4, 1)


def constantKey(item):
    return KEY


def first(item):
    return item[0]


def windowOf(end: int, value: int) -> KeyedWindowResult:
    return KeyedWindowResult(end - 4, end, KEY, value)


ASCENDING = [
    windowOf(0, 1), Watermark(0), windowOf(1, 2), Watermark(1), windowOf(2, 3), Watermark(2),
    windowOf(3, 4), Watermark(3), windowOf(4, 4), Watermark(4), windowOf(5, 3), Watermark(5),
    windowOf(6, 2), Watermark(6), windowOf(7, 1), Watermark(7),
]
"""Jet's when_receiveAscendingTimestamps_then_emitAscending: one event in each of frames 0 to 4."""


@pytest.mark.parametrize("kind, offset", [(TimestampKind.FRAME, 0), (TimestampKind.EVENT, 1)], ids=["frame", "event"])
def test_frame_timestamps_are_taken_as_the_frames_end(kind, offset):
    supplier = aggregateToSlidingWindowP(
        (constantKey,), (first,), POLICY, SUMMING, "sliding-window", timestampKind=kind
    )
    events = [(frameTs - offset, 1) for frameTs in range(5)]
    verifyProcessor(supplier).input(events + [Watermark(t) for t in range(8)]).expectOutput(ASCENDING).verify()


def test_the_first_stage_takes_frame_timestamps_too():
    """Without snapshots: a first stage emits its frames when a snapshot is taken, as Jet's."""
    supplier = accumulateByFrameP((constantKey,), (first,), POLICY, SUMMING, "prepare", TimestampKind.FRAME)
    verifyProcessor(supplier).disableSnapshots().input([(1, 5), (1, 2), (3, 1), Watermark(3)]).expectOutput(
        [KeyedWindowResult(0, 1, KEY, 7), KeyedWindowResult(2, 3, KEY, 1), Watermark(3)]
    ).verify()


def test_event_is_the_default():
    supplier = accumulateByFrameP((constantKey,), (first,), POLICY, SUMMING, "prepare")
    verifyProcessor(supplier).input([(1, 5), Watermark(3)]).expectOutput([KeyedWindowResult(1, 2, KEY, 5), Watermark(3)]).verify()
