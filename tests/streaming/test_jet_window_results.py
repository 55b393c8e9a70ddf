"""Window results as Jet's (issue 27, points 2 and 3): each is an event timed at its window's
last moment, so a window over window results works (Jet's WindowAggregateTest
slidingWindow_cascadingAggregations, ported with its input and expected values, and a windowed
top-N over windowed counts); sinks write a timestamped stage's items, not sparkjet's events."""

from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem
from sparkjet.coredag.api.processor import Outbox, ProcessorContext
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.window_result import KeyedWindowResult, WindowResult
from sparkjet.coredag.processors.sinks import FilesSinkP, ListSinkP, LoggerSinkP
from sparkjet.planner import plan


def first(pair):
    return pair[0]


def second(pair):
    return pair[1]


def entries(i):
    return [("a", f"a{i}"), ("b", f"b{i}")]


def resultOf(windowResult):
    return windowResult.result


def endAndLists(windowResult):
    return windowResult.end, sorted(windowResult.result, key=first)


def cascaded(p: Pipeline, events, perBatch: int):
    """Jet's slidingWindow_cascadingAggregations: per key, sliding windows of 2 by 1 of the
    values listed, then a tumbling window of 1 over those lists."""
    return (
        p.readFrom(TestSources.finiteStream(events, perBatch)).withNativeTimestamps(0)
        .flatMap(entries)
        .groupingKey(first).window(WindowDefinition.sliding(2, 1))
        .aggregate(AggregateOperations.mapping(second, AggregateOperations.toList()))
        .map(resultOf)
        .window(WindowDefinition.tumbling(1))
        .aggregate(AggregateOperations.toList())
        .map(endAndLists)
    )


def test_window_results_are_events_timed_at_their_windows_last_moment():
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream([(0, "x")])).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(4)).aggregate(AggregateOperations.counting())
      .window(WindowDefinition.tumbling(4)).aggregate(AggregateOperations.counting())
      .writeTo(Sinks.noop()))
    dag = plan(p).dag
    keyed, global_ = (dag.getVertex(name).processorSupplier.outputFn for name in ("sliding-window", "sliding-window-2"))
    assert keyed(0, 4, "x", 1, False) == JetEvent(3, KeyedWindowResult(0, 4, "x", 1))
    assert global_(4, 8, None, 2, True) == JetEvent(7, WindowResult(4, 8, 2, True))


@pytest.mark.spark
def test_a_window_over_window_results_gives_jets_cascading_aggregations(jet):
    p = Pipeline.create()
    cascaded(p, [(i, i) for i in (0, 1, 2)], 1).writeTo(Sinks.list("cascaded"))
    jet.newJob(p).join()
    assert sorted(jet.getList("cascaded")) == [
        (1, [["a0"], ["b0"]]),
        (2, [["a0", "a1"], ["b0", "b1"]]),
        (3, [["a1", "a2"], ["b1", "b2"]]),
        (4, [["a2"], ["b2"]]),
    ]


WORDS = [(time, word) for time, word in enumerate("ant bee ant cat ant ant dog cat cat cat bee dog dog ant dog".split())]
SIZE = 5


def countOf(result):
    return result.result


@pytest.mark.spark
def test_a_windowed_top_n_over_windowed_counts_equals_a_plain_count(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(WORDS, 4)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(SIZE)).aggregate(AggregateOperations.counting())
      .window(WindowDefinition.tumbling(SIZE)).aggregate(AggregateOperations.topN(1, countOf))
      .writeTo(Sinks.list("top")))
    jet.newJob(p).join()
    counts = Counter((time - time % SIZE, word) for time, word in WORDS)
    expected = {
        start: max((count, word) for (begin, word), count in counts.items() if begin == start)
        for start in {start for start, _ in counts}
    }
    top = jet.getList("top")
    assert all(isinstance(result, WindowResult) for result in top)
    assert {r.start: (r.result[0].result, r.result[0].key) for r in top} == expected


@pytest.mark.spark
def test_a_sink_of_several_timestamped_streams_writes_their_items(jet):
    p = Pipeline.create()
    clicks = p.readFrom(TestSources.finiteStream([(1, "ann"), (5, "bob")])).withNativeTimestamps(0)
    views = p.readFrom(TestSources.finiteStream([(2, "cid")])).withNativeTimestamps(0)
    p.writeTo(Sinks.list("both"), clicks, views)
    clicks.groupingKey(wholeItem()).window(WindowDefinition.tumbling(4)).distinct().writeTo(Sinks.list("distinct"))
    jet.newJob(p).join()
    assert sorted(jet.getList("both")) == ["ann", "bob", "cid"]
    assert sorted(jet.getList("distinct"), key=lambda r: r.start) == [
        KeyedWindowResult(0, 4, "ann", "ann"), KeyedWindowResult(4, 8, "bob", "bob")
    ]


def test_a_timestamped_stage_feeds_its_sink_directly_as_in_jets_plans():
    p = Pipeline.create()
    stream = p.readFrom(TestSources.finiteStream([(1, "a")])).withNativeTimestamps(0)
    stream.writeTo(Sinks.list("items"))
    stream.map(str.upper).writeTo(Sinks.list("upper"))
    dag = plan(p).dag
    assert sorted(vertex.name for vertex in dag.vertices()) == [
        "finiteStream", "finiteStream-add-timestamps", "listSink(items)", "listSink(upper)", "map"
    ]
    assert [edge.sourceName for edge in dag.getInboundEdges("listSink(items)")] == ["finiteStream-add-timestamps"]


@pytest.mark.parametrize(
    ("supplier", "written"),
    [(ListSinkP("l"), ["x", ("y", 1)]), (FilesSinkP("/tmp/never-written"), ["x", "('y', 1)"])],
    ids=["list", "files"],
)
def test_sinks_write_an_events_item_in_both_loops(supplier, written):
    items = [JetEvent(3, "x"), ("y", 1)]
    context = ProcessorContext("sink", 0, 1)
    assert [line for batch in supplier.batchFunction(context)(iter([items])) for line in batch] == written
    processor = supplier()
    processor.init(Outbox(1, None), context)
    for item in items:
        assert processor.tryProcess(0, item)
    assert processor.outbox.drainBucket(0) == written


def test_a_logger_sink_logs_an_events_item(caplog):
    processor = LoggerSinkP()()
    with caplog.at_level("INFO"):
        processor.init(Outbox(1, None), ProcessorContext("log", 0, 1))
        assert processor.tryProcess(0, JetEvent(3, "x"))
    assert [record.getMessage() for record in caplog.records] == ["x"]
