"""Jet's rollingAggregate_global (StreamStageTest, BatchStageTest), ported: a global rolling
count over a stream cut into micro-batches reaches a list sink in its order, 1 to itemCount,
with event time or without."""

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources

ITEM_COUNT = 40


@pytest.mark.spark
def test_a_global_rolling_aggregate_keeps_its_order_into_a_list_sink(jet):
    p = Pipeline.create()
    events = [(i, i) for i in range(ITEM_COUNT)]
    timed = p.readFrom(TestSources.finiteStream(events, 7)).withNativeTimestamps(0)
    timed.rollingAggregate(AggregateOperations.counting()).writeTo(Sinks.list("timed"))
    untimed = p.readFrom(TestSources.finiteStream(events, 7)).withoutTimestamps()
    untimed.rollingAggregate(AggregateOperations.counting()).writeTo(Sinks.list("untimed"))
    jet.newJob(p).join()
    assert jet.getList("timed") == list(range(1, ITEM_COUNT + 1))
    assert jet.getList("untimed") == list(range(1, ITEM_COUNT + 1))
