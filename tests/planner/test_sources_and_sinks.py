"""Sources.json, Sources.dataframe, file URLs read by Spark; Sinks.json, noop and dataframe."""

import json
import os
import sys
from collections import Counter

import cloudpickle
import pytest

from sparkjet.coredag import InputError, JobError, OutputError, UserFunctionError
from sparkjet.coredag.processors.sinks import DataFrameSinkP, JsonFilesSinkP, NoopSinkP
from sparkjet.coredag.processors.sources import DataFrameSourceP, ReadJsonP
from sparkjet.pipeline import AggregateOperations, Pipeline, PipelineError, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from tests.conftest import CORPUS, PROJECT, here, run, tokenize

THIS_FILE = os.path.basename(__file__)

DEFAULT = -1


class StandInDataFrame:
    """Enough of a DataFrame for planning, which never reads it."""

    rdd = None


def vertices(dag) -> list[tuple[str, int]]:
    return [(v.name, v.localParallelism) for v in dag.vertices()]


def supplier(dag, name):
    return dag.getVertex(name).processorSupplier


# planning


def test_new_sources_and_sinks_lower_to_vertices_named_as_sparkjet_names_them(tmp_path):
    frame = StandInDataFrame()
    p = Pipeline.create()
    p.readFrom(Sources.json(str(tmp_path), "*.json", "latin-1")).writeTo(Sinks.json(str(tmp_path / "out")))
    rows = p.readFrom(Sources.dataframe(frame))
    rows.writeTo(Sinks.noop())
    rows.writeTo(Sinks.dataframe("rows", "word string, count long"))
    dag = plan(p)
    assert vertices(dag) == [
        (f"jsonSource({tmp_path / '*.json'})", DEFAULT),
        (f"jsonSink({tmp_path / 'out'})", DEFAULT),
        ("dataframeSource", DEFAULT),
        ("noop", 1),
        ("dataframeSink(rows)", DEFAULT),
    ]
    assert supplier(dag, f"jsonSource({tmp_path / '*.json'})") == ReadJsonP(str(tmp_path), "*.json", "latin-1")
    assert supplier(dag, f"jsonSink({tmp_path / 'out'})") == JsonFilesSinkP(str(tmp_path / "out"))
    assert supplier(dag, "dataframeSource") == DataFrameSourceP(frame)
    assert supplier(dag, "noop") == NoopSinkP()
    assert supplier(dag, "dataframeSink(rows)") == DataFrameSinkP("rows", "word string, count long")


def test_two_dataframe_sources_get_unique_names():
    p = Pipeline.create()
    p.readFrom(Sources.dataframe(StandInDataFrame())).writeTo(Sinks.noop())
    p.readFrom(Sources.dataframe(StandInDataFrame())).writeTo(Sinks.noop())
    assert vertices(plan(p)) == [
        ("dataframeSource", DEFAULT),
        ("noop", 1),
        ("dataframeSource-2", DEFAULT),
        ("noop-2", 1),
    ]


def test_dataframe_source_refuses_what_is_not_a_dataframe():
    with pytest.raises(PipelineError) as raised:
        Sources.dataframe([{"word": "a"}])
    message = str(raised.value)
    assert message.startswith("Sources.dataframe (called at test_sources_and_sinks.py:")
    assert message.endswith("): expected a Spark DataFrame, got list")


PLAN_IN_A_FRESH_INTERPRETER = """
import json, sys
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import plan

p = Pipeline.create()
p.readFrom(Sources.json("hdfs://namenode/in")).writeTo(Sinks.dataframe("d", "a long"))
p.readFrom(Sources.files("s3a://bucket/in", "*.txt")).writeTo(Sinks.json("/no/such/out"))
p.readFrom(Sources.items([1])).writeTo(Sinks.noop())
dag = plan(p).validate()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j"))))
"""


