"""Planning Jet's keyed service stages, mapUsingServiceAsync and HashJoinBuilder.addInner.

Keyed services plan as Jet's ``PartitionedProcessorTransform``: a distributed partitioned edge
by the key into the service vertex, so each key's items meet one service. Inner sides of a hash
join drop the primary items they do not match (Jet's ``HashJoinPTest``, with inner sides). No
Spark except one port of Jet's ``BatchStageTest.when_hashJoinBuilderAddInner_then_filterOutNulls``.
"""

import threading

import pytest

from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.coredag.processors.async_service import AsyncServiceP
from sparkjet.coredag.processors.join import HashJoinP
from sparkjet.coredag.processors.service import ServiceP
from sparkjet.pipeline import (
    ItemsByTag,
    JoinClause,
    Pipeline,
    PipelineError,
    ServiceFactories,
    Sinks,
    Sources,
    Tag,
    wholeItem,
)
from sparkjet.planner import plan

KEYED_REASON = "a keyed service: each key's items go to one processor's service (distributed partitioned)"


def first(item):
    return item[0]


def second(item):
    return item[1]


def makeService(context):
    return "service"


SERVICE = ServiceFactories.nonSharedService(makeService)


def keyedUse(service, key, item):
    return key, item


async def asyncUse(service, item):
    return item


async def keyedAsyncUse(service, key, item):
    return key, item


def inbound(dag, name):
    (edge,) = dag.getInboundEdges(name)
    return edge


def keyedSource(p: Pipeline):
    return p.readFrom(Sources.items([(1, "a")])).groupingKey(first)


