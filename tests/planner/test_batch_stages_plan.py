"""Planning Jet's batch stages: merge, distinct, sort, hash joins, custom transforms,
services, mapStateful, rollingAggregate, writeTo of several stages, apply and rebalance.

No Spark: each stage is planned with ``plan`` and compared with the DOT text Jet prints,
then its vertices, parallelism, routing, locality, priority and ordinals are checked.
"""

import threading

import pytest

from sparkjet.coredag.model.edge import Ordering, RoutingPolicy
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.join import BROADCAST_LIMIT, HashJoinCollectP, HashJoinP
from sparkjet.coredag.processors.keyed import DistinctP, MapStatefulP, RollingAggregateP
from sparkjet.coredag.processors.service import ServiceP
from sparkjet.coredag.processors.sorting import SortP
from sparkjet.pipeline import (
    AggregateOperations,
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

DEFAULT = -1
COUNTING = AggregateOperations.counting()


def first(item):
    return item[0]


def second(item):
    return item[1]


def pair(left, right):
    return left, right


def triple(item, match1, match2):
    return item, match1, match2


def byTags(item, matches):
    return item, matches


def newState():
    return [0]


def runningSum(state, key, item):
    state[0] += item[1]
    return key, state[0]


def useService(service, item):
    return item


def makeService(context):
    return object()


SERVICE = ServiceFactories.nonSharedService(makeService)


class NoopSupplier:
    """Stands in for a processor supplier: planning never calls it."""

    def __call__(self):
        raise AssertionError("planning must not create processors")


def vertices(dag) -> list[tuple[str, int]]:
    """Name and parallelism of each vertex, in the topological order DOT prints them."""
    return [(v.name, v.localParallelism) for v in dag]


def edges(dag) -> list[str]:
    """Each edge as the builder call that makes it (Jet's Edge.toString)."""
    return [repr(e) for e in dag.edges()]


def inbound(dag, name):
    (edge,) = dag.getInboundEdges(name)
    return edge


def supplier(dag, name):
    return dag.getVertex(name).processorSupplier


def sources(p: Pipeline, count: int) -> list:
    return [p.readFrom(Sources.items([n])) for n in range(count)]


# merge

MERGE_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"items-2" [localParallelism=default];
	"merge" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "merge" [headlabel=0, queueSize=1024];
	"items-2" -> "merge" [headlabel=1, queueSize=1024];
	"merge" -> "listSink(out)" [queueSize=1024];
}"""


def mergePipeline() -> Pipeline:
    p = Pipeline.create()
    left, right = sources(p, 2)
    left.merge(right).writeTo(Sinks.list("out"))
    return p


def test_merge_plans_to_this_dot_text():
    assert plan(mergePipeline()).toDotString() == MERGE_DOT


def test_merge_is_one_identity_vertex_fed_at_ordinals_0_and_1_by_local_unicast_edges():
    dag = plan(mergePipeline())
    assert vertices(dag) == [("items", DEFAULT), ("items-2", DEFAULT), ("merge", DEFAULT), ("listSink(out)", 1)]
    assert [repr(e) for e in dag.getInboundEdges("merge")] == [
        'between("items", "merge")',
        'from("items-2").to("merge", 1)',
    ]
    assert supplier(dag, "merge") == IdentityP()


def test_merge_takes_its_own_local_parallelism():
    p = Pipeline.create()
    left, right = sources(p, 2)
    left.merge(right).setLocalParallelism(3).writeTo(Sinks.list("out"))
    assert plan(p).getVertex("merge").localParallelism == 3


# distinct

DISTINCT_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"distinct-prepare" [localParallelism=default];
	"distinct" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "distinct-prepare" [label="partitioned", queueSize=1024];
	subgraph cluster_0 {
		"distinct-prepare" -> "distinct" [label="distributed-partitioned", queueSize=1024];
	}
	"distinct" -> "listSink(out)" [queueSize=1024];
}"""


