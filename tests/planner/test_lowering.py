"""Lowering: each stage kind becomes the vertices, edges and processors Jet's planner makes."""

import attrs

from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)
from sparkjet.coredag.processors.sinks import FilesSinkP, ListSinkP, LoggerSinkP
from sparkjet.coredag.processors.sources import ItemsP, ReadFilesP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan

DEFAULT = -1
COUNTING = AggregateOperations.counting()
COUNTING_WITHOUT_COMBINE = attrs.evolve(COUNTING, combineFn=None)
KEY = wholeItem()


def first(item):
    return item[0]


def vertices(dag) -> list[tuple[str, int]]:
    return [(v.name, v.localParallelism) for v in dag.vertices()]


def inbound(dag, name):
    (edge,) = dag.getInboundEdges(name)
    return edge


def keyedPipeline(op, keyFn=KEY) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.items("abca")).groupingKey(keyFn).aggregate(op).writeTo(Sinks.list("out"))
    return p


def globalPipeline(op) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.items("abca")).aggregate(op).writeTo(Sinks.list("out"))
    return p


# keyed aggregation


def test_keyed_aggregation_with_combine_is_prepare_then_aggregate():
    dag = plan(keyedPipeline(COUNTING))
    assert vertices(dag) == [
        ("items", DEFAULT),
        ("group-and-aggregate-prepare", DEFAULT),
        ("group-and-aggregate", DEFAULT),
        ("listSink(out)", 1),
    ]


def test_keyed_prepare_gets_a_local_edge_partitioned_by_the_key():
    dag = plan(keyedPipeline(COUNTING, first))
    edge = inbound(dag, "group-and-aggregate-prepare")
    assert (edge.sourceName, edge.routing, edge.isDistributed, edge.keyFn) == (
        "items", RoutingPolicy.PARTITIONED, False, first
    )


def test_keyed_prepare_feeds_the_aggregate_by_a_distributed_partitioned_edge_on_the_key():
    dag = plan(keyedPipeline(COUNTING))
    edge = inbound(dag, "group-and-aggregate")
    assert (edge.sourceName, edge.routing, edge.isDistributed) == (
        "group-and-aggregate-prepare", RoutingPolicy.PARTITIONED, True
    )
    assert edge.keyFn(("word", 7)) == "word"


def test_keyed_aggregation_without_combine_is_one_vertex_behind_a_distributed_partitioned_edge():
    dag = plan(keyedPipeline(COUNTING_WITHOUT_COMBINE, first))
    assert [name for name, _ in vertices(dag)] == ["items", "group-and-aggregate", "listSink(out)"]
    edge = inbound(dag, "group-and-aggregate")
    assert (edge.sourceName, edge.routing, edge.isDistributed, edge.keyFn) == (
        "items", RoutingPolicy.PARTITIONED, True, first
    )


def test_keyed_aggregation_without_combine_has_no_cluster_in_dot():
    dot = plan(keyedPipeline(COUNTING_WITHOUT_COMBINE)).toDotString()
    assert "subgraph" not in dot
    assert '\t"items" -> "group-and-aggregate" [label="distributed-partitioned", queueSize=1024];' in dot.splitlines()


# global aggregation


def test_global_aggregation_is_prepare_then_a_single_aggregate_processor():
    dag = plan(globalPipeline(COUNTING))
    assert vertices(dag) == [
        ("items", DEFAULT),
        ("aggregate-prepare", DEFAULT),
        ("aggregate", 1),
        ("listSink(out)", 1),
    ]


def test_global_prepare_gets_a_local_unicast_edge_and_sends_all_to_one_distributed():
    dag = plan(globalPipeline(COUNTING))
    into = inbound(dag, "aggregate-prepare")
    assert (into.routing, into.isDistributed) == (RoutingPolicy.UNICAST, False)
    out = inbound(dag, "aggregate")
    assert (out.sourceName, out.routing, out.isDistributed) == (
        "aggregate-prepare", RoutingPolicy.ALL_TO_ONE, True
    )


def test_global_aggregation_without_combine_is_one_vertex_of_parallelism_1_behind_all_to_one():
    dag = plan(globalPipeline(COUNTING_WITHOUT_COMBINE))
    assert vertices(dag) == [("items", DEFAULT), ("aggregate", 1), ("listSink(out)", 1)]
    edge = inbound(dag, "aggregate")
    assert (edge.sourceName, edge.routing, edge.isDistributed) == (
        "items", RoutingPolicy.ALL_TO_ONE, True
    )


# sinks


def sinkParallelism(sink, setParallelism=None) -> int:
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1])).writeTo(sink)
    if setParallelism is not None:
        stage.setLocalParallelism(setParallelism)
    return plan(p).getVertex(sink.name).localParallelism


def test_list_and_logger_sinks_default_to_parallelism_1_files_sink_to_the_default(tmp_path):
    assert sinkParallelism(Sinks.list("out")) == 1
    assert sinkParallelism(Sinks.logger()) == 1
    assert sinkParallelism(Sinks.files(str(tmp_path / "out"))) == DEFAULT


def test_an_explicit_sink_parallelism_wins_over_the_sinks_default(tmp_path):
    assert sinkParallelism(Sinks.logger(), 3) == 3
    assert sinkParallelism(Sinks.files(str(tmp_path / "out")), 2) == 2