KEYED_SERVICE_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"mapUsingPartitionedService" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "mapUsingPartitionedService" [label="distributed-partitioned", queueSize=1024];
	"mapUsingPartitionedService" -> "listSink(out)" [queueSize=1024];
}"""


def test_keyed_map_using_service_plans_to_this_dot_text():
    p = Pipeline.create()
    keyedSource(p).mapUsingService(SERVICE, keyedUse).writeTo(Sinks.list("out"))
    assert plan(p).toDotString() == KEYED_SERVICE_DOT


@pytest.mark.parametrize("kind", ["map", "filter", "flatMap"])
def test_keyed_service_stages_get_a_distributed_edge_partitioned_by_the_key(kind):
    p = Pipeline.create()
    getattr(keyedSource(p), f"{kind}UsingService")(SERVICE, keyedUse).setLocalParallelism(3).writeTo(Sinks.list("out"))
    planned = plan(p)
    name = f"{kind}UsingPartitionedService"
    assert planned.getVertex(name).localParallelism == 3
    assert planned.getVertex(name).processorSupplier == ServiceP(kind, SERVICE, keyedUse, name, first)
    edge = inbound(planned, name)
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)
    assert planned.reasons == (f"`{name}`: {KEYED_REASON}",)


def test_a_keyed_service_stage_after_rebalance_is_still_partitioned_by_its_key():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([(1, "a")]))
    source.rebalance(second).groupingKey(first).mapUsingService(SERVICE, keyedUse).writeTo(Sinks.list("out"))
    edge = inbound(plan(p), "mapUsingPartitionedService")
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)


def test_map_using_service_async_is_one_vertex_behind_a_local_edge_with_jets_defaults():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str).mapUsingServiceAsync(SERVICE, asyncUse).writeTo(Sinks.list("out"))
    planned = plan(p)
    assert [v.name for v in planned] == ["items", "map", "mapUsingServiceAsync", "listSink(out)"]
    assert planned.getVertex("mapUsingServiceAsync").processorSupplier == AsyncServiceP(
        SERVICE, asyncUse, 4, True, "mapUsingServiceAsync"
    )
    edge = inbound(planned, "mapUsingServiceAsync")
    assert (edge.routing, edge.isDistributed) == (RoutingPolicy.UNICAST, False)
    assert planned.reasons == ()


def test_keyed_map_using_service_async_takes_the_bound_and_the_order_and_is_partitioned():
    p = Pipeline.create()
    keyedSource(p).mapUsingServiceAsync(SERVICE, keyedAsyncUse, maxConcurrentOps=2, preserveOrder=False).writeTo(
        Sinks.list("out")
    )
    planned = plan(p)
    name = "mapUsingPartitionedServiceAsync"
    assert planned.getVertex(name).processorSupplier == AsyncServiceP(SERVICE, keyedAsyncUse, 2, False, name, first)
    edge = inbound(planned, name)
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)
    assert planned.reasons == (f"`{name}`: {KEYED_REASON}",)


def test_the_explanation_gives_the_reason_for_the_keyed_edge():
    p = Pipeline.create()
    keyedSource(p).filterUsingService(SERVICE, keyedUse).writeTo(Sinks.list("out"))
    assert f"`filterUsingPartitionedService`: {KEYED_REASON}" in plan(p).explain()
    assert "items -> filterUsingPartitionedService: distributed partitioned" in plan(p).explain()


def closingOverLock():
    lock = threading.Lock()
    return lambda service, key, item: lock


@pytest.mark.parametrize(
    "method", ["mapUsingService", "filterUsingService", "flatMapUsingService", "mapUsingServiceAsync"]
)
def test_a_keyed_service_function_that_cannot_be_pickled_is_refused_naming_the_stage(method):
    stage = keyedSource(Pipeline.create())
    name = method.replace("UsingService", "UsingPartitionedService")
    with pytest.raises(PipelineError, match=f"Stage '{name}'.*cannot be pickled"):
        getattr(stage, method)(SERVICE, closingOverLock())


def test_async_stages_refuse_a_bound_that_is_no_number():
    stage = keyedSource(Pipeline.create())
    message = "'mapUsingPartitionedServiceAsync'.*maxConcurrentOps must be at least 1, got '4'"
    with pytest.raises(PipelineError, match=message):
        stage.mapUsingServiceAsync(SERVICE, keyedAsyncUse, maxConcurrentOps="4")


# HashJoinBuilder.addInner


def test_add_and_add_inner_return_tags_in_order_and_plan_the_inner_sides():
    p = Pipeline.create()
    primary, *others = [p.readFrom(Sources.items([n])) for n in range(4)]
    builder = primary.hashJoinBuilder()
    clause = JoinClause.onKeys(wholeItem(), wholeItem())
    tags = [builder.addInner(others[0], clause), builder.addInner(others[1], clause), builder.add(others[2], clause)]
    builder.build(byTags).writeTo(Sinks.list("out"))
    planned = plan(p)
    assert tags == [Tag.tag0(), Tag.tag1(), Tag.tag2()]
    joiner = planned.getVertex("4-way hash-join-joiner").processorSupplier
    assert (joiner.inner, joiner.matchesByTag) == ((True, True, False), True)


def byTags(item, matches):
    return item, matches


def pair(item, match):
    return item, match


def identity(item):
    return item


def joiner(count: int, inner: tuple[bool, ...], mapFn=None, matchesByTag=False) -> HashJoinP:
    return HashJoinP((identity,) * count, mapFn or (byTags if matchesByTag else pair), inner, matchesByTag, "hash-join")


def table(**valuesByKey) -> dict:
    """A collector's output: each key (here ``k1`` for 1) to its list of matches."""
    return {int(key[1:]): values for key, values in valuesByKey.items()}


def test_jets_one_to_n_bi_join_outer_then_inner():
    tables = [table(k1=["a"], k2=["b", "c"])]
    verifyProcessor(joiner(1, (False,))).disableSnapshots().inputs([[0, 1, 2], tables], [10, 1]).expectOutput(
        [(0, None), (1, "a"), (2, "b"), (2, "c")]
    ).verify()
    verifyProcessor(joiner(1, (True,))).disableSnapshots().inputs([[0, 1, 2], tables], [10, 1]).expectOutput(
        [(1, "a"), (2, "b"), (2, "c")]
    ).verify()


ONE_TO_N = [[table(k1=["a"], k2=["b", "c"], k4=["d", "e"])], [table(k2=["A"], k3=["B", "C"], k4=["D", "E"])]]
"""Jet's test_oneToNJoin tables: ordinal 1's and ordinal 2's, each one item."""


