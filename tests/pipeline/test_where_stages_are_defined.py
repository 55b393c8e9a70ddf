"""Every stage records the line of the user's code that defined it; definition errors name it."""

import os
import pickle
import threading

import pytest

from sparkjet.coredag.errors import SourceLocation
from sparkjet.pipeline import AggregateOperations, Pipeline, PipelineError, Sinks, Sources
from sparkjet.pipeline.transforms import MapTransform
from tests.conftest import here

THIS_FILE = os.path.basename(__file__)


def definedAt(stage) -> SourceLocation:
    return stage.pipeline.transformAt(stage.index).definedAt


def test_each_stage_records_the_line_of_the_call_that_defined_it():
    p = Pipeline.create()
    source = p.readFrom(Sources.items(["a b"]))
    sourceLine = here() - 1
    (
        source
        .flatMap(str.split)
        .map(str.upper)
    )
    mapLine = here() - 2
    sink = source.writeTo(Sinks.list("out"))
    sinkLine = here() - 1
    assert definedAt(source) == SourceLocation(__file__, sourceLine)
    assert p.transformAt(2).definedAt == SourceLocation(__file__, mapLine)
    assert p.transformAt(1).definedAt == SourceLocation(__file__, mapLine - 1)
    assert definedAt(sink) == SourceLocation(__file__, sinkLine)


def test_a_location_prints_as_file_and_line():
    assert str(SourceLocation("/home/me/jobs/wordcount.py", 12)) == "wordcount.py:12"


def test_a_stage_defined_in_a_helper_of_the_user_records_the_helpers_line():
    def countWords(stage):
        return stage.flatMap(str.split)

    helperLine = here() - 2
    stage = Pipeline.create().readFrom(Sources.items(["a"])).apply(countWords)
    assert definedAt(stage) == SourceLocation(__file__, helperLine)


def test_renaming_keeps_where_the_stage_was_defined():
    stage = Pipeline.create().readFrom(Sources.items([1])).map(str)
    line = here() - 1
    stage.setName("render").setLocalParallelism(2)
    assert definedAt(stage) == SourceLocation(__file__, line)


def test_where_a_stage_was_defined_leaves_its_equality_and_hash_alone_and_pickles():
    first = MapTransform("map", str)
    second = MapTransform("map", str)
    assert first.definedAt != second.definedAt
    assert first == second and hash(first) == hash(second)
    assert pickle.loads(pickle.dumps(first)).definedAt == first.definedAt


def lockedFn():
    lock = threading.Lock()
    return lambda item: (lock, item)


def test_a_non_picklable_function_is_refused_naming_the_line_that_gave_it():
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        source.map(lockedFn())
    line = here() - 1
    assert str(raised.value).startswith(
        f"Stage 'map': the mapFn given at {THIS_FILE}:{line} cannot be pickled, so Spark cannot send it"
    )


def test_a_non_picklable_key_names_the_line_of_groupingKey():
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        source.groupingKey(lockedFn())
    line = here() - 1
    assert str(raised.value).startswith(f"Stage 'items': the keyFn given at {THIS_FILE}:{line} cannot be pickled")


def test_what_is_not_a_function_is_refused_at_definition_naming_the_line():
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        source.map("upper")
    line = here() - 1
    assert str(raised.value) == f"Stage 'map': the mapFn given at {THIS_FILE}:{line} must be a function, got str 'upper'"


def test_what_is_not_an_aggregate_operation_is_refused_at_definition_naming_the_line():
    source = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        source.groupingKey(str).aggregate(len)
    line = here() - 1
    assert str(raised.value) == (
        f"Stage 'group-and-aggregate': the aggrOp given at {THIS_FILE}:{line} must be an AggregateOperation "
        "(see AggregateOperations), got builtin_function_or_method <built-in function len>"
    )


def test_a_co_aggregation_checks_each_of_its_operations():
    p = Pipeline.create()
    first, second = p.readFrom(Sources.items([1])), p.readFrom(Sources.items([2]))
    with pytest.raises(PipelineError, match=r"^Stage '2-way co-aggregate': the aggrOp given at .* must be an"):
        first.aggregate2(AggregateOperations.counting(), second, sum)


def test_a_bad_parallelism_names_where_the_stage_was_defined():
    stage = Pipeline.create().readFrom(Sources.items([1])).map(str)
    line = here() - 1
    with pytest.raises(PipelineError) as raised:
        stage.setLocalParallelism(0)
    assert str(raised.value) == (
        f"Stage 'map' (defined at {THIS_FILE}:{line}): Parallelism must be either -1 or a positive number, got 0"
    )


def test_a_merge_with_a_stage_of_another_pipeline_names_where_the_merge_is():
    stage = Pipeline.create().readFrom(Sources.items([1]))
    other = Pipeline.create().readFrom(Sources.items([2]))
    with pytest.raises(PipelineError) as raised:
        stage.merge(other)
    line = here() - 1
    assert str(raised.value) == (
        f"Stage 'merge' (defined at {THIS_FILE}:{line}): the stages ['items'] belong to another pipeline"
    )
