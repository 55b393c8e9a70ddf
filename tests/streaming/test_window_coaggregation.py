"""Windows over several streams (Jet's aggregate2, aggregate3, aggregateBuilder on windowed
stages) and a window's distinct items (a WindowResult each, as Jet's): plans with an input per
stream, each partitioned by its own key, and results equal to a plain count per window and key."""

from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem
from sparkjet.coredag.model.window_result import WindowResult
from sparkjet.pipeline.errors import PipelineError
from sparkjet.planner import plan

CLICKS = [(time, user) for time, user in enumerate("ann bob ann cid ann bob dan ann".split())]
VIEWS = [(time * 2, user) for time, user in enumerate("bob bob cid ann eve".split())]
SIZE = 4


def perWindow(events) -> Counter:
    return Counter((time - time % SIZE, user) for time, user in events)


def streams(p: Pipeline, clicksPerBatch: int = 3, viewsPerBatch: int = 2):
    clicks = p.readFrom(TestSources.finiteStream(CLICKS, clicksPerBatch)).setName("clicks").withNativeTimestamps(0)
    views = p.readFrom(TestSources.finiteStream(VIEWS, viewsPerBatch)).setName("views").withNativeTimestamps(0)
    return clicks, views


def test_a_keyed_window_of_two_streams_plans_an_input_per_stream_partitioned_by_its_key():
    p = Pipeline.create()
    clicks, views = streams(p)
    (clicks.groupingKey(wholeItem()).window(WindowDefinition.tumbling(SIZE))
      .aggregate2(AggregateOperations.counting(), views.groupingKey(wholeItem()), AggregateOperations.counting())
      .writeTo(Sinks.noop()))
    dag = plan(p).dag
    inbound = sorted(dag.getInboundEdges("sliding-window-prepare"), key=lambda edge: edge.destOrdinal)
    assert [(edge.sourceName, edge.destOrdinal, edge.routing.value) for edge in inbound] == [
        ("clicks-add-timestamps", 0, "partitioned"), ("views-add-timestamps", 1, "partitioned")
    ]


def test_windows_refuse_inputs_keyed_otherwise():
    p = Pipeline.create()
    clicks, views = streams(p)
    with pytest.raises(PipelineError, match="its windows are keyed, so each input is a stream stage with a grouping key"):
        clicks.groupingKey(wholeItem()).window(WindowDefinition.tumbling(SIZE)).aggregate2(
            AggregateOperations.counting(), views, AggregateOperations.counting()
        )


@pytest.mark.spark
def test_keyed_windows_of_two_and_three_streams_count_each_streams_items(jet):
    p = Pipeline.create()
    clicks, views = streams(p)
    keyedClicks = clicks.groupingKey(wholeItem()).window(WindowDefinition.tumbling(SIZE))
    (keyedClicks.aggregate2(AggregateOperations.counting(), views.groupingKey(wholeItem()), AggregateOperations.counting())
      .writeTo(Sinks.list("clicks-and-views")))
    builder = keyedClicks.aggregateBuilder(AggregateOperations.counting())
    viewsTag = builder.add(views.groupingKey(wholeItem()), AggregateOperations.counting())
    builder.build(lambda byTag: byTag.get(viewsTag)).writeTo(Sinks.list("views-by-builder"))
    (keyedClicks.aggregate3(views.groupingKey(wholeItem()), views.groupingKey(wholeItem()),
                            AggregateOperations.aggregateOperation3(AggregateOperations.counting(),
                                                                    AggregateOperations.counting(),
                                                                    AggregateOperations.counting()))
      .writeTo(Sinks.list("three-inputs")))
    jet.newJob(p).join()
    clickCounts, viewCounts = perWindow(CLICKS), perWindow(VIEWS)
    keys = set(clickCounts) | set(viewCounts)
    expected = {key: (clickCounts[key], viewCounts[key]) for key in keys}
    assert {(r.start, r.key): r.result for r in jet.getList("clicks-and-views")} == expected
    assert {(r.start, r.key): r.result for r in jet.getList("views-by-builder")} == {
        key: viewCounts[key] for key in keys
    }
    assert {(r.start, r.key): r.result for r in jet.getList("three-inputs")} == {
        key: (clickCounts[key], viewCounts[key], viewCounts[key]) for key in keys
    }


@pytest.mark.spark
def test_a_windows_distinct_items_and_a_global_window_of_two_streams(jet):
    p = Pipeline.create()
    clicks, views = streams(p)
    clicks.window(WindowDefinition.tumbling(SIZE)).distinct().writeTo(Sinks.list("distinct-users"))
    (clicks.window(WindowDefinition.tumbling(SIZE))
      .aggregate2(AggregateOperations.counting(), views, AggregateOperations.counting())
      .writeTo(Sinks.list("global-two")))
    jet.newJob(p).join()
    distinct = jet.getList("distinct-users")
    assert all(isinstance(result, WindowResult) for result in distinct)
    assert sorted((r.start, r.end, r.result) for r in distinct) == sorted(
        (start, start + SIZE, user) for start, user in perWindow(CLICKS)
    )
    clicksPer, viewsPer = Counter(), Counter()
    for time, _ in CLICKS:
        clicksPer[time - time % SIZE] += 1
    for time, _ in VIEWS:
        viewsPer[time - time % SIZE] += 1
    assert {r.start: r.result for r in jet.getList("global-two")} == {
        start: (clicksPer[start], viewsPer[start]) for start in set(clicksPer) | set(viewsPer)
    }