def distinctPipeline(keyFn=None, parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    source = p.readFrom(Sources.items("abca"))
    distinct = source.distinct() if keyFn is None else source.groupingKey(keyFn).distinct()
    distinct.setLocalParallelism(parallelism).writeTo(Sinks.list("out"))
    return p


def test_global_distinct_plans_to_this_dot_text():
    assert plan(distinctPipeline()).toDotString() == DISTINCT_DOT


def test_keyed_distinct_plans_to_the_same_dot_text():
    assert plan(distinctPipeline(first)).toDotString() == DISTINCT_DOT


def test_distinct_prepare_gets_a_local_partitioned_edge_and_feeds_distinct_distributed_partitioned():
    dag = plan(distinctPipeline(first))
    into, between = inbound(dag, "distinct-prepare"), inbound(dag, "distinct")
    assert (into.sourceName, into.routing, into.isDistributed, into.keyFn) == (
        "items", RoutingPolicy.PARTITIONED, False, first
    )
    assert (between.sourceName, between.routing, between.isDistributed, between.keyFn) == (
        "distinct-prepare", RoutingPolicy.PARTITIONED, True, first
    )


def test_global_distinct_partitions_by_the_whole_item():
    dag = plan(distinctPipeline())
    assert inbound(dag, "distinct-prepare").keyFn is wholeItem()
    assert inbound(dag, "distinct").keyFn is wholeItem()


def test_distinct_parallelism_applies_to_prepare_and_distinct():
    dag = plan(distinctPipeline(first, parallelism=3))
    assert vertices(dag) == [
        ("items", DEFAULT), ("distinct-prepare", 3), ("distinct", 3), ("listSink(out)", 1)
    ]


def test_distinct_processors_are_a_prepare_step_then_the_final_step_with_the_key():
    dag = plan(distinctPipeline(first))
    assert supplier(dag, "distinct-prepare") == DistinctP(first, "distinct", isPrepare=True)
    assert supplier(dag, "distinct") == DistinctP(first, "distinct")
    assert supplier(dag, "distinct-prepare").acceptsAnyRouting
    assert not supplier(dag, "distinct").acceptsAnyRouting


# sort

SORT_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"sort" [localParallelism=default];
	"sort-collect" [localParallelism=1];
	"listSink(out)" [localParallelism=1];
	"items" -> "sort" [queueSize=1024];
	"sort" -> "sort-collect" [label="distributed-partitioned-ordered", queueSize=1024];
	"sort-collect" -> "listSink(out)" [queueSize=1024];
}"""


def sortPipeline(key=None, reverse=False, parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.items("cab")).sort(key, reverse).setLocalParallelism(parallelism).writeTo(
        Sinks.list("out")
    )
    return p


def test_sort_plans_to_this_dot_text():
    assert plan(sortPipeline()).toDotString() == SORT_DOT


def test_sort_collects_into_one_processor_by_a_distributed_all_to_one_ordered_edge():
    dag = plan(sortPipeline(parallelism=4))
    assert vertices(dag) == [("items", DEFAULT), ("sort", 4), ("sort-collect", 1), ("listSink(out)", 1)]
    into, collect = inbound(dag, "sort"), inbound(dag, "sort-collect")
    assert (into.routing, into.isDistributed, into.ordering) == (RoutingPolicy.UNICAST, False, None)
    assert (collect.sourceName, collect.routing, collect.isDistributed) == (
        "sort", RoutingPolicy.ALL_TO_ONE, True
    )
    assert collect.allToOneKey == "sort"


def test_sort_edge_and_processor_carry_the_key_and_the_direction():
    dag = plan(sortPipeline(second, reverse=True))
    assert inbound(dag, "sort-collect").ordering == Ordering(second, True)
    assert supplier(dag, "sort") == SortP(second, True, "sort")
    assert supplier(dag, "sort-collect") == IdentityP()


def test_sort_without_key_orders_by_the_items_themselves():
    dag = plan(sortPipeline())
    assert inbound(dag, "sort-collect").ordering == Ordering(None, False)


# hash joins

HASH_JOIN_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"items-2" [localParallelism=default];
	"2-way hash-join-collector1" [localParallelism=1];
	"2-way hash-join-joiner" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "2-way hash-join-joiner" [headlabel=0, queueSize=1024];
	"items-2" -> "2-way hash-join-collector1" [label="distributed-broadcast", queueSize=1024];
	"2-way hash-join-collector1" -> "2-way hash-join-joiner" [label="broadcast", headlabel=1, queueSize=1024];
	"2-way hash-join-joiner" -> "listSink(out)" [queueSize=1024];
}"""

