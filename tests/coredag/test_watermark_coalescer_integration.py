"""Jet's WatermarkCoalescer_IntegrationTest, ported: a hand-built Core DAG whose sources emit
watermarks (no supplier declares it) into one processor, over two edges or two queues of one
edge; the processor turns each watermark it observes into a string.

Jet's sources without ``DONE_ITEM`` never complete; a batch job's sources must, so each list
here ends its source: a queue done after its last watermark lets through only what it held
back, and every expected value is Jet's. Jet's delays between items are left out: Spark runs
a source to its end, and each queue keeps its order whatever the timing."""

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, Watermark
from sparkjet.coredag.processors.sinks import ListSinkP

pytestmark = pytest.mark.spark

DONE_ITEM = "DONE_ITEM"


class ListSource(AbstractProcessor):
    """Emits its list (processor i: list i of several), up to ``DONE_ITEM`` or the end."""

    def __init__(self, *lists: list) -> None:
        self._lists, self._pending = lists, None

    def complete(self) -> bool:
        if self._pending is None:
            items = self._lists[self.context.globalProcessorIndex % len(self._lists)]
            self._pending = iter(items[: items.index(DONE_ITEM)] if DONE_ITEM in items else items)
        return self.emitFromTraverser(self._pending)


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
    assert sinkList(jet, createDag(mode, [wm(100)], [DONE_ITEM])) == ["wm(100)"]


def test_when_multiple_wm_then_all_forwarded(jet, mode):
    assert sinkList(jet, createDag(mode, [wm(100), wm(101)], [wm(100), wm(101)])) == ["wm(100)", "wm(101)"]
