"""Jet's InsertWatermarksPTest, ported to verifyProcessor: the ``add-timestamps`` processor."""

import attrs
import pytest

from sparkjet.coredag import AbstractProcessor
from sparkjet.coredag.api.processor import Outbox, ProcessorContext
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.errors import ProcessorContractError, SourceLocation, StageName, UserFunctionError
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, limitingLag
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, Watermark
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from tests.streaming.test_event_time_mapper import FakeClock, ns

LAG = 3


@attrs.frozen
class Item:
    timestamp: int


def timestampOf(item: Item) -> int:
    return item.timestamp


def items(*timestamps):
    return [Item(t) for t in timestamps]


def wm(timestamp):
    return Watermark(timestamp)


def insertWatermarks(lag=LAG, throttling=1, idleTimeoutMillis=0, clock=FakeClock()):
    return InsertWatermarksP(EventTimePolicy(timestampOf, limitingLag(lag), throttling, 0, idleTimeoutMillis), clock)


CASES = {
    "many events, one wm": (dict(), items(10, 10), [wm(7), Item(10), Item(10)]),
    "events increase, wm increases": (dict(), items(10, 11), [wm(7), Item(10), wm(8), Item(11)]),
    "events decrease, one wm": (dict(), items(11, 10), [wm(8), Item(11), Item(10)]),
    "late event not dropped": (dict(), items(11, 7), [wm(8), Item(11), Item(7)]),
    "gap between events, one wm": (dict(), items(10, 13), [wm(7), Item(10), wm(10), Item(13)]),
    "zero lag": (dict(lag=0), items(10, 13), [wm(10), Item(10), wm(13), Item(13)]),
    "by frame, events increase": (
        dict(throttling=2), items(10, 11, 12, 13), [wm(6), Item(10), wm(8), Item(11), Item(12), wm(10), Item(13)]
    ),
    "by frame, starting at the verge of a frame": (
        dict(throttling=2), items(11, 12, 13, 14), [wm(8), Item(11), Item(12), wm(10), Item(13), Item(14)]
    ),
    "by frame, events not at the verge": (
        dict(throttling=10), items(14, 15, 24), [wm(10), Item(14), Item(15), wm(20), Item(24)]
    ),
    "by frame, a gap gives a gap in wms": (dict(throttling=2), items(11, 15), [wm(8), Item(11), wm(12), Item(15)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_insert_watermarks_as_jets_test(name):
    options, inputs, expected = CASES[name]
    verifyProcessor(insertWatermarks(**options)).input(inputs).expectOutput(expected).verify()


def test_idle_timeout_then_idle_message_after_the_timeout():
    clock = FakeClock()
    processor = insertWatermarks(idleTimeoutMillis=100, clock=clock)()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("add-timestamps", 0, 1))
    assert processor.tryProcess0(Item(10))
    assert outbox.drainBucket(0) == [wm(10 - LAG), Item(10)]
    clock.now = ns(99)
    assert processor.tryProcess() and outbox.drainBucket(0) == []
    clock.now = ns(100)
    assert processor.tryProcess() and outbox.drainBucket(0) == [IDLE_MESSAGE]
    assert processor.tryProcess() and outbox.drainBucket(0) == []


class Doubler(AbstractProcessor):
    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item * 2)


def test_abstract_processor_forwards_watermarks_in_place_by_default():
    verifyProcessor(Doubler).input([1, wm(5), 2, 3, wm(9)]).expectOutput([2, wm(5), 4, 6, wm(9)]).verify()


class SwallowsWatermarks(AbstractProcessor):
    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item)

    def tryProcessWatermark(self, watermark) -> bool:
        return True


def test_a_processor_may_consume_watermarks():
    verifyProcessor(SwallowsWatermarks).input([1, wm(5), 2]).expectOutput([1, 2]).verify()


def test_a_bare_processor_that_gets_a_watermark_names_what_it_lacks():
    from sparkjet.coredag.api.processor import Processor

    with pytest.raises(ProcessorContractError, match=r"Processor received Watermark\(5\) but does not implement tryProcessWatermark"):
        Processor().tryProcessWatermark(wm(5))


# a timestamp function's failure names the stage, the function and the item


def secondsOf(item: dict):
    return item["seconds"]


def stamping() -> InsertWatermarksP:
    return InsertWatermarksP(EventTimePolicy(secondsOf, limitingLag(LAG), 1, 0, 0), FakeClock())


def failureOf(vertexName: str, item: object) -> UserFunctionError:
    processor = stamping()()
    processor.init(Outbox(1, None), ProcessorContext(vertexName, 0, 1))
    with pytest.raises(UserFunctionError) as raised:
        processor.tryProcess0(item)
    return raised.value


def test_a_float_timestamp_fails_naming_the_stage_the_function_and_the_item():
    error = failureOf(StageName("events-add-timestamps", SourceLocation("/jobs/job.py", 12)), {"seconds": 1.5})
    line = secondsOf.__code__.co_firstlineno
    assert str(error) == (
        "Stage 'events-add-timestamps' (defined at job.py:12) failed on item {'seconds': 1.5}: TypeError: timestampFn "
        f"secondsOf (defined at test_insert_watermarks.py:{line}) returned 1.5 (float), but an event's timestamp is "
        "an int of epoch milliseconds (Jet's long): return int(seconds * 1000) for seconds as time.time() gives them"
    )


def test_a_timestamp_function_that_raises_fails_naming_the_stage_and_the_item():
    error = failureOf("add-timestamps", {"millis": 1500})
    assert str(error) == "Stage 'add-timestamps' failed on item {'millis': 1500}: KeyError: 'seconds'"