HASH_JOIN_EDGES = [
    'between("items", "2-way hash-join-joiner")',
    'between("items-2", "2-way hash-join-collector1").broadcast().distributed()',
    'from("2-way hash-join-collector1").to("2-way hash-join-joiner", 1).broadcast().priority(-1)',
    'between("2-way hash-join-joiner", "listSink(out)")',
]

CLAUSE = JoinClause.onKeys(first, first)


def hashJoinPipeline(inner=False, clause=CLAUSE, rebalance=None, parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    primary, other = sources(p, 2)
    if rebalance is not None:
        primary = rebalance(primary)
    join = primary.innerHashJoin if inner else primary.hashJoin
    join(other, clause, pair).setLocalParallelism(parallelism).writeTo(Sinks.list("out"))
    return p


def test_hash_join_plans_to_this_dot_text():
    assert plan(hashJoinPipeline()).toDotString() == HASH_JOIN_DOT


def test_inner_hash_join_plans_to_the_same_dot_text():
    assert plan(hashJoinPipeline(inner=True)).toDotString() == HASH_JOIN_DOT


def test_hash_join_collector_is_one_processor_behind_a_distributed_broadcast_edge():
    dag = plan(hashJoinPipeline(parallelism=3))
    assert vertices(dag) == [
        ("items", DEFAULT),
        ("items-2", DEFAULT),
        ("2-way hash-join-collector1", 1),
        ("2-way hash-join-joiner", 3),
        ("listSink(out)", 1),
    ]
    assert edges(dag) == HASH_JOIN_EDGES


def test_hash_join_joiner_gets_the_primary_at_ordinal_0_and_the_table_first_at_ordinal_1():
    dag = plan(hashJoinPipeline())
    primary, table = dag.getInboundEdges("2-way hash-join-joiner")
    assert (primary.sourceName, primary.destOrdinal, primary.routing, primary.isDistributed, primary.priorityNumber) == (
        "items", 0, RoutingPolicy.UNICAST, False, 0
    )
    assert (table.sourceName, table.destOrdinal, table.routing, table.isDistributed, table.priorityNumber) == (
        "2-way hash-join-collector1", 1, RoutingPolicy.BROADCAST, False, -1
    )


def test_hash_join_processors_carry_the_clause_the_mapFn_and_outer_or_inner():
    projecting = CLAUSE.projecting(second).withBroadcastLimit(1 << 20)
    outer, inner = plan(hashJoinPipeline(clause=projecting)), plan(hashJoinPipeline(inner=True))
    assert supplier(outer, "2-way hash-join-joiner") == HashJoinP((first,), pair, (False,), False, "2-way hash-join")
    assert supplier(inner, "2-way hash-join-joiner") == HashJoinP((first,), pair, (True,), False, "2-way hash-join")
    assert supplier(outer, "2-way hash-join-collector1") == HashJoinCollectP(
        first, second, "2-way hash-join", "items-2", 1 << 20
    )
    assert supplier(inner, "2-way hash-join-collector1") == HashJoinCollectP(
        first, None, "2-way hash-join", "items-2", BROADCAST_LIMIT
    )


def test_a_renamed_hash_join_names_its_collector_and_joiner_after_it():
    p = Pipeline.create()
    primary, other = sources(p, 2)
    primary.hashJoin(other, CLAUSE, pair).setName("enrich").writeTo(Sinks.list("out"))
    assert [name for name, _ in vertices(plan(p))] == [
        "items", "items-2", "enrich-collector1", "enrich-joiner", "listSink(out)"
    ]


HASH_JOIN2_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"items-2" [localParallelism=default];
	"items-3" [localParallelism=default];
	"3-way hash-join-collector1" [localParallelism=1];
	"3-way hash-join-collector2" [localParallelism=1];
	"3-way hash-join-joiner" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "3-way hash-join-joiner" [headlabel=0, queueSize=1024];
	"items-2" -> "3-way hash-join-collector1" [label="distributed-broadcast", queueSize=1024];
	"items-3" -> "3-way hash-join-collector2" [label="distributed-broadcast", queueSize=1024];
	"3-way hash-join-collector1" -> "3-way hash-join-joiner" [label="broadcast", headlabel=1, queueSize=1024];
	"3-way hash-join-collector2" -> "3-way hash-join-joiner" [label="broadcast", headlabel=2, queueSize=1024];
	"3-way hash-join-joiner" -> "listSink(out)" [queueSize=1024];
}"""


def hashJoin2Pipeline(inner=False) -> Pipeline:
    p = Pipeline.create()
    primary, other1, other2 = sources(p, 3)
    join = primary.innerHashJoin2 if inner else primary.hashJoin2
    join(other1, CLAUSE, other2, JoinClause.onKeys(second, first), triple).writeTo(Sinks.list("out"))
    return p


def test_hash_join2_plans_to_this_dot_text():
    assert plan(hashJoin2Pipeline()).toDotString() == HASH_JOIN2_DOT
    assert plan(hashJoin2Pipeline(inner=True)).toDotString() == HASH_JOIN2_DOT


def test_hash_join2_has_collectors_1_and_2_at_joiner_ordinals_1_and_2_before_the_primary():
    dag = plan(hashJoin2Pipeline())
    assert [(e.sourceName, e.destOrdinal, e.routing, e.isDistributed, e.priorityNumber) for e in dag.getInboundEdges("3-way hash-join-joiner")] == [
        ("items", 0, RoutingPolicy.UNICAST, False, 0),
        ("3-way hash-join-collector1", 1, RoutingPolicy.BROADCAST, False, -1),
        ("3-way hash-join-collector2", 2, RoutingPolicy.BROADCAST, False, -1),
    ]
    assert [repr(inbound(dag, f"3-way hash-join-collector{n}")) for n in (1, 2)] == [
        'between("items-2", "3-way hash-join-collector1").broadcast().distributed()',
        'between("items-3", "3-way hash-join-collector2").broadcast().distributed()',
    ]
    assert supplier(dag, "3-way hash-join-joiner") == HashJoinP((first, second), triple, (False, False), False, "3-way hash-join")
    assert supplier(dag, "3-way hash-join-collector2") == HashJoinCollectP(first, None, "3-way hash-join", "items-3")


def test_hash_join_builder_with_three_tags_is_a_4_way_join_matching_by_tag():
    p = Pipeline.create()
    primary, *others = sources(p, 4)
    builder = primary.hashJoinBuilder()
    tags = [builder.add(other, CLAUSE) for other in others]
    builder.build(byTags).writeTo(Sinks.list("out"))
    dag = plan(p)
    assert tags == [Tag.tag0(), Tag.tag1(), Tag.tag2()]
    assert [name for name, parallelism in vertices(dag) if parallelism == 1] == [
        "4-way hash-join-collector1", "4-way hash-join-collector2", "4-way hash-join-collector3", "listSink(out)"
    ]
    assert [(e.sourceName, e.destOrdinal, e.priorityNumber) for e in dag.getInboundEdges("4-way hash-join-joiner")] == [
        ("items", 0, 0),
        ("4-way hash-join-collector1", 1, -1),
        ("4-way hash-join-collector2", 2, -1),
        ("4-way hash-join-collector3", 3, -1),
    ]
    assert supplier(dag, "4-way hash-join-joiner") == HashJoinP((first,) * 3, byTags, (False,) * 3, True, "4-way hash-join")


def test_hash_join_of_a_stage_with_itself_uses_two_outbound_ordinals():
    p = Pipeline.create()
    (source,) = sources(p, 1)
    source.hashJoin(source, CLAUSE, pair).writeTo(Sinks.list("out"))
    dag = plan(p).validate()
    assert [(e.destName, e.sourceOrdinal) for e in dag.getOutboundEdges("items")] == [
        ("2-way hash-join-joiner", 0),
        ("2-way hash-join-collector1", 1),
    ]


# custom transforms

CUSTOM_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"mine" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "mine" [queueSize=1024];
	"mine" -> "listSink(out)" [queueSize=1024];
}"""