def test_planning_urls_and_the_new_sinks_loads_neither_pyspark_nor_py4j():
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    done = run([sys.executable, "-c", PLAN_IN_A_FRESH_INTERPRETER], cwd=PROJECT, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


# Sources.json and file URLs on Spark


def wordCount(lines) -> None:
    """Count the words of the stage ``lines`` into the list ``counts``."""
    lines.flatMap(tokenize).groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(
        Sinks.list("counts")
    )


@pytest.mark.spark
def test_corpus_read_through_a_file_url_counts_as_counter(jet, corpusCounts):
    p = Pipeline.create()
    wordCount(p.readFrom(Sources.files(CORPUS.parent.as_uri(), CORPUS.name)))
    jet.newJob(p).join()
    assert Counter(dict(jet.getList("counts"))) == corpusCounts


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_json_source_emits_dicts_and_names_an_invalid_line(jet, tmp_path, parallelism):
    (tmp_path / "a.json").write_text('{"word": "to", "n": 1}\n\n{"word": "be", "n": 2}\n')
    p = Pipeline.create()
    p.readFrom(Sources.json(str(tmp_path))).setLocalParallelism(parallelism).writeTo(Sinks.list("objects"))
    jet.newJob(p).join()
    assert sorted(jet.getList("objects"), key=lambda d: d["n"]) == [{"word": "to", "n": 1}, {"word": "be", "n": 2}]
    (tmp_path / "b.json").write_text('{"word": "or", "n": 3}\n{"word": not}\n')
    with pytest.raises(InputError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Sources.json: '{tmp_path / 'b.json'}' line 2 is not valid JSON (Expecting value at column 10): "
        "'{\"word\": not}'"
    )


# Sources.dataframe


@pytest.mark.spark
def test_word_count_of_a_dataframe_source_equals_counter(jet, spark, corpusLines, corpusCounts):
    frame = spark.createDataFrame([(line,) for line in corpusLines], "line string").repartition(5)
    p = Pipeline.create()
    wordCount(p.readFrom(Sources.dataframe(frame)).map(lambda row: row["line"]))
    jet.newJob(p).join()
    assert Counter(dict(jet.getList("counts"))) == corpusCounts
    with pytest.raises(Exception):
        cloudpickle.dumps(DataFrameSourceP(frame))


@pytest.mark.spark
@pytest.mark.parametrize("partitions, parallelism", [(1, 4), (6, 2), (3, 3)])
def test_dataframe_rows_become_dicts_whatever_the_partitions(jet, spark, partitions, parallelism):
    rows = [(n, (f"w{n}", [n, n + 1])) for n in range(50)]
    frame = spark.createDataFrame(rows, "n int, inner struct<word: string, list: array<int>>")
    p = Pipeline.create()
    source = p.readFrom(Sources.dataframe(frame.repartition(partitions))).setLocalParallelism(parallelism)
    source.writeTo(Sinks.list("dicts"))
    source.map(lambda d: d["n"]).writeTo(Sinks.list("numbers"))
    jet.newJob(p).join()
    expected = [{"n": n, "inner": {"word": f"w{n}", "list": [n, n + 1]}} for n in range(50)]
    assert sorted(jet.getList("dicts"), key=lambda d: d["n"]) == expected
    assert sorted(jet.getList("numbers")) == list(range(50))


@pytest.mark.spark
def test_peeked_sources_still_read_through_spark(jet, spark, tmp_path):
    (tmp_path / "a.txt").write_text("x\ny\n")
    p = Pipeline.create()
    p.readFrom(Sources.files(tmp_path.as_uri())).peek().writeTo(Sinks.list("lines"))
    p.readFrom(Sources.dataframe(spark.createDataFrame([(1,)], "n int"))).peek().writeTo(Sinks.list("rows"))
    jet.newJob(p).join()
    assert sorted(jet.getList("lines")) == ["x", "y"]
    assert jet.getList("rows") == [{"n": 1}]


# Sinks.dataframe


def countsPipeline(sink, items) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.items(items)).groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(sink)
    return p


WORDS = "the cat and the hat and the bat".split()