# parallelism and ordinals


def test_setLocalParallelism_propagates_to_the_vertices_of_each_stage():
    p = Pipeline.create()
    (
        p.readFrom(Sources.items("ab")).setLocalParallelism(2)
        .map(str.upper).setLocalParallelism(3)
        .groupingKey(KEY).aggregate(COUNTING).setLocalParallelism(4)
        .aggregate(AggregateOperations.toList()).setLocalParallelism(5)
        .writeTo(Sinks.list("out")).setLocalParallelism(6)
    )
    assert vertices(plan(p)) == [
        ("items", 2),
        ("map", 3),
        ("group-and-aggregate-prepare", 4),
        ("group-and-aggregate", 4),
        ("aggregate-prepare", 5),
        ("aggregate", 1),
        ("listSink(out)", 6),
    ]


def test_branching_gives_the_source_outbound_ordinals_0_and_1():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str).writeTo(Sinks.list("a"))
    source.filter(bool).writeTo(Sinks.list("b"))
    dag = plan(p)
    assert [(e.destName, e.sourceOrdinal, e.destOrdinal) for e in dag.getOutboundEdges("items")] == [
        ("map", 0, 0),
        ("filter", 1, 0),
    ]
    lines = dag.toDotString().splitlines()
    assert '\t"items" -> "map" [taillabel=0, queueSize=1024];' in lines
    assert '\t"items" -> "filter" [taillabel=1, queueSize=1024];' in lines


def test_branching_into_a_keyed_aggregation_keeps_counting_ordinals():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.writeTo(Sinks.logger())
    source.groupingKey(KEY).aggregate(COUNTING).writeTo(Sinks.list("a"))
    dag = plan(p)
    assert [(e.destName, e.sourceOrdinal) for e in dag.getOutboundEdges("items")] == [
        ("loggerSink", 0),
        ("group-and-aggregate-prepare", 1),
    ]
    assert dag.validate() is dag


# processor suppliers


def supplier(dag, name):
    return dag.getVertex(name).processorSupplier


def test_sources_lower_to_read_files_and_items_processors(tmp_path):
    directory = str(tmp_path)
    p = Pipeline.create()
    p.readFrom(Sources.files(directory, "*.txt", "latin-1")).writeTo(Sinks.logger())
    p.readFrom(Sources.items(x for x in range(3))).writeTo(Sinks.list("out"))
    dag = plan(p)
    assert supplier(dag, f"filesSource({tmp_path / '*.txt'})") == ReadFilesP(directory, "*.txt", "latin-1")
    assert supplier(dag, "items") == ItemsP((0, 1, 2))


def test_a_fused_vertex_runs_one_stateless_chain_with_steps_named_after_the_stages():
    p = Pipeline.create()
    p.readFrom(Sources.items(["a b"])).flatMap(str.split).filter(bool).map(str.upper).setName(
        "shout"
    ).writeTo(Sinks.list("out"))
    dag = plan(p)
    assert supplier(dag, "fused(flat-map, filter, shout)") == StatelessChainP(
        (
            StatelessStep(StepKind.FLAT_MAP, str.split, "flat-map"),
            StatelessStep(StepKind.FILTER, bool, "filter"),
            StatelessStep(StepKind.MAP, str.upper, "shout"),
        )
    )


def test_a_lone_stateless_stage_is_a_chain_of_one_step():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str).writeTo(Sinks.list("out"))
    assert supplier(plan(p), "map") == StatelessChainP((StatelessStep(StepKind.MAP, str, "map"),))


def test_keyed_aggregation_processors_carry_the_key_the_operation_and_the_stage_name():
    dag = plan(keyedPipeline(COUNTING, first))
    assert supplier(dag, "group-and-aggregate-prepare") == AccumulateByKeyP(first, COUNTING, "group-and-aggregate")
    assert supplier(dag, "group-and-aggregate") == CombineByKeyP(COUNTING, "group-and-aggregate")
    single = plan(keyedPipeline(COUNTING_WITHOUT_COMBINE, first))
    assert supplier(single, "group-and-aggregate") == AggregateByKeyP(
        first, COUNTING_WITHOUT_COMBINE, "group-and-aggregate"
    )


def test_global_aggregation_processors_carry_the_operation_and_the_stage_name():
    dag = plan(globalPipeline(COUNTING))
    assert supplier(dag, "aggregate-prepare") == AccumulateP(COUNTING, "aggregate")
    assert supplier(dag, "aggregate") == CombineP(COUNTING, "aggregate")
    single = plan(globalPipeline(COUNTING_WITHOUT_COMBINE))
    assert supplier(single, "aggregate") == AggregateP(COUNTING_WITHOUT_COMBINE, "aggregate")


def test_sinks_lower_to_list_logger_and_files_processors(tmp_path):
    out = str(tmp_path / "out")
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.writeTo(Sinks.list("words"))
    source.writeTo(Sinks.logger())
    source.writeTo(Sinks.files(out))
    dag = plan(p)
    assert supplier(dag, "listSink(words)") == ListSinkP("words")
    assert supplier(dag, "loggerSink") == LoggerSinkP()
    assert supplier(dag, f"filesSink({out})") == FilesSinkP(out)
