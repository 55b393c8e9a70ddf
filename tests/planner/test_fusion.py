"""Fusion of map / filter / flat-map chains into one stage, run alone or inside plan()."""

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.pipeline.transforms import FilterTransform, FlatMapTransform, MapTransform
from sparkjet.planner import plan
from sparkjet.planner.fusion import FusedTransform, fuseStatelessChains


def double(x):
    return 2 * x


def positive(x):
    return x > 0


def twice(x):
    return [x, x]


def vertices(p: Pipeline) -> list[tuple[str, int]]:
    return [(v.name, v.localParallelism) for v in plan(p).vertices()]


def test_map_filter_flatMap_fuse_into_one_vertex_named_after_them():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).filter(positive).flatMap(twice).writeTo(
        Sinks.list("out")
    )
    assert [name for name, _ in vertices(p)] == [
        "items", "fused(map, filter, flat-map)", "listSink(out)"
    ]


def test_fused_transform_keeps_the_original_stages_in_order():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).filter(positive).flatMap(twice).writeTo(
        Sinks.list("out")
    )
    fused = fuseStatelessChains(p.graph()).transforms[1]
    assert isinstance(fused, FusedTransform)
    assert [type(stage) for stage in fused.stages] == [MapTransform, FilterTransform, FlatMapTransform]
    assert (fused.stages[0].mapFn, fused.stages[1].filterFn, fused.stages[2].flatMapFn) == (
        double, positive, twice
    )


def test_a_stage_with_two_downstream_stages_ends_the_chain():
    p = Pipeline.create()
    mapped = p.readFrom(Sources.items([1])).map(double)
    mapped.filter(positive).writeTo(Sinks.list("a"))
    mapped.flatMap(twice).writeTo(Sinks.list("b"))
    assert [name for name, _ in vertices(p)] == [
        "items", "map", "filter", "listSink(a)", "flat-map", "listSink(b)"
    ]


def test_a_chain_fuses_up_to_a_branching_stage_which_feeds_both_branches():
    p = Pipeline.create()
    kept = p.readFrom(Sources.items([1])).map(double).filter(positive)
    kept.writeTo(Sinks.list("a"))
    kept.writeTo(Sinks.list("b"))
    dag = plan(p)
    assert [e.destName for e in dag.getOutboundEdges("fused(map, filter)")] == [
        "listSink(a)", "listSink(b)"
    ]


def test_a_different_explicit_local_parallelism_ends_the_chain():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).filter(positive).setLocalParallelism(2).writeTo(
        Sinks.list("out")
    )
    assert vertices(p)[1:3] == [("map", -1), ("filter", 2)]


def test_fused_vertex_keeps_the_first_stages_parallelism():
    p = Pipeline.create()
    (
        p.readFrom(Sources.items([1]))
        .map(double).setLocalParallelism(3)
        .filter(positive).setLocalParallelism(3)
        .flatMap(twice)
        .writeTo(Sinks.list("out"))
    )
    assert vertices(p)[1:3] == [("fused(map, filter)", 3), ("flat-map", -1)]


def test_a_single_stateless_stage_is_not_renamed_or_wrapped():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).writeTo(Sinks.list("out"))
    fused = fuseStatelessChains(p.graph())
    assert type(fused.transforms[1]) is MapTransform
    assert fused.transforms[1].name == "map"


def test_stateful_stages_end_the_chain_and_are_not_fused():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).groupingKey(wholeItem()).aggregate(
        AggregateOperations.counting()
    ).map(str).writeTo(Sinks.list("out"))
    assert [t.name for t in fuseStatelessChains(p.graph()).transforms] == [
        "items", "map", "group-and-aggregate", "map", "listSink(out)"
    ]


def test_fusion_alone_is_a_pure_function_of_the_graph():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(double).map(double).filter(positive).aggregate(
        AggregateOperations.counting()
    ).writeTo(Sinks.logger())
    graph = p.graph()
    fused = fuseStatelessChains(graph)
    assert graph == p.graph()
    assert len(graph.transforms) == 6
    assert [t.name for t in fused.transforms] == [
        "items", "fused(map, map, filter)", "aggregate", "loggerSink"
    ]
    assert fused.upstream == ((), (0,), (1,), (2,))


def test_fusion_without_a_chain_returns_an_equal_graph():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(double).writeTo(Sinks.list("a"))
    source.filter(positive).writeTo(Sinks.list("b"))
    assert fuseStatelessChains(p.graph()) == p.graph()
