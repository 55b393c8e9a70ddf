"""Jet's RebalanceStreamStageTest, its plans ported: rebalance() before a stream's map makes the
edge distributed (partitioned where by key), and peek() comes before it, never right after;
before a global window the aggregation keeps two stages, the rebalanced edge into its first;
before a keyed window it is one stage, as Jet plans it."""

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition
from sparkjet.pipeline import PipelineError
from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.planner import plan

ITEM_COUNT = 20
TIMESTAMPS = "finiteStream-add-timestamps"


def stream(p: Pipeline):
    return p.readFrom(TestSources.finiteStream([(i, i) for i in range(ITEM_COUNT)])).withNativeTimestamps(0)


def itself(item):
    return item


def doubled(item):
    return 2 * item


def modulo3(item):
    return item % 3


def modulo5(item):
    return item % 5


def formatted(item):
    return f"{item:04d}-string"


def summing():
    return AggregateOperations.summing(itself)


def edgeFromTimestamps(dag):
    (edge,) = dag.getOutboundEdges(TIMESTAMPS)
    return edge


@pytest.mark.parametrize("keyFn", [None, itself], ids=["round-robin", "by-key"])
def test_rebalance_and_map_then_the_edge_is_distributed(keyFn):
    p = Pipeline.create()
    stream(p).rebalance(keyFn).map(formatted).writeTo(Sinks.list("sink"))
    (edge,) = plan(p).dag.getInboundEdges("map")
    assert edge.isDistributed
    assert (edge.routing is RoutingPolicy.PARTITIONED) == (keyFn is not None)


def test_peek_and_rebalance_by_key_and_map_then_the_edge_is_partitioned_and_distributed():
    p = Pipeline.create()
    stream(p).peek().rebalance(itself).map(formatted).writeTo(Sinks.list("sink"))
    (edge,) = plan(p).dag.getInboundEdges("map")
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED


@pytest.mark.parametrize("keyFn", [None, itself], ids=["round-robin", "by-key"])
def test_rebalance_and_peek_and_map_is_refused(keyFn):
    rebalanced = stream(Pipeline.create()).rebalance(keyFn)
    with pytest.raises(PipelineError, match=r": peek\(\) not supported after rebalance\(\), as in Jet; call peek\(\) before"):
        rebalanced.peek().map(formatted)


@pytest.mark.parametrize("keyFn", [None, doubled], ids=["round-robin", "by-key"])
def test_rebalance_and_window_aggregate_then_two_stages(keyFn):
    p = Pipeline.create()
    stream(p).rebalance(keyFn).window(WindowDefinition.tumbling(1)).aggregate(summing()).writeTo(Sinks.list("sink"))
    dag = plan(p).dag
    edge = edgeFromTimestamps(dag)
    assert edge.isDistributed and edge.destName.endswith("sliding-window-prepare")
    assert (edge.routing is RoutingPolicy.PARTITIONED) == (keyFn is not None)
    (internal,) = dag.getOutboundEdges(edge.destName)
    assert internal.isDistributed and internal.routing is RoutingPolicy.ALL_TO_ONE  # Jet's: partitioned to one key


@pytest.mark.parametrize("keyFn", [None, modulo3], ids=["round-robin", "by-key"])
def test_rebalance_and_window_group_aggregate_then_one_stage(keyFn):
    p = Pipeline.create()
    (stream(p).rebalance(keyFn).window(WindowDefinition.tumbling(1)).groupingKey(modulo5)
      .aggregate(summing()).writeTo(Sinks.list("sink")))
    planned = plan(p)
    dag = planned.dag
    edge = edgeFromTimestamps(dag)
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED
    (toSink,) = dag.getOutboundEdges(edge.destName)
    assert dag.getOutboundEdges(toSink.destName) == []
    assert edge.destName == "sliding-window"
    assert "`rebalance()` before it sends every item across" in " ".join(planned.reasons)