def tagged(item, match0, match1):
    return item, ItemsByTag.itemsByTag(Tag.tag0(), match0, Tag.tag1(), match1)


def test_jets_one_to_n_join_with_tags_outer():
    expected = [
        tagged(0, None, None), tagged(1, "a", None), tagged(2, "b", "A"), tagged(2, "c", "A"),
        tagged(3, None, "B"), tagged(3, None, "C"), tagged(4, "d", "D"), tagged(4, "d", "E"),
        tagged(4, "e", "D"), tagged(4, "e", "E"),
    ]
    verifyProcessor(joiner(2, (False, False), matchesByTag=True)).disableSnapshots().inputs(
        [[0, 1, 2, 3, 4], *ONE_TO_N], [10, 1, 1]
    ).expectOutput(expected).verify()


@pytest.mark.parametrize(
    "inner, expected",
    [
        ((True, False), [tagged(1, "a", None), tagged(2, "b", "A"), tagged(2, "c", "A"), *[
            tagged(4, m0, m1) for m0 in "de" for m1 in "DE"]]),
        ((False, True), [tagged(2, "b", "A"), tagged(2, "c", "A"), tagged(3, None, "B"), tagged(3, None, "C"), *[
            tagged(4, m0, m1) for m0 in "de" for m1 in "DE"]]),
        ((True, True), [tagged(2, "b", "A"), tagged(2, "c", "A"), *[tagged(4, m0, m1) for m0 in "de" for m1 in "DE"]]),
    ],
    ids=["inner-outer", "outer-inner", "inner-inner"],
)
def test_an_inner_side_drops_the_items_it_does_not_match_and_only_those(inner, expected):
    verifyProcessor(joiner(2, inner, matchesByTag=True)).disableSnapshots().inputs([[0, 1, 2, 3, 4], *ONE_TO_N], [10, 1, 1]).expectOutput(
        expected
    ).verify()


def nullWithoutFirstMatch(item, matches):
    return None if matches.get(Tag.tag0()) is None else (item, matches)


def test_jets_with_tags_map_to_null_drops_the_item():
    tables = [[table(k1=["a"], k3=["c"])], [table(k1=["A"], k2=["B"])]]
    verifyProcessor(joiner(2, (False, False), nullWithoutFirstMatch, True)).disableSnapshots().inputs(
        [[1, 2, 3], *tables], [10, 1, 1]
    ).expectOutput([tagged(1, "a", "A"), tagged(3, "c", None)]).verify()


ITEM_COUNT = 16


def entries(prefixes: str, limit: int) -> list[tuple[int, str]]:
    return [(i, f"{prefix}-{i}") for i in range(ITEM_COUNT) if i <= limit for prefix in prefixes]


def joinedWithTags(tagA, tagB, tagC):
    return lambda item, byTag: (item, byTag.get(tagA), byTag.get(tagB), byTag.get(tagC))


@pytest.mark.spark
def test_jets_hash_join_builder_add_inner_filters_out_nulls(jet):
    p = Pipeline.create()
    clause = JoinClause.onKeys(wholeItem(), first).projecting(second)
    builder = p.readFrom(Sources.items(range(ITEM_COUNT))).hashJoinBuilder()
    tagA = builder.addInner(p.readFrom(Sources.items(entries("AB", ITEM_COUNT // 2))), clause)
    tagB = builder.addInner(p.readFrom(Sources.items(entries("C", ITEM_COUNT // 4))), clause)
    tagC = builder.add(p.readFrom(Sources.items(entries("D", ITEM_COUNT // 8))), clause)
    builder.build(joinedWithTags(tagA, tagB, tagC)).setLocalParallelism(3).writeTo(Sinks.list("addInner"))
    jet.newJob(p).join()
    expected = [
        (i, f"{a}-{i}", f"C-{i}", f"D-{i}" if i <= ITEM_COUNT // 8 else None)
        for i in range(ITEM_COUNT) if i <= ITEM_COUNT // 4 for a in "AB"
    ]
    assert sorted(jet.getList("addInner")) == sorted(expected)
