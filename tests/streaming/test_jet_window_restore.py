"""Jet's SlidingWindowP_changeWindowSizeTest and SlidingWindowP_FrameCombiningTest, ported with
their inputs and expected values: window state restored under another window size or slide, and
frames of another slide combined, land in the frames that hold them."""

import pickle

import pytest

from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext, restoreSnapshot
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.errors import ProcessorContractError
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy, tumblingWinPolicy
from sparkjet.coredag.model.watermark import LONG_MIN, Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.sliding_window import (
    SnapshotKey,
    aggregateToSlidingWindowP,
    combineToSlidingWindowP,
)

SUMMING = AggregateOperation(int, lambda acc, item: acc + item, lambda a, b: a + b, lambda a, b: a - b)
TO_SET = AggregateOperation(frozenset, lambda acc, item: acc | {item}, lambda a, b: a | b)
KEY = 77


def constantKey(item):
    return "key"


def itself(item):
    return item


def result(start, end, key, value, isEarly):
    return f"({end:03d}, {key}: {value})"


def setResult(start, end, key, value, isEarly):
    """Format a window's set sorted: two equal sets built in another order may print in another."""
    return f"({end:03d}, {key}: {sorted(value)})"


def windowP(policy):
    return aggregateToSlidingWindowP((constantKey,), (itself,), policy, SUMMING, "w", result)()


def started(processor):
    processor.init(Outbox(1, None), ProcessorContext("w", 0, 1))
    return processor


def restoredUnder(policy1, policy2):
    """Return a processor of ``policy2`` restored from one of ``policy1`` that took 0..3 and
    watermark 2, as Jet's test runs them."""
    first = started(windowP(policy1))
    for item in (0, 1, 2, 3):
        assert first.tryProcess(0, item)
    assert first.tryProcessWatermark(Watermark(2))
    first.outbox.drainBucket(0)
    assert first.saveToSnapshot()
    entries = pickle.loads(pickle.dumps(first.outbox.drainSnapshotBucket()))
    second = started(windowP(policy2))
    restoreSnapshot(second, Inbox(entries))
    assert second.finishSnapshotRestore()
    return second


@pytest.mark.parametrize(
    ("policy1", "policy2", "expected"),
    [
        (slidingWinPolicy(3, 1), slidingWinPolicy(2, 1), ["(003, key: 3)", "(004, key: 5)", "(005, key: 3)"]),
        (
            slidingWinPolicy(2, 1), slidingWinPolicy(3, 1),
            ["(003, key: 3)", "(004, key: 6)", "(005, key: 5)", "(006, key: 3)"],
        ),
        (tumblingWinPolicy(2), tumblingWinPolicy(3), ["(006, key: 5)"]),
        (tumblingWinPolicy(3), tumblingWinPolicy(2), ["(004, key: 3)", "(006, key: 3)"]),
        (tumblingWinPolicy(1), tumblingWinPolicy(4), ["(004, key: 5)"]),
    ],
    ids=[
        "shrink-sliding-window-no-leak",
        "extend-sliding-window",
        "incompatible-change-1",
        "incompatible-change-2",
        "multiple-frames-into-one",
    ],
)
def test_window_state_restored_under_another_window_emits_jets_results_and_keeps_no_frame(policy1, policy2, expected):
    processor = restoredUnder(policy1, policy2)
    assert processor.complete()
    assert processor.outbox.drainBucket(0) == expected
    assert processor.tsToKeyToAcc == {}
    assert not processor.slidingWindow


def test_frames_of_another_slide_warn_once_naming_the_stage(caplog):
    with caplog.at_level("WARNING", logger="sparkjet"):
        restoredUnder(tumblingWinPolicy(1), tumblingWinPolicy(4))
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1
    assert "Frames in the state of 'w' do not match its frame size" in warnings[0]


def test_a_duplicate_frame_of_the_same_slide_is_refused():
    processor = started(windowP(tumblingWinPolicy(2)))
    processor.restoreFromSnapshot(SnapshotKey(2, "key"), 1)
    with pytest.raises(ProcessorContractError, match=r"Duplicate key in snapshot: SnapshotKey\(timestamp=2, key='key'\)"):
        processor.restoreFromSnapshot(SnapshotKey(2, "key"), 1)


def frame(end, value):
    return KeyedWindowResult(0, end, KEY, value)


def test_frames_of_another_slide_combine_into_the_frames_that_hold_them():
    verifyProcessor(combineToSlidingWindowP(slidingWinPolicy(8, 4), TO_SET, "w", setResult)).input(
        [frame(2, frozenset("a")), frame(4, frozenset("b")), frame(6, frozenset("c"))]
    ).expectOutput(
        [f"(004, {KEY}: {sorted('ab')})", f"(008, {KEY}: {sorted('abc')})", f"(012, {KEY}: {sorted('c')})"]
    ).verify()


@pytest.mark.parametrize("offset", [0, 3])
def test_the_frame_above_the_lowest_time_is_a_frame_boundary_as_in_jet(offset):
    policy = slidingWinPolicy(10, 10).withOffset(offset)
    higher = policy.higherFrameTs(LONG_MIN)
    assert higher == policy.floorFrameTs(higher) > LONG_MIN
    assert higher - LONG_MIN <= 10
