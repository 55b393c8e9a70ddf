"""A job's figures under Jet's MetricNames, as Jet's ``JobMetrics.get(name)`` gives them:
counts tagged by vertex, shuffled edges by their source vertex and ordinal, a stream
processor's watermarks by vertex and processor. Built from accumulated counts, no Spark."""

from collections import Counter

from sparkjet import Measurement, MetricNames, MetricTags
from sparkjet.coredag import DAG, Edge
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.model.watermark import LONG_MIN
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.processor_state import ProcessorState, processorWatermarks


def dag() -> DAG:
    """``source -> window -> sink``, the window behind a shuffle and with a second input."""
    dag = DAG()
    source = dag.newVertex("source", ItemsP((1, 2)), 2)
    other = dag.newVertex("other", ItemsP((3,)), 1)
    window = dag.newVertex("window", ItemsP(()), 2)
    sink = dag.newVertex("sink", ListSinkP("out"), 1)
    dag.edge(Edge.between(source, window).distributed().partitioned(str))
    dag.edge(Edge.from_(other).to(window, 1)).edge(Edge.between(window, sink))
    return dag


COUNTS = Counter({
    ("itemsIn", "window"): 9, ("itemsOut", "window"): 4, ("lateEventsDropped", "window"): 2,
    ("itemsOut", "source"): 7, ("edgeItems", "source", 0): 7, ("edgeBytes", "source", 0): 300,
})


def values(metrics: JobMetrics, name: str) -> dict:
    return {tuple(sorted(m.tags.items())): m.value() for m in metrics.get(name)}


def test_counts_are_tagged_by_vertex():
    metrics = JobMetrics.of("job", 1.0, dag(), COUNTS, {("source", 0)})
    assert values(metrics, MetricNames.RECEIVED_COUNT)[(("vertex", "window"),)] == 9
    assert values(metrics, MetricNames.EMITTED_COUNT)[(("vertex", "window"),)] == 4
    assert values(metrics, MetricNames.LATE_EVENTS_DROPPED)[(("vertex", "window"),)] == 2
    assert values(metrics, MetricNames.DISTRIBUTED_ITEMS_OUT) == {(("ordinal", "0"), ("vertex", "source")): 7}
    assert values(metrics, MetricNames.DISTRIBUTED_BYTES_OUT) == {(("ordinal", "0"), ("vertex", "source")): 300}


def test_a_stream_processors_watermarks_are_tagged_by_vertex_and_processor():
    states = {
        "source": {0: ProcessorState(emittedWatermarks=(1000,)), 1: ProcessorState()},
        "window": {0: ProcessorState(observedWatermark=900, emittedWatermarks=(800,)), 1: ProcessorState(observedWatermark=700)},
        "sink": {0: ProcessorState(observedWatermark=700)},
    }
    metrics = JobMetrics.of("job", 1.0, dag(), COUNTS, set(), processorWatermarks=processorWatermarks(states))
    assert values(metrics, MetricNames.LAST_FORWARDED_WM) == {
        (("proc", "0"), ("vertex", "source")): 1000, (("proc", "1"), ("vertex", "source")): LONG_MIN,
        (("proc", "0"), ("vertex", "window")): 800, (("proc", "1"), ("vertex", "window")): LONG_MIN,
        (("proc", "0"), ("vertex", "sink")): LONG_MIN,
    }
    assert values(metrics, MetricNames.TOP_OBSERVED_WM)[(("proc", "0"), ("vertex", "window"))] == 900
    assert values(metrics, MetricNames.TOP_OBSERVED_WM)[(("proc", "1"), ("vertex", "window"))] == 700
    assert values(metrics, MetricNames.COALESCED_WM) == {(("ordinal", "0"), ("proc", "0"), ("vertex", "sink")): 700}, (
        "per input only where there is one: a source has none, the window two"
    )


def test_filter_keeps_one_vertex_and_measurements_read_as_jets():
    metrics = JobMetrics.of("job", 1.0, dag(), COUNTS, set()).filter(MetricTags.VERTEX, "window")
    assert {m.tag(MetricTags.VERTEX) for m in metrics.get(MetricNames.RECEIVED_COUNT)} == {"window"}
    assert metrics.metrics() == {MetricNames.RECEIVED_COUNT, MetricNames.EMITTED_COUNT, MetricNames.LATE_EVENTS_DROPPED}
    (received,) = metrics.get(MetricNames.RECEIVED_COUNT)
    assert isinstance(received, Measurement) and received.metric() == "receivedCount" and received.timestamp() > 0
    assert received.tag(MetricTags.PROCESSOR) is None
