"""Jet's SlidingWindowPTest, SlidingWindowP_twoStageSnapshotTest, SlidingWindowP_CoGroupTest and
SlidingWindowPolicyTest, ported; then windows checked against a plain-Python count per window,
one stage and two, with and without deduct, late events excluded."""

import contextlib
import operator
import random
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone

import pytest

from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessingGuarantee, ProcessorContext
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.errors import UserFunctionError
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.timestamp_kind import TimestampKind
from sparkjet.coredag.model.sliding_window_policy import SlidingWindowPolicy, slidingWinPolicy, tumblingWinPolicy
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult, WindowResult, toLocalTime, windowResult
from sparkjet.coredag.processors.sliding_window import (
    accumulateByFrameP,
    aggregateToSlidingWindowP,
    combineToSlidingWindowP,
)
from sparkjet.pipeline import AggregateOperations

KEY = 77


def addValue(acc, item):
    return acc + item[1]


def summingValues(hasDeduct: bool) -> AggregateOperation:
    return AggregateOperation(int, addValue, operator.add, operator.sub if hasDeduct else None)


def constantKey(item):
    return KEY


def first(item):
    return item[0]


def wm(timestamp):
    return Watermark(timestamp)


MODES = [(True, True), (True, False), (False, True), (False, False)]
MODE_IDS = ["deduct-one-stage", "deduct-two-stage", "no-deduct-one-stage", "no-deduct-two-stage"]


class Case:
    """One of Jet's parameter combinations: its supplier, events and expected frames."""

    def __init__(self, hasDeduct: bool, singleStage: bool) -> None:
        self.singleStage = singleStage
        policy, op = slidingWinPolicy(4, 1), summingValues(hasDeduct)
        self.supplier = (
            aggregateToSlidingWindowP((constantKey,), (first,), policy, op, "sliding-window")
            if singleStage
            else combineToSlidingWindowP(policy, op, "sliding-window")
        )

    def event(self, frameTs: int, value: int):
        """An event of frame ``frameTs``: one stage, its time is ``frameTs - 1``; two, a frame result."""
        return (frameTs - 1, value) if self.singleStage else KeyedWindowResult(frameTs - 4, frameTs, KEY, value)


def outboxFrame(ts: int, value: int) -> KeyedWindowResult:
    return KeyedWindowResult(ts - 4, ts, KEY, value)


@pytest.fixture(params=MODES, ids=MODE_IDS)
def case(request) -> Case:
    return Case(*request.param)


def test_no_frames_received_then_only_the_watermark(case):
    verifyProcessor(case.supplier).input([wm(1)]).expectOutput([wm(1)]).verify()


def test_smoke(case):
    verifyProcessor(case.supplier).input([case.event(0, 1), wm(3)]).expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 1), outboxFrame(2, 1), outboxFrame(3, 1), wm(3)]
    ).verify()


ASCENDING_OUTPUT = [
    outboxFrame(0, 1), wm(0), outboxFrame(1, 2), wm(1), outboxFrame(2, 3), wm(2), outboxFrame(3, 4), wm(3),
    outboxFrame(4, 4), wm(4), outboxFrame(5, 3), wm(5), outboxFrame(6, 2), wm(6), outboxFrame(7, 1), wm(7),
]


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]], ids=["ascending", "descending"])
def test_timestamps_in_any_order_then_windows_ascending(case, order):
    events = [case.event(ts, 1) for ts in order]
    verifyProcessor(case.supplier).input(events + [wm(t) for t in range(8)]).expectOutput(ASCENDING_OUTPUT).verify()


def test_random_timestamps_then_windows_ascending(case):
    timestamps = list(range(100))
    random.Random(3).shuffle(timestamps)
    inputs = [case.event(ts, 1) for ts in timestamps] + [wm(t) for t in range(106)]
    expected = [outboxFrame(0, 1), wm(0), outboxFrame(1, 2), wm(1), outboxFrame(2, 3), wm(2), outboxFrame(3, 4), wm(3)]
    for ts in range(4, 100):
        expected += [outboxFrame(ts, 4), wm(ts)]
    expected += [outboxFrame(100, 3), wm(100), outboxFrame(101, 2), wm(101), outboxFrame(102, 1), wm(102)]
    expected += [wm(103), wm(104), wm(105)]
    verifyProcessor(case.supplier).input(inputs).expectOutput(expected).verify()


