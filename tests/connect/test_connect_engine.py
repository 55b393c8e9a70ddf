"""The Connect engine (issue 36, batch): a Core DAG's physical plan run through the DataFrame
API alone on a Spark Connect session gives the classic engine's answers and figures."""

import ast
import concurrent.futures
import functools
import os
import pathlib
import time
from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.coredag import DAG, AbstractProcessor, Edge, OutputError, UserFunctionError
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.processors.sinks import DataFrameSinkP, FilesSinkP, ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.connect_engine import ConnectEngine, configuredParallelism
from sparkjet.coredag.runtime.engine import engineOf
from sparkjet.coredag.runtime.physical_plan import physicalPlan
from sparkjet.planner.planning import planOf
from tests.conftest import CORPUS, eventually, tokenize
from tests.connect.classic_runs import runOn
from tests.connect.dags import ROUTINGS, FailOn13
from tests.streaming.test_remote_checkpoint import ftpRoot  # a fixture

pytestmark = pytest.mark.spark

CORPUS_WORDS = Counter(word for line in CORPUS.read_text().splitlines() for word in tokenize(line))


@pytest.fixture
def engine(connect):
    """The engine of the Connect session, which leaves this process without a SparkContext."""
    from pyspark import SparkContext

    before = SparkContext._active_spark_context
    yield engineOf(connect)
    assert SparkContext._active_spark_context is before, "the Connect engine started a SparkContext"


def test_a_connect_session_gets_the_connect_engine_and_no_spark_context(engine):
    from pyspark import SparkContext

    assert isinstance(engine, ConnectEngine)
    assert SparkContext._active_spark_context is None, "a classic SparkContext runs in the Connect client"


@pytest.mark.parametrize("parallelism", [1, 2, 3])
@pytest.mark.parametrize("name", ["coreWordCount", "urlWordCount", "pipelineWordCount"])
def test_the_word_count_gives_the_classic_engines_answer_and_figures(engine, comparingServer, name, parallelism):
    lists, figures = runOn(engine, name, parallelism)
    assert Counter(dict(lists["counts"])) == CORPUS_WORDS
    classicLists, classicFigures = comparingServer.runOnClassicEngine(name, parallelism)
    assert sorted(lists["counts"]) == sorted(classicLists["counts"])
    assert figures == classicFigures


@pytest.mark.parametrize("parallelism", [2, 3])
def test_each_routing_sends_each_item_where_the_classic_engine_does(engine, comparingServer, parallelism):
    lists, figures = runOn(engine, "routings", parallelism)
    assert lists.keys() == ROUTINGS.keys()
    assert Counter(item for _, _, item in lists["broadcast"]) == Counter({item: 3 for item in range(40)})
    assert {index for index, _, item in lists["partitioned"] if item % 2} == {2}, "odd keys to the last processor"
    assert len({index for index, _, _ in lists["all-to-one"]}) == 1
    assert (lists, figures) == comparingServer.runOnClassicEngine("routings", parallelism)


def test_a_high_priority_input_comes_fully_first(engine, comparingServer):
    lists, figures = runOn(engine, "priorities", 3)
    received = lists["received"]
    assert Counter(item for _, _, item in received) == Counter([*range(30), *range(100, 130)])
    for processor in range(3):
        ordinals = [ordinal for index, ordinal, _ in received if index == processor]
        assert ordinals == sorted(ordinals, reverse=True), f"processor {processor} took a low-priority item first"
    assert (lists, figures) == comparingServer.runOnClassicEngine("priorities", 3)


def test_a_failing_user_function_is_the_classic_engines_error(engine, comparingServer):
    with pytest.raises(UserFunctionError) as failed:
        runOn(engine, "failing", 2)
    assert "fail on 13" in str(failed.value) and "13" in failed.value.itemRepr
    assert "thirteen is unlucky" in str(failed.value)
    assert "grpc" not in str(failed.value).lower() and "Traceback" not in str(failed.value)
    with pytest.raises(UserFunctionError) as classic:
        comparingServer.runOnClassicEngine("failing", 2)
    assert str(failed.value) == str(classic.value)


def runDag(engine, dag: DAG, parallelism: int = 2, control=None):
    """Run ``dag`` on ``engine`` at ``parallelism``; return its outcome."""
    dag = preflightDag(dag)
    return engine.runBatch(dag, physicalPlan(dag, parallelism), "test", control or engine.jobControl("test"))


def filesDag(directory, fails: bool = False) -> DAG:
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(30))), 2)
    middle = dag.newVertex("fail on 13" if fails else "pass", FailOn13 if fails else PassOn)
    sink = dag.newVertex("files", FilesSinkP(str(directory)), 2)
    return dag.edge(Edge.between(source, middle)).edge(Edge.between(middle, sink))


class PassOn(AbstractProcessor):
    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item)