KEYED_CUSTOM_DOT = CUSTOM_DOT.replace(
    '"items" -> "mine" [', '"items" -> "mine" [label="distributed-partitioned", '
)

PROCESSORS = NoopSupplier()


def customPipeline(keyFn=None, parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    stage = source if keyFn is None else source.groupingKey(keyFn)
    stage.customTransform("mine", PROCESSORS).setLocalParallelism(parallelism).writeTo(Sinks.list("out"))
    return p


def test_custom_transform_plans_to_this_dot_text():
    assert plan(customPipeline()).toDotString() == CUSTOM_DOT


def test_keyed_custom_transform_plans_to_this_dot_text():
    assert plan(customPipeline(first)).toDotString() == KEYED_CUSTOM_DOT


def test_custom_transform_is_a_vertex_named_by_the_user_running_the_users_supplier_behind_local_unicast():
    dag = plan(customPipeline(parallelism=3))
    assert vertices(dag) == [("items", DEFAULT), ("mine", 3), ("listSink(out)", 1)]
    assert supplier(dag, "mine") is PROCESSORS
    edge = inbound(dag, "mine")
    assert (edge.routing, edge.isDistributed) == (RoutingPolicy.UNICAST, False)


def test_keyed_custom_transform_gets_a_distributed_edge_partitioned_by_the_key():
    dag = plan(customPipeline(first))
    assert supplier(dag, "mine") is PROCESSORS
    edge = inbound(dag, "mine")
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)


