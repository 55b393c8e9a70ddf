"""rebalance(): the next edge becomes distributed, stops fusion, makes aggregation single-stage."""

import pytest

from sparkjet.coredag import RoutingPolicy
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan


def edgeInto(dag, name):
    (edge,) = dag.getInboundEdges(name)
    return edge


def test_rebalance_stops_fusion_and_distributes_the_next_edge():
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(str).rebalance().filter(bool).writeTo(Sinks.logger())
    dag = plan(p)
    assert [v.name for v in dag] == ["items", "map", "filter", "loggerSink"]
    edge = edgeInto(dag, "filter")
    assert edge.isDistributed and edge.routing is RoutingPolicy.UNICAST


def test_rebalance_by_key_partitions_the_next_edge():
    p = Pipeline.create()
    key = len
    p.readFrom(Sources.items(["a"])).rebalance(key).map(str.upper).writeTo(Sinks.logger())
    edge = edgeInto(plan(p), "map")
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED and edge.keyFn is key


def test_keyed_aggregation_after_rebalance_is_single_stage():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(["a"])).rebalance().groupingKey(wholeItem())
    stage.aggregate(AggregateOperations.counting()).writeTo(Sinks.logger())
    dag = plan(p)
    assert [v.name for v in dag] == ["items", "group-and-aggregate", "loggerSink"]
    edge = edgeInto(dag, "group-and-aggregate")
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED


def test_rebalanced_stage_handle_is_a_new_value():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1]))
    assert stage.rebalance() != stage
    assert stage.rebalance().index == stage.index


@pytest.mark.spark
def test_rebalanced_pipeline_gives_the_same_counts(jet):
    words = ["to", "be", "or", "not", "to", "be"] * 40
    p = Pipeline.create()
    counts = p.readFrom(Sources.items(words)).rebalance().map(str.upper).rebalance(len)
    counts.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("c"))
    jet.newJob(p).join()
    assert dict(jet.getList("c")) == {"TO": 80, "BE": 80, "OR": 40, "NOT": 40}