@pytest.fixture(params=["path", "ftp-url"])
def sinkRoot(request, ftpRoot):
    """A directory, and how a files sink names it: by its path on the server, or by its URL on
    a local FTP server (which the server's tasks reach through fsspec)."""
    served, url = ftpRoot
    return served, str(served) if request.param == "path" else url


def test_a_files_sink_writes_and_commits_its_directory_on_the_server(engine, sinkRoot):
    served, root = sinkRoot
    runDag(engine, filesDag(f"{root}/out/counts"))
    target = served / "out" / "counts"
    names = sorted(os.listdir(target))
    assert names == ["_SUCCESS", "part-00000", "part-00001"]
    lines = [line for name in names for line in (target / name).read_text().splitlines()]
    assert Counter(lines) == Counter(str(item) for item in range(30))


def test_a_failed_files_sink_leaves_nothing_and_removes_nothing_it_did_not_write(engine, sinkRoot):
    served, root = sinkRoot
    (served / "keep.txt").write_text("mine")
    with pytest.raises(UserFunctionError):
        runDag(engine, filesDag(f"{root}/out/counts", fails=True))
    assert sorted(os.listdir(served)) == ["keep.txt"] and (served / "keep.txt").read_text() == "mine"


def test_a_word_count_written_at_an_ftp_url_is_the_classic_engines(engine, comparingServer, ftpRoot):
    served, url = ftpRoot
    p = Pipeline.create()
    (p.readFrom(Sources.files(str(CORPUS.parent), CORPUS.name)).flatMap(tokenize).filter(bool)
     .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.files(f"{url}/counts")))
    runDag(engine, planOf(p).dag)
    lines = [line for path in (served / "counts").glob("part-*") for line in path.read_text().splitlines()]
    written = [ast.literal_eval(line) for line in lines]
    assert Counter(dict(written)) == CORPUS_WORDS and len(written) == len(CORPUS_WORDS)
    classicLists, _ = comparingServer.runOnClassicEngine("pipelineWordCount", 2)
    assert sorted(written) == sorted(classicLists["counts"])


def test_a_claim_at_a_url_taken_by_another_job_names_its_claim_file_as_on_the_classic_engine(engine, ftpRoot):
    served, url = ftpRoot
    (served / ".counts.sparkjet-claim").write_text("")
    with pytest.raises(OutputError) as raised:
        runDag(engine, filesDag(f"{url}/counts"))
    where = url.replace(":secret@", "@")
    assert str(raised.value) == (
        f"Sinks.files: the output directory '{url}/counts' already exists; choose a new directory or remove this "
        "one (it was left untouched); another sparkjet job is creating it (if none is, remove the leftover "
        f"'{where}/.counts.sparkjet-claim')"
    )
    assert os.listdir(served) == [".counts.sparkjet-claim"]


def test_a_dataframe_sink_comes_back_as_a_dataframe_of_the_session(engine, connect):
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple({"word": str(n), "count": n} for n in range(20))), 2)
    sink = dag.newVertex("frame", DataFrameSinkP("counts", "word string, count long"), 1)
    dag.edge(Edge.between(source, sink))
    frame = runDag(engine, dag).dataFrames["counts"]
    assert sorted((row["word"], row["count"]) for row in frame.collect()) == sorted((str(n), n) for n in range(20))
    assert type(frame).__module__.startswith("pyspark.sql.connect")


class SlowItems(AbstractProcessor):
    """Takes a tenth of a second an item; notes in ``marker`` that it started."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self._marker = marker

    def tryProcess0(self, item) -> bool:
        pathlib.Path(self._marker).touch()
        time.sleep(0.1)
        return self.tryEmit(item)


def test_a_cancelled_job_stops_its_spark_jobs_and_fails_as_cancelled(engine, tmp_path):
    marker = tmp_path / "started"
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(100_000))), 2)
    slow = dag.newVertex("slow", functools.partial(SlowItems, str(marker)), 2)
    sink = dag.newVertex("sink", ListSinkP("never"), 1)
    dag.edge(Edge.between(source, slow)).edge(Edge.between(slow, sink))
    control = engine.jobControl("cancelled")
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        running = executor.submit(runDag, engine, dag, 2, control)
        eventually(marker.exists, progress=lambda: running.done())
        control.cancel()
        with pytest.raises(concurrent.futures.CancelledError, match="Job 'cancelled' was cancelled"):
            running.result()


def test_the_physical_plan_takes_the_servers_default_parallelism(engine):
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(10))))
    dag.edge(Edge.between(source, dag.newVertex("sink", ListSinkP("planned"))))
    assert engine.physicalPlan(dag).sessionParallelism == 2, "the server runs local[2]"


def test_the_servers_settings_give_the_parallelism_a_job_finds(connect):
    """The one-task job the engine no longer runs on a local server answers what the settings say."""
    from pyspark.sql import functions as F

    partitions = connect.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).agg(F.countDistinct("p"))
    assert configuredParallelism(lambda key: connect.conf.get(key, None)) == partitions.collect()[0][0] == 2

