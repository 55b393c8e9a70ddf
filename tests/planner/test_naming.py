"""Unique vertex names as Jet makes them, setName, and the pipeline's own DOT text."""

import pytest

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.pipeline.naming import addOrIncrementIndexInName, makeNamesUnique
from sparkjet.planner import plan


def vertexNames(p: Pipeline) -> list[str]:
    return [vertex.name for vertex in plan(p).vertices()]


def uniqueNames(p: Pipeline) -> list[str]:
    return [transform.name for transform in makeNamesUnique(p.graph()).transforms]


def test_three_logger_sinks_are_named_loggerSink_loggerSink_2_loggerSink_3():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    for _ in range(3):
        source.writeTo(Sinks.logger())
    assert vertexNames(p) == ["items", "loggerSink", "loggerSink-2", "loggerSink-3"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("foo", "foo-2"),
        ("foo-1", "foo-1-2"),
        ("foo-0", "foo-0-2"),
        ("foo-2", "foo-3"),
        ("foo-9", "foo-10"),
        ("foo-bar", "foo-bar-2"),
        ("foo-1-2", "foo-1-3"),
    ],
)
def test_index_in_name_is_added_or_incremented_as_in_jet(name, expected):
    assert addOrIncrementIndexInName(name) == expected


def test_two_stages_named_foo_1_become_foo_1_and_foo_1_2():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str).setName("foo-1").writeTo(Sinks.list("a"))
    source.map(str).setName("foo-1").writeTo(Sinks.list("b"))
    assert uniqueNames(p) == ["items", "foo-1", "listSink(a)", "foo-1-2", "listSink(b)"]


def test_a_generated_name_skips_a_name_the_user_took():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str).setName("map-2").writeTo(Sinks.list("a"))
    source.map(str).writeTo(Sinks.list("b"))
    source.map(str).writeTo(Sinks.list("c"))
    assert [n for n in uniqueNames(p) if n.startswith("map")] == ["map-2", "map", "map-3"]


def test_pipeline_dot_string_has_one_line_per_link_with_unique_names():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str).map(len).writeTo(Sinks.list("out"))
    source.writeTo(Sinks.logger())
    assert p.toDotString() == (
        "digraph Pipeline {\n"
        '\t"items" -> "map";\n'
        '\t"items" -> "loggerSink";\n'
        '\t"map" -> "map-2";\n'
        '\t"map-2" -> "listSink(out)";\n'
        "}"
    )


def test_pipeline_dot_string_escapes_quotes_in_names():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str).setName('say "hi"').writeTo(Sinks.logger())
    assert '\t"items" -> "say \\"hi\\"";' in p.toDotString().splitlines()


def test_setName_renames_the_vertex_of_a_stateless_stage():
    p = Pipeline.create()
    p.readFrom(Sources.items(["a b"])).setName("lines").map(str.upper).setName(
        "shout"
    ).writeTo(Sinks.list("out"))
    assert vertexNames(p) == ["lines", "shout", "listSink(out)"]


def test_setName_on_a_keyed_aggregation_renames_its_prepare_vertex_too():
    p = Pipeline.create()
    p.readFrom(Sources.items(["a"])).groupingKey(wholeItem()).aggregate(
        AggregateOperations.counting()
    ).setName("count-words").writeTo(Sinks.logger())
    assert vertexNames(p) == ["items", "count-words-prepare", "count-words", "loggerSink"]


def test_setName_on_a_global_aggregation_renames_its_prepare_vertex_too():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).aggregate(AggregateOperations.counting()).setName(
        "total"
    ).writeTo(Sinks.logger())
    assert vertexNames(p) == ["items", "total-prepare", "total", "loggerSink"]


def test_setName_names_the_stages_inside_a_fused_vertex():
    p = Pipeline.create()
    p.readFrom(Sources.items(["a"])).flatMap(str.split).setName("tokenize").filter(
        bool
    ).setName("keep-words").writeTo(Sinks.list("out"))
    assert vertexNames(p)[1] == "fused(tokenize, keep-words)"


def test_setName_returns_the_same_stage():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1])).map(str)
    assert stage.setName("x") == stage
    assert stage.name() == "x"


def test_names_are_made_unique_in_creation_order_not_in_naming_order():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    first = source.map(str)
    second = source.map(repr)
    second.setName("x")
    first.setName("x")
    first.writeTo(Sinks.list("a"))
    second.writeTo(Sinks.list("b"))
    assert uniqueNames(p)[1:3] == ["x", "x-2"]


def test_a_later_branch_gets_the_later_index_even_if_its_downstream_came_first():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    first = source.map(str)
    source.map(repr).map(len).writeTo(Sinks.list("b"))
    first.map(len).writeTo(Sinks.list("a"))
    assert uniqueNames(p) == [
        "items", "map", "map-2", "map-3", "listSink(b)", "map-4", "listSink(a)"
    ]
