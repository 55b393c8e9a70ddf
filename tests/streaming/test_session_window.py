"""Jet's SessionWindowPTest, ported, and sessions checked against a plain-Python sessionizer."""

import random
from collections import Counter

import pytest

from sparkjet.coredag.api.processor import Outbox, ProcessorContext
from sparkjet.coredag.api.testing import sameItemsAnyOrder, verifyProcessor
from sparkjet.coredag.errors import UserFunctionError
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.session_window import SessionWindowP
from sparkjet.pipeline import AggregateOperations

SESSION_TIMEOUT = 10


def key(entry):
    return entry[0]


def value(entry):
    return entry[1]


def sessions(timeout=SESSION_TIMEOUT, op=None, **options) -> SessionWindowP:
    return SessionWindowP(timeout, (key,), (value,), op or AggregateOperations.counting(), "session-window", **options)


def eventsWithKey(k):
    return [(k, 1), (k, 6), (k, 12), (k, 30), (k, 35), (k, 40)]  # sessions [1, 22) and [30, 50)


def expectedSessions(k):
    return [KeyedWindowResult(1, 22, k, 3), KeyedWindowResult(30, 50, k, 3)]


@pytest.mark.parametrize("keys", [["a"], ["a", "b", "c"]], ids=["one key", "three keys"])
@pytest.mark.parametrize("seed", [None, 1, 2, 3], ids=["ordered", "shuffled-1", "shuffled-2", "shuffled-3"])
def test_events_in_any_order_give_the_same_sessions(keys, seed):
    events = [event for k in keys for event in eventsWithKey(k)]
    if seed is not None:
        random.Random(seed).shuffle(events)
    expected = [result for k in keys for result in expectedSessions(k)] + [Watermark(100)]
    verifyProcessor(sessions()).input(events + [Watermark(100)]).expectOutput(expected).outputChecker(
        sameItemsAnyOrder
    ).verify()


def test_batch_processing_flushes_everything_in_complete():
    verifyProcessor(sessions()).input(eventsWithKey("a") + [Watermark(25)]).expectOutput(
        [KeyedWindowResult(1, 22, "a", 3), Watermark(25), KeyedWindowResult(30, 50, "a", 3)]
    ).verify()


def test_late_event_is_dropped_and_counted():
    verifyProcessor(sessions()).input([Watermark(20), ("key", 19)]).expectOutput([Watermark(20)]).verify()
    processor = sessions()()
    processor.init(Outbox(1, None), ProcessorContext("session-window", 0, 1))
    processor.tryProcessWatermark(Watermark(20))
    processor.tryProcess0(("key", 19))
    assert processor.lateEventsDropped == 1 and not processor.keyToWindows


def test_sessions_that_touch_are_not_merged():
    verifyProcessor(sessions()).input([("key", 0), ("key", 10)]).expectOutput(
        [KeyedWindowResult(0, 10, "key", 1), KeyedWindowResult(10, 20, "key", 1)]
    ).verify()


def test_an_event_bridging_two_sessions_merges_them():
    verifyProcessor(sessions()).input([("k", 0), ("k", 15), ("k", 8)]).expectOutput(
        [KeyedWindowResult(0, 25, "k", 3)]
    ).verify()


def test_state_is_empty_after_the_last_session_closes():
    processor = sessions()()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("session-window", 0, 1))
    for event in eventsWithKey("a") + eventsWithKey("b"):
        processor.tryProcess0(event)
    processor.tryProcessWatermark(Watermark(100))
    assert not processor.keyToWindows and not processor.deadlineToKeys


def plainSessions(events, timeout):
    """{(key, start, end): count}: each key's sorted timestamps split where the gap reaches the timeout."""
    result = Counter()
    for k in {key for key, _ in events}:
        stamps = sorted(t for kk, t in events if kk == k)
        start = last = stamps[0]
        count = 0
        for t in stamps:
            if t >= last + timeout:
                result[(k, start, last + timeout)] = count
                start, count = t, 0
            last = max(last, t)
            count += 1
        result[(k, start, last + timeout)] = count
    return result


@pytest.mark.parametrize("seed", range(5))
def test_sessions_equal_a_plain_sessionizer(seed):
    rng = random.Random(seed)
    events = [(rng.choice("xyz"), rng.randrange(0, 300)) for _ in range(200)]
    rng.shuffle(events)
    processor = sessions(timeout=7)()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("session-window", 0, 1))
    for event in events:
        processor.tryProcess0(event)
    processor.complete()
    results = outbox.drainBucket(0)
    assert Counter({(r.key, r.start, r.end): r.result for r in results}) == plainSessions(events, 7)
    assert len(results) == len(plainSessions(events, 7))


def test_early_results_then_final_ones():
    now = [0]
    supplier = sessions(earlyResultsPeriod=50, clock=lambda: now[0])
    processor = supplier()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("session-window", 0, 1))
    processor.tryProcess0(("k", 1))
    now[0] = 50
    assert processor.tryProcess() and outbox.drainBucket(0) == [KeyedWindowResult(1, 11, "k", 1, True)]
    processor.tryProcessWatermark(Watermark(20))
    assert outbox.drainBucket(0) == [KeyedWindowResult(1, 11, "k", 1), Watermark(20)]


def test_session_windows_need_a_combine():
    noCombine = AggregateOperation(int, lambda acc, item: acc + 1)
    with pytest.raises(ValueError, match="combineFn is required for session windows"):
        sessions(op=noCombine)


def test_a_float_timestamp_fails_naming_the_stage_the_function_and_the_item():
    processor = sessions()()
    processor.init(Outbox(1, None), ProcessorContext("session-window", 0, 1))
    with pytest.raises(
        UserFunctionError,
        match=r"^Stage 'session-window' failed on item \('a', 1.5\): TypeError: timestampFn value \(defined at "
        r"test_session_window.py:\d+\) returned 1.5 \(float\), but an event's timestamp is an int of epoch milliseconds",
    ):
        processor.tryProcess0(("a", 1.5))
