"""Stage handles, the pipeline graph they build, picklability checks, sources and sinks."""

import os
import re
import threading

import attrs
import pytest

from sparkjet.pipeline import (
    AggregateOperations,
    BatchStage,
    BatchStageWithKey,
    Pipeline,
    PipelineError,
    Sinks,
    SinkStage,
    Sources,
    wholeItem,
)
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import (
    AggregateTransform,
    FilterTransform,
    FlatMapTransform,
    GroupTransform,
    MapTransform,
    SinkTransform,
    SourceTransform,
)

PICKLE_ADVICE = (
    "Do not capture open files, locks, connections or other process-bound objects in it; "
    "create them inside the function instead"
)


def lockedFn():
    """A function closing over a lock: cloudpickle cannot pickle it."""
    lock = threading.Lock()
    return lambda *args: (lock, args)


def lockMessage(stage: str, parameter: str) -> str:
    """The refusal as a pattern: it names the line of this file that gave the function."""
    return (
        rf"Stage '{stage}': the {parameter} given at test_stages\.py:\d+ cannot be pickled, so Spark "
        rf"cannot send it to its workers \(TypeError: cannot pickle '_thread\.lock' object\)\. "
        + re.escape(PICKLE_ADVICE)
    )


# Pipeline and stage handles


def test_create_returns_a_new_empty_pipeline():
    first, second = Pipeline.create(), Pipeline.create()
    assert first is not second
    assert first.graph() == PipelineGraph((), ())


def test_stage_handles_are_frozen():
    stage = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        stage.index = 5


def test_adding_a_stage_returns_a_new_handle_and_leaves_the_old_one_as_it_was():
    source = Pipeline.create().readFrom(Sources.items([1]))
    mapped = source.map(str)
    assert (source.index, mapped.index) == (0, 1)
    assert source.name() == "items"
    assert mapped != source


def test_handles_to_the_same_stage_are_equal():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    assert BatchStage(p, 0) == source
    assert hash(BatchStage(p, 0)) == hash(source)


def test_stages_of_different_pipelines_are_not_equal():
    first = Pipeline.create().readFrom(Sources.items([1]))
    second = Pipeline.create().readFrom(Sources.items([2]))
    assert first != second


def test_stage_methods_build_the_expected_pipeline_graph():
    p = Pipeline.create()
    source = p.readFrom(Sources.items(["a b"]))
    keyed = source.map(str.lower).filter(bool).flatMap(str.split).groupingKey(wholeItem())
    counted = keyed.aggregate(AggregateOperations.counting())
    sink = counted.aggregate(AggregateOperations.toList()).writeTo(Sinks.list("out"))
    graph = p.graph()
    assert [type(t) for t in graph.transforms] == [
        SourceTransform, MapTransform, FilterTransform, FlatMapTransform,
        GroupTransform, AggregateTransform, SinkTransform,
    ]
    assert [t.name for t in graph.transforms] == [
        "items", "map", "filter", "flat-map", "group-and-aggregate", "aggregate", "listSink(out)"
    ]
    assert graph.upstream == ((), (0,), (1,), (2,), (3,), (4,), (5,))
    assert (type(keyed), type(counted), type(sink)) == (BatchStageWithKey, BatchStage, SinkStage)
    assert (counted.index, sink.index) == (4, 6)


def test_transforms_hold_the_users_functions():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    op = AggregateOperations.counting()
    source.map(str).filter(bool).flatMap(list).groupingKey(len).aggregate(op)
    _, mapT, filterT, flatMapT, groupT = p.graph().transforms
    assert (mapT.mapFn, filterT.filterFn, flatMapT.flatMapFn) == (str, bool, list)
    assert (groupT.keyFn, groupT.aggrOp) == (len, op)
    assert p.graph().transforms[0].source == Sources.items([1])


def test_groupingKey_adds_no_stage_and_remembers_the_key():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    keyed = source.groupingKey(len)
    assert len(p.graph().transforms) == 1
    assert (keyed.index, keyed.keyFn) == (source.index, len)


def test_branching_gives_one_stage_several_downstream_stages():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str)
    source.filter(bool)
    assert p.graph().downstream(0) == (1, 2)


def test_wholeItem_is_the_identity():
    item = ("a", 1)
    assert wholeItem()(item) is item


# setLocalParallelism and setName


def test_setLocalParallelism_of_zero_raises_naming_the_stage():
    stage = Pipeline.create().readFrom(Sources.items([1])).map(str)
    with pytest.raises(PipelineError) as raised:
        stage.setLocalParallelism(0)
    assert re.fullmatch(
        r"Stage 'map' \(defined at test_stages\.py:\d+\): Parallelism must be either -1 or a positive "
        r"number, got 0",
        str(raised.value),
    )


def test_setLocalParallelism_accepts_minus_one_and_positive_numbers():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1])).map(str)
    assert stage.setLocalParallelism(4) == stage
    assert p.transformAt(stage.index).localParallelism == 4
    stage.setLocalParallelism(-1)
    assert p.transformAt(stage.index).localParallelism == -1