# services

SERVICE_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"map" [localParallelism=default];
	"mapUsingService" [localParallelism=default];
	"map-2" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "map" [queueSize=1024];
	"map" -> "mapUsingService" [queueSize=1024];
	"mapUsingService" -> "map-2" [queueSize=1024];
	"map-2" -> "listSink(out)" [queueSize=1024];
}"""


def test_map_using_service_between_maps_plans_to_this_dot_text():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str).mapUsingService(SERVICE, useService).map(str).writeTo(Sinks.list("out"))
    assert plan(p).toDotString() == SERVICE_DOT


def test_a_stage_using_a_service_is_not_fused_with_the_maps_around_it():
    p = Pipeline.create()
    (
        p.readFrom(Sources.items([1])).map(str).map(str)
        .mapUsingService(SERVICE, useService)
        .map(str).filter(bool)
        .writeTo(Sinks.list("out"))
    )
    assert [name for name, _ in vertices(plan(p))] == [
        "items", "fused(map, map-2)", "mapUsingService", "fused(map-3, filter)", "listSink(out)"
    ]


@pytest.mark.parametrize("kind", ["map", "filter", "flatMap"])
def test_each_kind_of_service_stage_is_one_vertex_running_a_service_processor(kind):
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    getattr(source, f"{kind}UsingService")(SERVICE, useService).setLocalParallelism(2).writeTo(Sinks.list("out"))
    dag = plan(p)
    name = f"{kind}UsingService"
    assert vertices(dag) == [("items", DEFAULT), (name, 2), ("listSink(out)", 1)]
    assert supplier(dag, name) == ServiceP(kind, SERVICE, useService, name)
    edge = inbound(dag, name)
    assert (edge.routing, edge.isDistributed) == (RoutingPolicy.UNICAST, False)


# mapStateful and rollingAggregate

def keyedStepDot(name: str) -> str:
    return f"""\
