"""Jobs on Spark: aggregations, dropped items, and errors that name what and where."""

import os
import re

import attrs
import pytest

from sparkjet.coredag import InputError, OutputError, UserFunctionError
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import PlanningError

pytestmark = pytest.mark.spark


def run(jet, p: Pipeline, listName: str) -> list:
    jet.newJob(p).join()
    return list(jet.getList(listName))


def test_global_counting_of_empty_input_gives_zero(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([])).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("n"))
    assert run(jet, p, "n") == [0]


def test_single_stage_global_aggregation_equals_two_stage(jet):
    single = attrs.evolve(AggregateOperations.summing(lambda x: x), combineFn=None)
    results = []
    for name, op in [("two", AggregateOperations.summing(lambda x: x)), ("one", single)]:
        p = Pipeline.create()
        p.readFrom(Sources.items(range(1000))).aggregate(op).writeTo(Sinks.list(name))
        results.append(run(jet, p, name))
    assert results == [[499500], [499500]]


def test_averaging_and_to_list_per_key(jet):
    items = [(k % 3, k) for k in range(30)]
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(items)).groupingKey(lambda kv: kv[0])
    stage.aggregate(AggregateOperations.averaging(lambda kv: kv[1])).writeTo(Sinks.list("avg"))
    stage.aggregate(AggregateOperations.toList()).writeTo(Sinks.list("all"))
    jet.newJob(p).join()
    expected = {key: [kv for kv in items if kv[0] == key] for key in range(3)}
    assert dict(jet.getList("avg")) == {
        key: sum(v for _, v in kvs) / len(kvs) for key, kvs in expected.items()
    }
    assert {key: sorted(values) for key, values in jet.getList("all")} == expected


def test_single_stage_keyed_aggregation_equals_counter(jet):
    words = ["a", "b", "a", "c", "a", "b"] * 50
    p = Pipeline.create()
    counting = attrs.evolve(AggregateOperations.counting(), combineFn=None)
    p.readFrom(Sources.items(words)).groupingKey(wholeItem()).aggregate(counting).writeTo(Sinks.list("c"))
    assert dict(run(jet, p, "c")) == {"a": 150, "b": 100, "c": 50}


def test_map_returning_none_drops_the_item(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(lambda x: x if x % 2 else None).writeTo(Sinks.list("odd"))
    assert sorted(run(jet, p, "odd")) == [1, 3, 5, 7, 9]


def test_branches_feed_two_sinks(jet):
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(range(100)))
    numbers.map(lambda x: x * 2).writeTo(Sinks.list("doubled"))
    numbers.filter(lambda x: x < 5).writeTo(Sinks.list("small"))
    jet.newJob(p).join()
    assert sorted(jet.getList("doubled")) == [x * 2 for x in range(100)]
    assert sorted(jet.getList("small")) == [0, 1, 2, 3, 4]


def test_logger_sink_runs(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(["logged"])).writeTo(Sinks.logger())
    jet.newJob(p).join()


def test_failing_function_names_the_original_stage_inside_a_fused_vertex(jet):
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(["to be", "or not"]))
        .flatMap(str.split)
        .filter(lambda word: 1 / (len(word) - 3) != 0)
        .setName("drop-short-words")
        .writeTo(Sinks.list("words"))
    )
    with pytest.raises(UserFunctionError) as failure:
        jet.newJob(p).join()
    assert re.fullmatch(
        r"Stage 'drop-short-words' \(defined at test_jet_jobs\.py:\d+\) failed on item 'not': "
        r"ZeroDivisionError: division by zero",
        str(failure.value),
    )
    assert isinstance(failure.value.__cause__, ZeroDivisionError)
    assert "ZeroDivisionError" in failure.value.traceback


def test_failing_item_is_shortened(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(["x" * 500])).map(int).writeTo(Sinks.list("n"))
    with pytest.raises(UserFunctionError) as failure:
        jet.newJob(p).join()
    assert failure.value.itemRepr.startswith("'xxx") and len(failure.value.itemRepr) < 100
    assert isinstance(failure.value.__cause__, ValueError)


def test_failing_key_function_names_the_aggregation(jet):
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([{"k": 1}, {}])).groupingKey(lambda d: d["k"])
    stage.aggregate(AggregateOperations.counting()).setName("count-by-k").writeTo(Sinks.list("c"))
    failure = r"^Stage 'count-by-k' \(defined at test_jet_jobs\.py:\d+\) failed on item \{\}: KeyError"
    with pytest.raises(UserFunctionError, match=failure):
        jet.newJob(p).join()


def test_missing_input_directory_fails_at_submission(jet, tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.files(str(tmp_path / "absent"))).writeTo(Sinks.list("lines"))
    with pytest.raises(InputError, match=f"the directory '{tmp_path / 'absent'}' does not exist"):
        jet.newJob(p)


def test_no_file_matching_the_glob_fails_at_submission(jet, tmp_path):
    (tmp_path / "a.log").write_text("x\n")
    p = Pipeline.create()
    p.readFrom(Sources.files(str(tmp_path), "*.txt")).writeTo(Sinks.list("lines"))
    with pytest.raises(InputError, match=r"no file in '.*' matches the glob '\*\.txt'"):
        jet.newJob(p)


def test_existing_output_directory_is_refused_and_left_untouched(jet, tmp_path):
    (tmp_path / "keep.txt").write_text("precious")
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).writeTo(Sinks.files(str(tmp_path)))
    with pytest.raises(OutputError, match="already exists"):
        jet.newJob(p)
    assert os.listdir(tmp_path) == ["keep.txt"]
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_failed_job_leaves_no_output_directory(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items(range(100))).map(lambda x: 1 / (x - 77)).writeTo(Sinks.files(str(output)))
    with pytest.raises(UserFunctionError):
        jet.newJob(p).join()
    assert not output.exists()


def test_dangling_stage_fails_before_spark(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str)
    dangling = r"^These transforms have nothing attached to them: \[map\] \(defined at test_jet_jobs\.py:\d+\)"
    with pytest.raises(PlanningError, match=dangling):
        jet.newJob(p)