def test_no_watermark_then_complete_emits_everything(case):
    verifyProcessor(case.supplier).input([case.event(0, 1), case.event(1, 1)]).expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 2), outboxFrame(2, 2), outboxFrame(3, 2), outboxFrame(4, 1)]
    ).verify()


def test_late_events_are_dropped_and_counted(case):
    inputs = [wm(10), case.event(7, 1), case.event(8, 1), case.event(9, 1), case.event(10, 1), case.event(11, 123)]
    expected = [wm(10), outboxFrame(11, 123), outboxFrame(12, 123), outboxFrame(13, 123), outboxFrame(14, 123)]
    verifyProcessor(case.supplier).input(inputs).expectOutput(expected).verify()
    processor = case.supplier()
    processor.init(Outbox(1, None), ProcessorContext("sliding-window", 0, 1))
    for item in inputs[1:5]:
        processor.tryProcess0(item)
    assert processor.lateEventsDropped == 0  # no watermark yet: nothing is late
    processor.tryProcessWatermark(wm(10))
    for item in inputs[1:]:
        processor.tryProcess0(item)
    assert processor.lateEventsDropped == 4


def test_a_float_timestamp_fails_naming_the_stage_the_function_and_the_item():
    processor = aggregateToSlidingWindowP((second,), (first,), tumblingWinPolicy(10), counting(), "w")()
    processor.init(Outbox(1, None), ProcessorContext("w", 0, 1))
    with pytest.raises(
        UserFunctionError,
        match=r"^Stage 'w' failed on item \(1.5, 'a'\): TypeError: timestampFn first \(defined at "
        r"test_sliding_window.py:\d+\) returned 1.5 \(float\), but an event's timestamp is an int of epoch milliseconds",
    ):
        processor.tryProcess0((1.5, "a"))


# two stages cut by a snapshot (Jet's SlidingWindowP_twoStageSnapshotTest): the first stage flushes
# its frames downstream and saves nothing


def twoStageSnapshotSuppliers():
    policy = slidingWinPolicy(4, 1)
    return (
        accumulateByFrameP((constantKey,), (first,), policy, summingValues(True), "sliding-window-prepare"),
        combineToSlidingWindowP(policy, summingValues(True), "sliding-window"),
    )


def exactlyOnceStarted(supplier, outbox: Outbox):
    processor = supplier()
    processor.init(outbox, ProcessorContext("v", 0, 1, processingGuarantee=ProcessingGuarantee.EXACTLY_ONCE))
    return processor


def processStage2(stage2, stage1Outboxes) -> None:
    inbox = Inbox([item for outbox in stage1Outboxes for item in outbox.drainBucket(0) if not isinstance(item, Watermark)])
    stage2.process(0, inbox)
    assert inbox.isEmpty()


def assertEmptyState(processor) -> None:
    assert processor.tsToKeyToAcc == {}, f"tsToKeyToAcc is not empty: {processor.tsToKeyToAcc}"
    assert not processor.slidingWindow, f"slidingWindow is not empty: {processor.slidingWindow}"


