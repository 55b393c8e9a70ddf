"""Window and watermark processors save their state and take it back, as Jet's do: a run cut in
two by a snapshot (pickled, restored into new processors) emits what an uninterrupted run emits."""

import pickle

from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext, restoreSnapshot
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.broadcast_key import BroadcastKey
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, limitingLag
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy
from sparkjet.coredag.model.watermark import LONG_MIN, Watermark
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from sparkjet.coredag.processors.session_window import SessionWindowP
from sparkjet.coredag.processors.sliding_window import (
    NEXT_WIN_TO_EMIT,
    SnapshotKey,
    accumulateByFrameP,
    aggregateToSlidingWindowP,
    combineToSlidingWindowP,
)

COUNTING = AggregateOperation(int, lambda acc, item: acc + 1, lambda a, b: a + b, lambda a, b: a - b)


def first(item):
    return item[0]


def second(item):
    return item[1]


def started(supplier, entries=()):
    processor = supplier()
    processor.init(Outbox(1, None), ProcessorContext("v", 0, 1))
    if entries:
        restoreSnapshot(processor, Inbox(pickle.loads(pickle.dumps(list(entries)))))
        assert processor.finishSnapshotRestore()
    return processor


def fed(processor, items) -> list:
    for item in items:
        if isinstance(item, Watermark):
            assert processor.tryProcessWatermark(item)
        else:
            assert processor.tryProcess(0, item)
    return processor.outbox.drainBucket(0)


def saved(processor) -> list:
    assert processor.saveToSnapshot()
    return processor.outbox.drainSnapshotBucket()


def inTwoRuns(supplier, before, after) -> list:
    processor = started(supplier)
    output = fed(processor, before)
    entries = saved(processor)
    return output + processor.outbox.drainBucket(0) + fed(started(supplier, entries), after)


BEFORE = [(1, "a"), (3, "b"), (12, "a"), Watermark(10), (14, "b")]
AFTER = [(2, "a"), (15, "a"), Watermark(20), (25, "c"), Watermark(30)]


def test_a_sliding_window_cut_by_a_snapshot_emits_what_an_uninterrupted_one_does():
    supplier = aggregateToSlidingWindowP((second,), (first,), slidingWinPolicy(10, 5), COUNTING, "w")
    assert inTwoRuns(supplier, BEFORE, AFTER) == fed(started(supplier), BEFORE + AFTER)


def test_a_last_stage_saves_its_frames_and_the_next_window_to_emit():
    processor = started(aggregateToSlidingWindowP((second,), (first,), slidingWinPolicy(10, 10), COUNTING, "w"))
    fed(processor, BEFORE)
    assert saved(processor) == [
        (SnapshotKey(20, "a"), 1), (SnapshotKey(20, "b"), 1), (BroadcastKey(NEXT_WIN_TO_EMIT), 20)
    ]
    assert SnapshotKey(20, "b").partitionKey() == "b"


def test_a_first_stage_emits_its_frames_instead_of_saving_them():
    processor = started(accumulateByFrameP((second,), (first,), slidingWinPolicy(10, 10), COUNTING, "prepare"))
    fed(processor, [(1, "a"), (12, "a"), Watermark(10)])
    assert saved(processor) == [], "nothing, as Jet's"
    assert [(result.end, result.key, result.result) for result in processor.outbox.drainBucket(0)] == [
        (20, "a", 1)
    ]


def test_a_late_event_after_a_restore_is_dropped_as_before():
    supplier = aggregateToSlidingWindowP((second,), (first,), slidingWinPolicy(10, 10), COUNTING, "w")
    processor = started(supplier, [(BroadcastKey(NEXT_WIN_TO_EMIT), 20)])
    fed(processor, [(5, "late")])
    assert processor.lateEventsDropped == 1


def test_two_stages_restored_drop_a_late_event_in_the_last_as_jets():
    policy = slidingWinPolicy(10, 10)
    firstStage = started(accumulateByFrameP((second,), (first,), policy, COUNTING, "prepare"))
    firstStage.outbox.drainBucket(0)
    assert saved(firstStage) == []
    lastStage = started(combineToSlidingWindowP(policy, COUNTING, "w"), [(BroadcastKey(NEXT_WIN_TO_EMIT), 20)])
    restored = started(accumulateByFrameP((second,), (first,), policy, COUNTING, "prepare"), saved(firstStage))
    frames = fed(restored, [(5, "late"), (25, "on time"), Watermark(30)])
    output = fed(lastStage, frames)
    assert [(result.start, result.key, result.result) for result in output[:-1]] == [(20, "on time", 1)]
    assert (restored.lateEventsDropped, lastStage.lateEventsDropped) == (0, 1)


def test_a_first_stage_reads_the_next_window_an_earlier_sparkjet_saved_for_it():
    supplier = accumulateByFrameP((second,), (first,), slidingWinPolicy(10, 10), COUNTING, "prepare")
    processor = started(supplier, [(BroadcastKey(NEXT_WIN_TO_EMIT), 20)])
    fed(processor, [(5, "late"), (25, "on time")])
    assert processor.lateEventsDropped == 1


def test_sessions_cut_by_a_snapshot_are_jets_documented_sessions():
    supplier = SessionWindowP(2, (second,), (first,), COUNTING, "s")
    events = [(time, "k") for time in (0, 1, 4, 8, 9, 10, 15)]
    output = inTwoRuns(supplier, events[:4] + [Watermark(5)], events[4:] + [Watermark(20)])
    assert [(r.start, r.end, r.result) for r in output if not isinstance(r, Watermark)] == [
        (0, 3, 2), (4, 6, 1), (8, 12, 3), (15, 17, 1)
    ]


def test_watermarks_never_go_back_after_a_restore():
    supplier = InsertWatermarksP(EventTimePolicy(first, limitingLag(0), 1, 0, 0))
    processor = started(supplier)
    assert fed(processor, [(50, "x")]) == [Watermark(50), (50, "x")]
    restored = started(supplier, saved(processor))
    assert fed(restored, [(40, "y"), (60, "z")]) == [(40, "y"), Watermark(60), (60, "z")]
