"""Mistakes a PySpark or pandas user makes get errors that say what was expected and what to
write instead; every hint names calls that exist where it says they do."""

import re

import pytest

import sparkjet
from sparkjet.pipeline import BatchStage, Pipeline, PipelineError, Sinks, Sources, StreamStage, TestSources
from sparkjet.pipeline.habits import KINDS_JET_EQUIVALENTS, JET_EQUIVALENTS, WithHabits
from sparkjet.planner import Jet
from tests.conftest import here

THIS_FILE = "test_habits.py"

KINDS = {
    "BatchStage": lambda p: p.readFrom(Sources.items([1])),
    "BatchStageWithKey": lambda p: p.readFrom(Sources.items([1])).groupingKey(str),
    "SinkStage": lambda p: p.readFrom(Sources.items([1])).writeTo(Sinks.noop()),
    "StreamSourceStage": lambda p: p.readFrom(TestSources.itemStream(10)),
    "StreamStage": lambda p: p.readFrom(TestSources.itemStream(10)).withoutTimestamps(),
    "Pipeline": lambda p: p,
}
"""How to make an object of each kind that raises habits' hints."""

HABITS = sorted({name for table in (JET_EQUIVALENTS, *KINDS_JET_EQUIVALENTS.values()) for name in table})

ON_THE_OBJECT = re.compile(r"(?:^|[\s(])\.(\w+)\(")
ON_A_NAMED_OBJECT = re.compile(r"\b(stage|jet|[A-Z]\w*(?:\(\))?)\.(\w+)\(")
NAMED_OBJECTS = {"stage": (BatchStage, StreamStage), "jet": (Jet,), "Jet()": (Jet,)}


def hintOf(owner: object, name: str) -> str | None:
    """Return the hint of the AttributeError ``owner.name`` raises; None if it has none, or if
    ``owner`` has the name (a stream source's stage says to choose timestamps before its stream
    stage's names)."""
    try:
        getattr(owner, name)
    except AttributeError as error:
        message = str(error)
        return message.split("; use ", 1)[1] if "sparkjet speaks Jet; use " in message else None
    except PipelineError:
        return None
    return None


def wrongCalls(owner: object, hint: str) -> list[str]:
    """Return the calls ``hint`` names that do not exist where it says: on ``owner`` (``.x(``), on
    another stage (``stage.x(``), on the Jet client, or on a name sparkjet exports."""
    wrong = [f".{name}(" for name in ON_THE_OBJECT.findall(hint) if not hasattr(owner, name)]
    for receiver, name in ON_A_NAMED_OBJECT.findall(hint):
        classes = NAMED_OBJECTS.get(receiver) or (getattr(sparkjet, receiver, None),)
        if not any(hasattr(cls, name) for cls in classes if cls is not None):
            wrong.append(f"{receiver}.{name}(")
    return wrong


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_hint_names_calls_that_exist_where_it_says(kind):
    owner = KINDS[kind](Pipeline.create())
    assert type(owner).__name__ == kind
    hints = {name: hintOf(owner, name) for name in HABITS}
    wrong = {name: wrongCalls(owner, hint) for name, hint in hints.items() if hint is not None}
    assert {name: calls for name, calls in wrong.items() if calls} == {}
    assert all(ON_THE_OBJECT.search(hint) or ON_A_NAMED_OBJECT.search(hint) for hint in hints.values() if hint)


def test_a_grouped_stage_maps_values_after_it_aggregates():
    grouped = KINDS["BatchStageWithKey"](Pipeline.create())
    assert hintOf(grouped, "mapValues") == ".aggregate(AggregateOperations.toList()).map(lambda entry: (entry[0], fn(entry[1])))"
    assert hintOf(grouped, "sortBy").startswith(".aggregate(operation) first: a grouped stage emits nothing before it aggregates")