@pytest.mark.parametrize("simulateRestore", [True, False], ids=["simulateRestore", "kept"])
def test_a_first_stage_flushes_its_frames_downstream_instead_of_saving_anything(simulateRestore):
    stage1Supplier, stage2Supplier = twoStageSnapshotSuppliers()
    stage1Outboxes, stage2Outbox = [Outbox(1, 128), Outbox(1, 128)], Outbox(1, 128)
    stage1 = [exactlyOnceStarted(stage1Supplier, outbox) for outbox in stage1Outboxes]
    stage2 = exactlyOnceStarted(stage2Supplier, stage2Outbox)
    assert stage1[0].tryProcess(0, (1, 1)) and stage1[1].tryProcess(0, (2, 2))  # an item's time is its first
    assert stage1Outboxes[0].isEmpty() and stage2Outbox.isEmpty()

    assert stage1[0].saveToSnapshot() and stage1[1].saveToSnapshot()
    assert [outbox.drainSnapshotBucket() for outbox in stage1Outboxes] == [[], []], "something put to snapshot in stage1"
    for processor in stage1:
        assertEmptyState(processor)
    processStage2(stage2, stage1Outboxes)
    if simulateRestore:
        stage1Outboxes = [Outbox(1, 128), Outbox(1, 128)]
        stage1 = [exactlyOnceStarted(stage1Supplier, outbox) for outbox in stage1Outboxes]

    assert stage1[0].tryProcess(0, (3, 3)) and stage1[0].tryProcess(0, (4, 4))
    assert stage1[0].tryProcessWatermark(wm(10)) and stage1[1].tryProcessWatermark(wm(10))
    processStage2(stage2, stage1Outboxes)
    assert stage2.tryProcessWatermark(wm(10))

    assert stage2Outbox.drainBucket(0) == [
        outboxFrame(2, 1), outboxFrame(3, 3), outboxFrame(4, 6), outboxFrame(5, 10), outboxFrame(6, 9),
        outboxFrame(7, 7), outboxFrame(8, 4), wm(10),
    ]
    for processor in stage1 + [stage2]:
        assertEmptyState(processor)


# a co-aggregation of two inputs in one stage (Jet's SlidingWindowP_CoGroupTest)


def entryKey(entry):
    return entry[0]


def inFrameOne(entry):
    return 1


def coGroupResult(winEnd, key, result1, result2) -> str:
    return f"({winEnd:03d}, {key}: {result1}, {result2})"


def coGroupOutput(start, end, key, result, isEarly) -> str:
    return coGroupResult(end, key, *result)


def test_a_co_aggregation_of_two_inputs_in_one_stage():
    supplier = aggregateToSlidingWindowP(
        (entryKey, entryKey), (inFrameOne, inFrameOne), tumblingWinPolicy(1),
        AggregateOperations.aggregateOperation2(AggregateOperations.toList(), AggregateOperations.toList()),
        "sliding-window", coGroupOutput, timestampKind=TimestampKind.FRAME,
    )
    entry1, entry2, entry3, entry4, entry5 = ("k1", "a"), ("k2", "b"), ("k1", "c"), ("k3", "d"), ("k1", "e")
    verifyProcessor(supplier).inputs([[entry1, entry2], [entry3, entry4, entry5]]).expectOutput([
        coGroupResult(1, "k1", [entry1], [entry3, entry5]),
        coGroupResult(1, "k2", [entry2], []),
        coGroupResult(1, "k3", [], [entry4]),
    ]).verify()


# SlidingWindowPolicy (Jet's SlidingWindowPolicyTest)


def test_floor_and_higher_frame_timestamps_with_an_offset():
    policy = SlidingWindowPolicy(4, 1, 1)
    assert [policy.floorFrameTs(t) for t in (-5, -4, -3, 0, 1, 2, 4, 5)] == [-7, -7, -3, -3, 1, 1, 1, 5]
    assert [policy.higherFrameTs(t) for t in (-4, -3, 0, 1, 4, 5)] == [-3, 1, 1, 5, 5, 9]


def test_window_policies_check_their_arguments_with_jets_messages():
    with pytest.raises(ValueError, match="windowSize must be an integer multiple of slideBy"):
        slidingWinPolicy(10, 3)
    with pytest.raises(ValueError, match="frameOffset must be less than frameSize, offset=4, size=4"):
        SlidingWindowPolicy(4, 4, 1)
    assert tumblingWinPolicy(5).isTumbling() and slidingWinPolicy(10, 5).windowSize == 10


# results


def test_results_print_as_jets():
    result = KeyedWindowResult(0, 10, "a", 3)
    assert str(result) == f"KeyedWindowResult{{start={toLocalTime(0)}, end={toLocalTime(10)}, key='a', value='3', isEarly=false}}"
    assert windowResult(0, 10, "ignored", 3, True) == WindowResult(0, 10, 3, True)
    assert toLocalTime(0).count(":") >= 1 and toLocalTime(10).endswith(".010")