digraph DAG {{
	"items" [localParallelism=default];
	"{name}" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "{name}" [label="distributed-partitioned", queueSize=1024];
	"{name}" -> "listSink(out)" [queueSize=1024];
}}"""


def mapStatefulPipeline(parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items([("a", 1)])).groupingKey(first)
    keyed.mapStateful(newState, runningSum).setLocalParallelism(parallelism).writeTo(Sinks.list("out"))
    return p


def rollingPipeline(parallelism=DEFAULT) -> Pipeline:
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items([("a", 1)])).groupingKey(first)
    keyed.rollingAggregate(COUNTING).setLocalParallelism(parallelism).writeTo(Sinks.list("out"))
    return p


def test_map_stateful_plans_to_this_dot_text():
    assert plan(mapStatefulPipeline()).toDotString() == keyedStepDot("map-stateful-keyed")


def test_map_stateful_is_one_vertex_behind_a_distributed_edge_partitioned_by_the_key():
    dag = plan(mapStatefulPipeline(parallelism=3))
    assert vertices(dag) == [("items", DEFAULT), ("map-stateful-keyed", 3), ("listSink(out)", 1)]
    edge = inbound(dag, "map-stateful-keyed")
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)
    assert supplier(dag, "map-stateful-keyed") == MapStatefulP(first, newState, runningSum, "map-stateful-keyed")


def test_rolling_aggregate_plans_to_this_dot_text():
    assert plan(rollingPipeline()).toDotString() == keyedStepDot("rolling-aggregate")


def test_rolling_aggregate_is_one_vertex_behind_a_distributed_edge_partitioned_by_the_key():
    dag = plan(rollingPipeline(parallelism=2))
    assert vertices(dag) == [("items", DEFAULT), ("rolling-aggregate", 2), ("listSink(out)", 1)]
    edge = inbound(dag, "rolling-aggregate")
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)
    assert supplier(dag, "rolling-aggregate") == RollingAggregateP(first, COUNTING, "rolling-aggregate")


# writeTo of several stages

WRITE_TO_SEVERAL_DOT = """\
digraph DAG {
	"items" [localParallelism=default];
	"items-2" [localParallelism=default];
	"map" [localParallelism=default];
	"listSink(out)" [localParallelism=1];
	"items" -> "listSink(out)" [headlabel=0, queueSize=1024];
	"items-2" -> "map" [queueSize=1024];
	"map" -> "listSink(out)" [headlabel=1, queueSize=1024];
}"""


def test_write_to_of_two_stages_plans_to_this_dot_text():
    p = Pipeline.create()
    left, right = sources(p, 2)
    p.writeTo(Sinks.list("out"), left, right.map(str))
    assert plan(p).toDotString() == WRITE_TO_SEVERAL_DOT


def test_write_to_of_three_stages_is_one_sink_vertex_with_inputs_at_ordinals_0_1_2():
    p = Pipeline.create()
    stages = sources(p, 3)
    sink = p.writeTo(Sinks.list("out"), *stages)
    dag = plan(p)
    assert sink.name() == "listSink(out)"
    assert [name for name, _ in vertices(dag)].count("listSink(out)") == 1
    assert [(e.sourceName, e.destOrdinal) for e in dag.getInboundEdges("listSink(out)")] == [
        ("items", 0), ("items-2", 1), ("items-3", 2)
    ]


def test_write_to_of_no_stage_is_refused_with_a_message_naming_the_sink():
    p = Pipeline.create()
    with pytest.raises(PipelineError, match=r"listSink\(out\)"):
        p.writeTo(Sinks.list("out"))


# apply

def normalized(stage):
    """A reusable piece: words in lower case, without empty ones."""
    return stage.flatMap(str.split).map(str.lower).filter(bool)


def test_apply_plans_exactly_as_the_stages_written_inline():
    applied, inline = Pipeline.create(), Pipeline.create()
    applied.readFrom(Sources.items(["A b"])).apply(normalized).writeTo(Sinks.list("out"))
    inline.readFrom(Sources.items(["A b"])).flatMap(str.split).map(str.lower).filter(bool).writeTo(Sinks.list("out"))
    assert plan(applied).toDotString() == plan(inline).toDotString()
    assert [name for name, _ in vertices(plan(applied))] == ["items", "fused(flat-map, map, filter)", "listSink(out)"]


# rebalance in front of the stages

REBALANCED_HASH_JOIN_DOT = HASH_JOIN_DOT.replace(
    '"items" -> "2-way hash-join-joiner" [', '"items" -> "2-way hash-join-joiner" [label="distributed", '
)


def test_rebalance_before_the_hash_join_primary_plans_to_this_dot_text():
    dag = plan(hashJoinPipeline(rebalance=lambda stage: stage.rebalance()))
    assert dag.toDotString() == REBALANCED_HASH_JOIN_DOT


def test_rebalance_before_the_hash_join_primary_distributes_only_the_primary_edge():
    dag = plan(hashJoinPipeline(rebalance=lambda stage: stage.rebalance()))
    assert edges(dag) == [
        'between("items", "2-way hash-join-joiner").distributed()',
        *HASH_JOIN_EDGES[1:],
    ]


def test_rebalance_by_key_before_the_hash_join_primary_partitions_the_primary_edge_by_that_key():
    dag = plan(hashJoinPipeline(rebalance=lambda stage: stage.rebalance(second)))
    primary = dag.getInboundEdges("2-way hash-join-joiner")[0]
    assert (primary.destOrdinal, primary.routing, primary.isDistributed, primary.keyFn) == (
        0, RoutingPolicy.PARTITIONED, True, second
    )
    assert edges(dag)[1:] == HASH_JOIN_EDGES[1:]


def test_rebalance_of_the_second_merged_stage_distributes_only_its_edge():
    p = Pipeline.create()
    left, right = sources(p, 2)
    left.merge(right.rebalance()).writeTo(Sinks.list("out"))
    assert [repr(e) for e in plan(p).getInboundEdges("merge")] == [
        'between("items", "merge")',
        'from("items-2").to("merge", 1).distributed()',
    ]


def test_rebalance_by_key_before_writing_several_stages_partitions_that_input_only():
    p = Pipeline.create()
    left, right = sources(p, 2)
    p.writeTo(Sinks.list("out"), left.rebalance(first), right)
    assert [repr(e) for e in plan(p).getInboundEdges("listSink(out)")] == [
        'between("items", "listSink(out)").partitioned(?).distributed()',
        'from("items-2").to("listSink(out)", 1)',
    ]


@pytest.mark.parametrize(
    "attach, vertex",
    [
        (lambda s: s.sort(), "sort"),
        (lambda s: s.mapUsingService(SERVICE, useService), "mapUsingService"),
        (lambda s: s.customTransform("mine", PROCESSORS), "mine"),
    ],
    ids=["sort", "mapUsingService", "customTransform"],
)
def test_rebalance_before_a_unicast_stage_makes_its_input_distributed(attach, vertex):
    p = Pipeline.create()
    attach(p.readFrom(Sources.items([1])).rebalance()).writeTo(Sinks.list("out"))
    edge = inbound(plan(p), vertex)
    assert (edge.routing, edge.isDistributed) == (RoutingPolicy.UNICAST, True)


@pytest.mark.parametrize(
    "attach, vertex",
    [
        (lambda k: k.distinct(), "distinct-prepare"),
        (lambda k: k.mapStateful(newState, runningSum), "map-stateful-keyed"),
        (lambda k: k.rollingAggregate(COUNTING), "rolling-aggregate"),
        (lambda k: k.customTransform("mine", PROCESSORS), "mine"),
    ],
    ids=["distinct", "mapStateful", "rollingAggregate", "customTransform"],
)
def test_a_keyed_stage_after_rebalance_by_another_key_still_partitions_by_its_own_key(attach, vertex):
    p = Pipeline.create()
    attach(p.readFrom(Sources.items([("a", 1)])).rebalance(second).groupingKey(first)).writeTo(Sinks.list("out"))
    edge = inbound(plan(p), vertex)
    assert (edge.routing, edge.isDistributed, edge.keyFn) == (RoutingPolicy.PARTITIONED, True, first)


# picklability, checked when the stage is defined

def closingOverLock():
    lock = threading.Lock()
    return lambda *args: lock


def unpicklableMessage(stage: str, parameter: str) -> str:
    return (
        rf"^Stage '{stage}': the {parameter} given at test_batch_stages_plan\.py:\d+ cannot be pickled, "
        r"so Spark cannot send it to its "
        r"workers \(TypeError: cannot pickle '_thread.lock' object\)"
    )


@pytest.mark.parametrize(
    "define, stage, parameter",
    [
        (
            lambda s: s.mapUsingService(ServiceFactories.nonSharedService(closingOverLock()), useService),
            "mapUsingService", "serviceFactory",
        ),
        (
            lambda s: s.filterUsingService(ServiceFactories.sharedService(makeService, closingOverLock()), useService),
            "filterUsingService", "serviceFactory",
        ),
        (lambda s: s.flatMapUsingService(SERVICE, closingOverLock()), "flatMapUsingService", "flatMapFn"),
        (lambda s: s.sort(key=closingOverLock()), "sort", "key"),
        (lambda s: s.hashJoin(s, JoinClause.onKeys(first, closingOverLock()), pair), "2-way hash-join", "clauses and mapFn"),
        (lambda s: s.innerHashJoin(s, CLAUSE, closingOverLock()), "2-way hash-join", "clauses and mapFn"),
        (lambda s: s.hashJoin2(s, CLAUSE, s, CLAUSE.projecting(closingOverLock()), triple), "3-way hash-join", "clauses and mapFn"),
        (lambda s: s.customTransform("mine", closingOverLock()), "mine", "processorSupplier"),
        (lambda s: s.groupingKey(first).customTransform("mine", closingOverLock()), "mine", "processorSupplier"),
        (lambda s: s.groupingKey(first).mapStateful(closingOverLock(), runningSum), "map-stateful-keyed", "createFn"),
        (lambda s: s.mapStateful(list, closingOverLock()), "map-stateful-global", "mapFn"),
        (lambda s: s.filterStateful(closingOverLock(), runningSum), "map-stateful-global", "createFn"),
        (lambda s: s.groupingKey(first).flatMapStateful(list, closingOverLock()), "flatmap-stateful-keyed", "flatMapFn"),
        (
            lambda s: s.groupingKey(first).rollingAggregate(AggregateOperations.summing(closingOverLock())),
            "rolling-aggregate", "aggrOp",
        ),
    ],
    ids=[
        "mapUsingService", "filterUsingService-destroyFn", "flatMapUsingService", "sort", "hashJoin",
        "innerHashJoin", "hashJoin2-projection", "customTransform", "keyed-customTransform",
        "mapStateful", "global-mapStateful", "filterStateful", "keyed-flatMapStateful", "rollingAggregate",
    ],
)
def test_an_unpicklable_function_is_refused_at_definition_naming_the_stage(define, stage, parameter):
    p = Pipeline.create()
    source = p.readFrom(Sources.items([("a", 1)]))
    with pytest.raises(PipelineError, match=unpicklableMessage(stage, parameter)):
        define(source)
    assert len(p.graph().transforms) == 1, "the refused stage must not be added"


def test_an_unpicklable_hash_join_builder_mapFn_is_refused_at_build():
    p = Pipeline.create()
    primary, other = sources(p, 2)
    builder = primary.hashJoinBuilder()
    builder.add(other, CLAUSE)
    with pytest.raises(PipelineError, match=unpicklableMessage("2-way hash-join", "clauses and mapFn")):
        builder.build(closingOverLock())
    assert len(p.graph().transforms) == 2


def test_an_unpicklable_rebalance_key_names_the_stage_being_rebalanced():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    with pytest.raises(PipelineError, match=unpicklableMessage("items", "keyFn")):
        source.rebalance(closingOverLock())
