"""Jet's WatermarkCoalescer_IntegrationTest, ported: a hand-built Core DAG whose sources emit
watermarks (no supplier declares it) into one processor, over two edges or two queues of one
edge; the processor turns each watermark it observes into a string.

Jet's sources without ``DONE_ITEM`` never complete; a batch job's sources must, so each list
here ends its source: a queue done after its last watermark lets through only what it held
back, and every expected value is Jet's. Jet's delays between items are kept: its source waits
by returning False from ``complete()`` until the delay has passed, which the tasklet idles
through as Jet's does, however many calls that takes."""

import time

import attrs
import pytest

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, Watermark
from sparkjet.coredag.processors.sinks import ListSinkP

pytestmark = pytest.mark.spark

DONE_ITEM = "DONE_ITEM"


@attrs.frozen
class Delay:
    """Jet's ``ListSource.Delay``: the source emits its next item once ``millis`` have passed."""

    millis: int


class ListSource(AbstractProcessor):
    """Jet's ListSource: emits its list (processor i: list i of several), up to ``DONE_ITEM`` or
    the end; at a ``Delay`` its ``complete()`` returns False, emitting nothing, until it has passed."""

    def __init__(self, *lists: list) -> None:
        self._lists, self._position, self._nextItemAt = lists, 0, None

    def complete(self) -> bool:
        if self._nextItemAt is not None and time.monotonic() < self._nextItemAt:
            return False
        self._nextItemAt = None
        items = self._lists[self.context.globalProcessorIndex % len(self._lists)]
        while self._position < len(items):
            item = items[self._position]
            if isinstance(item, Delay):
                self._nextItemAt = time.monotonic() + item.millis / 1000
                self._position += 1
                return False
            if isinstance(item, str) and item == DONE_ITEM:
                return True
            if not self.tryEmit(item):
                return False
            self._position += 1
        return True


class MapWatermarksToString(AbstractProcessor):
    """Jet's TestProcessors.MapWatermarksToString(false): items pass, a watermark becomes ``wm(ts)``."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        return True if ordinal is None else self.tryEmit(item)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        return self.tryEmit(f"wm({watermark.timestamp})")


def createDag(mode: str, input1: list, input2: list) -> DAG:
    dag = DAG()
    mapWmToString = dag.newVertex("mapWmToString", MapWatermarksToString, 1)
    sink = dag.newVertex("sink", ListSinkP("sinkList"), 1)
    dag.edge(Edge.between(mapWmToString, sink))
    if mode == "TWO_EDGES":
        edge1 = dag.newVertex("edge1", lambda: ListSource(input1), 1)
        edge2 = dag.newVertex("edge2", lambda: ListSource(input2), 1)
        dag.edge(Edge.from_(edge1).to(mapWmToString, 0)).edge(Edge.from_(edge2).to(mapWmToString, 1))
    else:
        edge = dag.newVertex("edge", lambda: ListSource(input1, input2), 2)
        dag.edge(Edge.between(edge, mapWmToString))
    return dag


def sinkList(jet, dag: DAG) -> list:
    jet.getList("sinkList").clear()
    jet.newJob(dag).join()
    return list(jet.getList("sinkList"))


@pytest.fixture(params=["TWO_EDGES", "TWO_QUEUES"])
def mode(request) -> str:
    return request.param


def wm(timestamp: int) -> Watermark:
    return Watermark(timestamp)


def delay(millis: int) -> Delay:
    return Delay(millis)


def test_when_i1_active_i2_active_then_wm_forwarded_immediately(jet, mode):
    assert sinkList(jet, createDag(mode, [wm(100)], [wm(100)])) == ["wm(100)"]


def test_when_i1_active_i2_idle_then_wm_forwarded_immediately(jet, mode):
    assert sinkList(jet, createDag(mode, [wm(100)], [IDLE_MESSAGE])) == ["wm(100)"]


def test_when_i1_idle_i2_active_then_wm_forwarded_immediately(jet, mode):
    assert sinkList(jet, createDag(mode, [IDLE_MESSAGE], [wm(100)])) == ["wm(100)"]


def test_when_i1_idle_i2_idle_then_idle_message_forwarded_immediately(jet, mode):
    # the idle message is not presented to the processor
    assert sinkList(jet, createDag(mode, [IDLE_MESSAGE], [IDLE_MESSAGE])) == []


def test_when_waiting_for_wm_on_i2_but_i2_becomes_done_then_wm_from_i1_forwarded(jet, mode):
    assert sinkList(jet, createDag(mode, [wm(100)], [delay(500), DONE_ITEM])) == ["wm(100)"]


def test_when_multiple_wm_then_all_forwarded(jet, mode):
    assert sinkList(jet, createDag(mode, [wm(100), delay(500), wm(101)], [wm(100), delay(500), wm(101)])) == ["wm(100)", "wm(101)"]