@pytest.mark.parametrize(
    "kind, name, hint",
    [
        ("Pipeline", "map", ".readFrom(source).map(...): a pipeline's stages start at a source's stage"),
        ("Pipeline", "run", "Jet().newJob(p).join() (jet.newJob(p) to go on while it runs)"),
        ("BatchStage", "select", ".map(lambda row: (row['a'], row['b'])): items are Python values "
                                 "(Sources.dataframe gives rows as dicts)"),
        ("BatchStage", "withColumn", ".map(lambda row: {**row, 'c': value}): items are Python values "
                                     "(Sources.dataframe gives rows as dicts)"),
        ("BatchStage", "cache", ".map(...), .writeTo(...) or any other stage on this one as often as needed: a stage "
                                "may feed several, and runs once per job, so there is nothing to cache"),
        ("StreamStage", "count", ".window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.counting()) "
                                 "(a count so far: .rollingAggregate(AggregateOperations.counting()))"),
    ],
)
def test_the_habits_the_issue_names_get_hints(kind, name, hint):
    assert hintOf(KINDS[kind](Pipeline.create()), name) == hint


def test_names_that_are_no_habit_keep_pythons_plain_error():
    p = Pipeline.create()
    with pytest.raises(AttributeError) as raised:
        p.readFrm
    assert str(raised.value) == "'Pipeline' object has no attribute 'readFrm'"
    assert (raised.value.name, raised.value.obj) == ("readFrm", p)


def test_a_class_of_factories_with_habits_gets_their_hints():
    factories = WithHabits("AggregateOperations", (), {"counting": staticmethod(lambda: 0)})
    with pytest.raises(AttributeError) as raised:
        factories.sum
    assert str(raised.value) == (
        "type object 'AggregateOperations' has no attribute 'sum': sparkjet speaks Jet; use "
        "AggregateOperations.summing(valueFn)"
    )
    assert factories.counting() == 0


@pytest.mark.parametrize("name, hint", [("count", "counting()"), ("sum", "summing(valueFn)")])
def test_aggregate_operations_count_and_sum_name_jets_operations(name, hint):
    assert hintOf(sparkjet.AggregateOperations, name) == f"AggregateOperations.{hint}"
    assert not wrongCalls(sparkjet.AggregateOperations, f"AggregateOperations.{hint}")


# what readFrom and writeTo are given


@pytest.mark.parametrize(
    "given, said",
    [
        ([1, 2], "not a list: write readFrom(Sources.items([1, 2]))"),
        ("books", "not a str: write readFrom(Sources.files('books')) to read the lines of the files in directory 'books'"),
        ((n for n in range(3)), "not a generator: write readFrom(Sources.items(items))"),
        (3, "not an int: write readFrom(Sources.files(directory)), Sources.items(items) or another of Sources' sources"),
    ],
)
def test_read_from_what_is_no_source_says_which_source_reads_it(given, said):
    with pytest.raises(PipelineError) as raised:
        Pipeline.create().readFrom(given)
    assert str(raised.value) == f"readFrom() at {THIS_FILE}:{here() - 1} takes a source, {said}"


@pytest.mark.spark
def test_read_from_a_dataframe_says_sources_dataframe(spark):
    df = spark.createDataFrame([(1,)], ["x"])
    with pytest.raises(PipelineError) as raised:
        Pipeline.create().readFrom(df)
    assert str(raised.value) == (
        f"readFrom() at {THIS_FILE}:{here() - 2} takes a source, not a pyspark DataFrame: "
        "write readFrom(Sources.dataframe(df)), which reads its rows as dicts"
    )


def test_write_to_a_name_says_sinks_files_or_sinks_list():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1]))
    line = here() - 1
    with pytest.raises(PipelineError) as raised:
        stage.writeTo("out")
    assert str(raised.value) == (
        f"Stage 'items' (defined at {THIS_FILE}:{line}): writeTo() takes a sink, not a str: write "
        "writeTo(Sinks.files('out')) to write text files in directory 'out', or writeTo(Sinks.list('out')) to read "
        "the items with jet.getList('out')"
    )
    with pytest.raises(PipelineError) as raised:
        p.writeTo([], stage)
    assert str(raised.value) == (
        f"Pipeline.writeTo() at {THIS_FILE}:{here() - 2}: writeTo() takes a sink, not a list: write "
        "writeTo(Sinks.list(name)), then jet.getList(name) once the job has run"
    )


def test_a_stream_stage_written_to_a_name_says_sinks_files_too():
    p = Pipeline.create()
    stage = p.readFrom(TestSources.itemStream(10)).withoutTimestamps()
    with pytest.raises(PipelineError, match=r"writeTo\(\) takes a sink, not a str: write writeTo\(Sinks.files\('out'\)\)"):
        stage.writeTo("out")