@pytest.mark.spark
def test_dataframe_sink_with_inferred_schema_is_usable_in_spark_sql(jet, spark):
    p = Pipeline.create()
    p.readFrom(Sources.items(WORDS)).groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).map(
        lambda kv: {"word": kv[0], "count": kv[1]}
    ).writeTo(Sinks.dataframe("inferred"))
    jet.newJob(p).join()
    jet.getDataFrame("inferred").createOrReplaceTempView("inferred")
    rows = spark.sql("select word, count from inferred where count > 1 order by count desc, word").collect()
    expected = sorted(((w, c) for w, c in Counter(WORDS).items() if c > 1), key=lambda wc: (-wc[1], wc[0]))
    assert [tuple(row) for row in rows] == expected


@pytest.mark.spark
def test_dataframe_sink_with_given_schema_names_the_columns(jet, spark):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    structType = StructType([StructField("word", StringType()), StructField("n", LongType())])
    for name, schema in [("ddl", "word string, n long"), ("struct", structType)]:
        jet.newJob(countsPipeline(Sinks.dataframe(name, schema), WORDS)).join()
        frame = jet.getDataFrame(name)
        assert frame.schema == structType
        frame.createOrReplaceTempView(name)
        assert dict(spark.sql(f"select word, n from {name}").collect()) == Counter(WORDS)


@pytest.mark.spark
def test_items_spark_cannot_infer_a_schema_of_fail_naming_the_sink(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).writeTo(Sinks.dataframe("ints"))
    with pytest.raises(Exception, match=r"^Sinks\.dataframe\('ints'\): Spark cannot make a DataFrame .*pass a schema$"):
        jet.newJob(p).join()
    with pytest.raises(KeyError, match="No finished job wrote a DataFrame named 'ints'"):
        jet.getDataFrame("ints")


# Sinks.json and Sinks.noop


@pytest.mark.spark
def test_json_sink_round_trips_through_the_json_source(jet, tmp_path):
    output = str(tmp_path / "out")
    items = [{"word": w, "n": n, "tags": ["\u00e9", None, True]} for n, w in enumerate(WORDS)]
    p = Pipeline.create()
    p.readFrom(Sources.items(items)).writeTo(Sinks.json(output))
    jet.newJob(p).join()
    back = Pipeline.create()
    back.readFrom(Sources.json(output, "part-*")).writeTo(Sinks.list("back"))
    jet.newJob(back).join()
    assert sorted(jet.getList("back"), key=lambda d: d["n"]) == items


@pytest.mark.spark
def test_json_sink_refuses_an_existing_directory_and_leaves_nothing_after_a_failure(jet, tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.items([{"a": 1}])).writeTo(Sinks.json(str(tmp_path)))
    with pytest.raises(OutputError, match=f"^Sinks.json: the output directory '{tmp_path}' already exists"):
        jet.newJob(p)
    output = tmp_path / "out"
    failing = Pipeline.create()
    inverses = failing.readFrom(Sources.items(range(100))).map(lambda x: {"inverse": 1 / (x - 77)})
    inverses.writeTo(Sinks.json(str(output)))
    with pytest.raises(UserFunctionError):
        jet.newJob(failing).join()
    assert not output.exists()


@pytest.mark.spark
def test_item_json_cannot_encode_fails_naming_it_and_leaves_nothing(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items([{"a": 1}, {"set": {1}}])).writeTo(Sinks.json(str(output)))
    line = here() - 1
    with pytest.raises(JobError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'jsonSink({output})' (defined at {THIS_FILE}:{line}): cannot write {{'set': {{1}}}} "
        "as JSON: Object of type set is not JSON serializable"
    )
    assert not output.exists()


@pytest.mark.spark
def test_noop_sink_discards_while_a_branch_still_delivers(jet):
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(range(100)))
    numbers.writeTo(Sinks.noop())
    numbers.filter(lambda n: n % 10 == 0).writeTo(Sinks.list("tens"))
    jet.newJob(p).join()
    assert sorted(jet.getList("tens")) == list(range(0, 100, 10))