def test_setName_with_an_empty_name_raises():
    stage = Pipeline.create().readFrom(Sources.items([1])).map(str)
    with pytest.raises(PipelineError) as raised:
        stage.setName("")
    assert re.fullmatch(r"Stage 'map' \(defined at test_stages\.py:\d+\): setName needs a non-empty name", str(raised.value))


def test_setName_with_a_nul_character_raises():
    stage = Pipeline.create().readFrom(Sources.items([1])).map(str)
    with pytest.raises(PipelineError) as raised:
        stage.setName("a\x00b")
    assert str(raised.value).endswith(": setName('a\\x00b'): a name cannot hold the NUL character, which DOT cannot write")


# picklability at definition


def test_a_map_closing_over_a_lock_is_rejected_naming_the_stage_and_parameter():
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        source.map(lockedFn())
    assert re.fullmatch(lockMessage("map", "mapFn"), str(raised.value))


def test_a_map_closing_over_a_file_open_for_writing_is_rejected(tmp_path):
    source = Pipeline.create().readFrom(Sources.items([1]))
    with open(tmp_path / "log.txt", "w") as log:
        with pytest.raises(PipelineError) as raised:
            source.map(lambda item: log.write(str(item)))
    message = str(raised.value)
    assert re.match(r"Stage 'map': the mapFn given at test_stages\.py:\d+ cannot be pickled, so Spark", message)
    assert f"(PicklingError: cannot pickle the file '{tmp_path / 'log.txt'}')" in message
    assert message.endswith(PICKLE_ADVICE)


@pytest.mark.parametrize(
    ("define", "stage", "parameter"),
    [
        (lambda s, fn: s.filter(fn), "filter", "filterFn"),
        (lambda s, fn: s.flatMap(fn), "flat-map", "flatMapFn"),
        (lambda s, fn: s.groupingKey(fn), "items", "keyFn"),
        (
            lambda s, fn: s.aggregate(attrs.evolve(AggregateOperations.counting(), accumulateFn=fn)),
            "aggregate",
            "aggrOp",
        ),
        (
            lambda s, fn: s.groupingKey(len).aggregate(
                attrs.evolve(AggregateOperations.counting(), accumulateFn=fn)
            ),
            "group-and-aggregate",
            "aggrOp",
        ),
    ],
)
def test_every_user_function_is_checked_at_definition(define, stage, parameter):
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        define(source, lockedFn())
    assert re.fullmatch(lockMessage(stage, parameter), str(raised.value))


def test_a_rejected_stage_is_not_added_to_the_pipeline():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    with pytest.raises(PipelineError):
        source.map(lockedFn())
    assert [t.name for t in p.graph().transforms] == ["items"]


def test_pipeline_error_is_a_value_error():
    assert issubclass(PipelineError, ValueError)


# sources and sinks


def test_files_source_is_named_after_its_directory_and_glob():
    assert Sources.files("/data/books").name == f"filesSource({os.path.join('/data/books', '*')})"
    assert Sources.files("/data/books", "*.txt").name == "filesSource(/data/books/*.txt)"
    assert Sources.files("/data/books/", "a?.csv").name == "filesSource(/data/books/a?.csv)"


def test_files_source_keeps_directory_glob_and_charset():
    source = Sources.files("/d", "*.log", "latin-1")
    assert (source.directory, source.glob, source.charset) == ("/d", "*.log", "latin-1")
    assert (Sources.files("/d").glob, Sources.files("/d").charset) == ("*", "utf-8")


def test_items_source_materializes_a_one_shot_iterable():
    generated = (n * n for n in range(4))
    source = Sources.items(generated)
    assert source.items == (0, 1, 4, 9)
    assert source.items == (0, 1, 4, 9)
    assert source.name == "items"


def test_items_source_rejects_unpicklable_items():
    with pytest.raises(PipelineError) as raised:
        Sources.items([threading.Lock()])
    assert re.fullmatch(lockMessage("items", "items"), str(raised.value))


def test_sinks_are_named_as_in_jet():
    assert Sinks.list("x").name == "listSink(x)"
    assert Sinks.list("x").listName == "x"
    assert Sinks.logger().name == "loggerSink"
    assert Sinks.files("d").name == "filesSink(d)"
    assert Sinks.files("d").directory == "d"


def test_writeTo_names_the_sink_stage_after_the_sink():
    p = Pipeline.create()
    sink = p.readFrom(Sources.items([1])).writeTo(Sinks.files("/tmp/out"))
    assert sink.name() == "filesSink(/tmp/out)"
    assert p.graph().transforms[sink.index].sink == Sinks.files("/tmp/out")


def test_pipeline_is_empty_until_a_stage_is_added():
    """Jet's PipelineTest.isEmpty."""
    p1, p2 = Pipeline.create(), Pipeline.create()
    p2.readFrom(Sources.items([1, 2, 3]))
    assert p1.isEmpty() and not p2.isEmpty()