# against plain Python


def countsPerWindow(events, size, slide, lateBefore=None):
    """{(start, end, word): count} of events (timestamp, word), plainly."""
    counts = Counter()
    for timestamp, word in events:
        if lateBefore is not None and timestamp < lateBefore:
            continue
        lastStart = timestamp - timestamp % slide
        for start in range(lastStart, timestamp - size, -slide):
            counts[(start, start + size, word)] += 1
    return counts


def counting() -> AggregateOperation:
    return AggregateOperation(int, lambda acc, item: acc + 1, operator.add, operator.sub)


def countingWithoutDeduct() -> AggregateOperation:
    return AggregateOperation(int, lambda acc, item: acc + 1, operator.add)


def second(item):
    return item[1]


def run(supplier, items) -> list:
    processor = supplier()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("w", 0, 1))
    for item in items:
        (processor.tryProcessWatermark if isinstance(item, Watermark) else processor.tryProcess0)(item)
    processor.complete()
    return outbox.drainBucket(0)


@pytest.mark.parametrize("size, slide", [(10, 10), (12, 4), (9, 3)])
@pytest.mark.parametrize("op", [counting, countingWithoutDeduct], ids=["deduct", "no-deduct"])
def test_windows_equal_a_plain_count_in_one_stage_and_in_two(size, slide, op):
    rng = random.Random(size * 31 + slide)
    events = [(rng.randrange(0, 100), rng.choice("abc")) for _ in range(300)]
    events.sort(key=first)
    shuffled = [event for _, event in sorted((t + rng.randrange(5), e) for t, e in ((e[0], e) for e in events))]
    items = []
    for index, event in enumerate(shuffled):
        items.append(event)
        if index % 50 == 49:
            items.append(Watermark(event[0] - 6))  # behind every event still to come
    policy = slidingWinPolicy(size, slide)
    oneStage = run(aggregateToSlidingWindowP((second,), (first,), policy, op(), "w"), items)
    frames = run(accumulateByFrameP((second,), (first,), policy, op(), "w-prepare"), items)
    twoStage = run(combineToSlidingWindowP(policy, op(), "w"), frames)
    expected = countsPerWindow(events, size, slide)
    for output in (oneStage, twoStage):
        results = [item for item in output if not isinstance(item, Watermark)]
        assert Counter({(r.start, r.end, r.key): r.result for r in results}) == expected
        assert len(results) == len(expected)


def test_late_events_are_left_out_of_the_windows():
    events = [(5, "a"), (25, "a"), (3, "a"), (26, "b")]
    items = [events[0], events[1], Watermark(20), events[2], events[3]]
    output = run(aggregateToSlidingWindowP((second,), (first,), tumblingWinPolicy(10), counting(), "w"), items)
    results = defaultdict(int)
    for item in output:
        if not isinstance(item, Watermark):
            results[(item.start, item.key)] += item.result
    assert dict(results) == {(0, "a"): 1, (20, "a"): 1, (20, "b"): 1}


def test_early_results_then_one_final_result():
    now = [0]
    supplier = aggregateToSlidingWindowP(
        (second,), (first,), tumblingWinPolicy(10), counting(), "w", earlyResultsPeriod=100, clock=lambda: now[0]
    )
    processor = supplier()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("w", 0, 1))
    processor.tryProcess0((1, "a"))
    assert processor.tryProcess() and outbox.drainBucket(0) == []  # the period has not passed
    now[0] = 100
    assert processor.tryProcess() and outbox.drainBucket(0) == [KeyedWindowResult(0, 10, "a", 1, True)]
    processor.tryProcess0((2, "a"))
    processor.tryProcessWatermark(Watermark(10))
    assert outbox.drainBucket(0) == [KeyedWindowResult(0, 10, "a", 2, False), Watermark(10)]
    now[0] = 300
    assert processor.tryProcess() and outbox.drainBucket(0) == []  # nothing open any more


# far apart in time: windows without a frame are skipped, not walked

YEAR_3000 = int(datetime(3000, 1, 1, tzinfo=timezone.utc).timestamp() * 1000)
FAR_APART = [(5, "a"), (1500, "b"), (2999, "a"), (YEAR_3000 + 7, "a"), (YEAR_3000 + 1001, "b")]


