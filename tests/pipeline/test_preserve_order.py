"""Pipeline.setPreserveOrder, as Jet's: the stateless stages take their upstream's parallelism
(the lower, where they have their own) behind isolated edges, so each source processor's items
keep their order; keyed stages and rebalanced inputs are as they were."""

import pytest

from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.pipeline import Pipeline, ServiceFactories, Sinks, Sources
from sparkjet.planner import plan

SERVICE = ServiceFactories.nonSharedService(lambda context: 10)
ITEMS = 400
SOURCE_PARALLELISM = 2


def inbound(dag, name):
    (edge,) = dag.getInboundEdges(name)
    return edge


def pipelineOf(preserveOrder: bool, mapParallelism: int = 4) -> Pipeline:
    """``items (2) -> map (mapParallelism) -> mapUsingService -> list``."""
    p = Pipeline.create().setPreserveOrder(preserveOrder)
    (p.readFrom(Sources.items(range(ITEMS))).setLocalParallelism(SOURCE_PARALLELISM)
      .map(lambda i: i * 10).setLocalParallelism(mapParallelism)
      .mapUsingService(SERVICE, lambda tens, i: i // tens)
      .writeTo(Sinks.list("ordered" if preserveOrder else "unordered")))
    return p


def test_is_preserve_order_says_what_was_set():
    p = Pipeline.create()
    assert p.isPreserveOrder() is False
    assert p.setPreserveOrder(True) is p and p.isPreserveOrder() is True


def test_stateless_stages_take_the_upstreams_parallelism_behind_isolated_edges():
    dag = plan(pipelineOf(True))
    assert [(v.name, v.localParallelism) for v in dag][:3] == [("items", 2), ("map", 2), ("mapUsingService", 2)]
    assert [inbound(dag, name).routing for name in ("map", "mapUsingService")] == [RoutingPolicy.ISOLATED] * 2


def test_a_stage_of_lower_parallelism_keeps_its_own():
    dag = plan(pipelineOf(True, mapParallelism=1))
    assert dag.getVertex("map").localParallelism == 1
    assert inbound(dag, "map").routing is RoutingPolicy.ISOLATED


def test_without_it_the_plan_is_as_before():
    dag = plan(pipelineOf(False))
    assert dag.getVertex("map").localParallelism == 4
    assert inbound(dag, "map").routing is RoutingPolicy.UNICAST


def test_keyed_stages_and_rebalanced_inputs_keep_their_edges():
    p = Pipeline.create().setPreserveOrder(True)
    source = p.readFrom(Sources.items(range(10))).setLocalParallelism(2)
    source.rebalance().map(str).writeTo(Sinks.list("rebalanced"))
    source.groupingKey(lambda i: i % 3).mapUsingService(SERVICE, lambda s, k, i: i).writeTo(Sinks.list("keyed"))
    dag = plan(p)
    assert (inbound(dag, "map").routing, inbound(dag, "map").isDistributed) == (RoutingPolicy.UNICAST, True)
    assert inbound(dag, "mapUsingPartitionedService").routing is RoutingPolicy.PARTITIONED


@pytest.mark.spark
def test_each_source_processors_items_keep_their_order_at_parallelism_two(jet):
    """Sources.items gives processor i of 2 the items i, i + 2, ...: each processor's share
    arrives in the list in its order with setPreserveOrder, not without (round-robin into 4)."""
    for preserveOrder in (True, False):
        jet.newJob(pipelineOf(preserveOrder)).join()
    ordered, unordered = list(jet.getList("ordered")), list(jet.getList("unordered"))
    assert sorted(ordered) == sorted(unordered) == list(range(ITEMS))
    shares = [[i for i in ordered if i % SOURCE_PARALLELISM == share] for share in range(SOURCE_PARALLELISM)]
    assert shares == [list(range(share, ITEMS, SOURCE_PARALLELISM)) for share in range(SOURCE_PARALLELISM)]
    unorderedShares = [[i for i in unordered if i % SOURCE_PARALLELISM == share] for share in range(SOURCE_PARALLELISM)]
    assert unorderedShares != shares