@contextlib.contextmanager
def callBudget(limit: int = 50_000):
    """Fail once the code inside makes more than ``limit`` calls: walking the 3e10 empty windows
    between now and the year 3000 would take hours."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event in ("call", "c_call")
        if calls > limit:
            raise AssertionError(f"more than {limit} calls: the windows without a frame were walked")

    sys.setprofile(count)
    try:
        yield
    finally:
        sys.setprofile(None)


def windowCounts(output: list) -> Counter:
    results = [item for item in output if not isinstance(item, Watermark)]
    assert len(results) == len({(r.start, r.end, r.key) for r in results})
    return Counter({(r.start, r.end, r.key): r.result for r in results})


@pytest.mark.parametrize("size, slide", [(1000, 1000), (3000, 1000)], ids=["tumbling", "sliding"])
@pytest.mark.parametrize("op", [counting, countingWithoutDeduct], ids=["deduct", "no-deduct"])
@pytest.mark.parametrize(
    "before, after", [([0], [YEAR_3000 + 5000]), ([], []), ([], [YEAR_3000 + 1500])],
    ids=["wm-0-then-3000", "no-wm", "wm-3000"],
)
def test_an_event_in_the_year_3000_is_one_window_not_a_walk_to_it(size, slide, op, before, after):
    policy = slidingWinPolicy(size, slide)
    watermarks = [Watermark(timestamp) for timestamp in before + after]
    items = FAR_APART[:3] + watermarks[: len(before)] + FAR_APART[3:] + watermarks[len(before):]
    with callBudget():
        oneStage = run(aggregateToSlidingWindowP((second,), (first,), policy, op(), "w"), items)
        frames = run(accumulateByFrameP((second,), (first,), policy, op(), "w-prepare"), items)
        twoStage = run(combineToSlidingWindowP(policy, op(), "w"), frames)
    expected = countsPerWindow(FAR_APART, size, slide)
    assert windowCounts(oneStage) == expected and windowCounts(twoStage) == expected
    assert [item for item in oneStage if isinstance(item, Watermark)] == watermarks


def test_a_jump_to_the_year_3000_verifies_with_snapshots_after_every_item(case):
    inputs = [case.event(1, 1), wm(0), case.event(YEAR_3000, 2), wm(YEAR_3000 + 3)]
    expected = [wm(0)] + [outboxFrame(ts, 1) for ts in range(1, 5)]
    expected += [outboxFrame(YEAR_3000 + ts, 2) for ts in range(4)] + [wm(YEAR_3000 + 3)]
    with callBudget(500_000):
        verifyProcessor(case.supplier).input(inputs).expectOutput(expected).verify()


def test_early_results_skip_the_windows_without_a_frame():
    now = [0]
    supplier = aggregateToSlidingWindowP(
        (second,), (first,), slidingWinPolicy(2000, 1000), counting(), "w", earlyResultsPeriod=100,
        clock=lambda: now[0],
    )
    processor = supplier()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("w", 0, 1))
    for item in [(5, "a"), Watermark(0), (YEAR_3000 + 7, "a")]:
        (processor.tryProcessWatermark if isinstance(item, Watermark) else processor.tryProcess0)(item)
    outbox.drainBucket(0)
    now[0] = 100
    with callBudget():
        assert processor.tryProcess()
    assert outbox.drainBucket(0) == [
        KeyedWindowResult(start, start + 2000, "a", 1, True) for start in (-1000, 0, YEAR_3000 - 1000, YEAR_3000)
    ]


def test_a_long_window_of_short_slides_combines_only_the_frames_it_holds():
    policy = slidingWinPolicy(20_000, 10)  # 2,000 frames a window, each of 3,000 windows holding one or two
    events = [(5, "a"), (10_000, "b")]
    with callBudget(1_000_000):
        output = run(aggregateToSlidingWindowP((second,), (first,), policy, countingWithoutDeduct(), "w"), events)
    assert windowCounts(output) == countsPerWindow(events, 20_000, 10)
