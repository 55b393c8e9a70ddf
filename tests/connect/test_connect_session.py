"""Reaching Spark Connect (issue 36, around the engine): ``Jet()`` honours PySpark's
``SPARK_REMOTE`` and ``spark.api.mode``, ``Jet(remote=...)`` and ``sparkjet run --remote`` start a
Connect session, a Connect session given to ``Jet(spark=...)`` gets past everything outside the
engine, sparkjet reaches the server's Python workers as the session's artifacts, and the client
deps come with the tests' extra."""

import importlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import tomllib
from collections import Counter

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, TestSources
from sparkjet.coredag.runtime import engine, session, shipping
from sparkjet.coredag.errors import SessionError
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, checkpointStorage
from sparkjet.planner import Jet
from sparkjet.planner.cli import main
from tests.conftest import CONNECT, PROJECT, run, startConnectServer


@pytest.fixture
def connectRun(request) -> None:
    """Skip unless the run is on Spark Connect: ``pytest --spark-master=connect -m connect``."""
    if request.config.getoption("--spark-master") != CONNECT:
        pytest.skip("runs on Spark Connect: pytest --spark-master=connect -m connect")


@pytest.fixture
def connectSpark(connectRun, request):
    """The run's Spark Connect session."""
    return request.getfixturevalue("spark")


@pytest.fixture
def noConnectSettings(monkeypatch):
    """None of PySpark's settings that ask for a Connect session."""
    for name in (session.REMOTE_VARIABLE, session.API_MODE_VARIABLE, "SPARK_CONNECT_MODE"):
        monkeypatch.delenv(name, raising=False)


def test_a_session_is_a_connect_one_as_pyspark_asks_for_it(noConnectSettings, monkeypatch):
    assert session.remoteWanted() is None, "a classic session by default"
    assert session.remoteWanted("sc://host:15002") == "sc://host:15002"
    monkeypatch.setenv(session.API_MODE_VARIABLE, "connect")
    assert session.remoteWanted(master="local[2]") == "local[2]", "spark.api.mode=connect: a server on the master"
    assert session.remoteWanted() == session.DEFAULT_MASTER
    monkeypatch.setenv(session.REMOTE_VARIABLE, "sc://server:15002")
    assert session.remoteWanted(master="local[2]") == "sc://server:15002", "SPARK_REMOTE wins, as in PySpark"
    assert session.remoteWanted("sc://other:15002") == "sc://other:15002", "Jet(remote=...) wins over both"
    monkeypatch.delenv(session.REMOTE_VARIABLE)
    monkeypatch.setenv(session.API_MODE_VARIABLE, "classic")
    assert session.remoteWanted(master="local[2]") is None


def test_remote_is_given_alone():
    for others in ({"master": "local[2]"}, {"spark": object()}):
        with pytest.raises(ValueError) as raised:
            Jet(remote="sc://host:15002", **others)
        assert str(raised.value).startswith("Jet: pass remote (a Spark Connect URL) alone")


def test_a_connect_url_no_server_answers_at_is_refused_at_once_without_its_token():
    """PySpark's client would retry such a URL for minutes without a word (tutorial 06 waited 600 s)."""
    with pytest.raises(SessionError) as raised:
        session.checkServerListens("sc://localhost:1/;token=secret")
    assert str(raised.value).startswith("No Spark Connect server answers at 'sc://localhost:1/' (Connection refused)")
    assert "secret" not in str(raised.value)


@pytest.mark.parametrize(
    "remote, sparkRemote, said",
    [
        (["--remote", "sc://host:15002"], None, "pass either --master or --remote"),
        ([], "sc://host:15002/;token=secret", "--master local[2] with SPARK_REMOTE set (sc://host:15002/): every session"),
    ],
    ids=["--remote", "SPARK_REMOTE"],
)
def test_sparkjet_run_takes_either_master_or_remote(tmp_path, capsys, monkeypatch, remote, sparkRemote, said):
    """A master asked for is never dropped without a word for a Connect server, as spark-submit's
    "Remote cannot be specified with master": neither beside --remote nor beside SPARK_REMOTE,
    whose URL is named without its token."""
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    if sparkRemote:
        monkeypatch.setenv("SPARK_REMOTE", sparkRemote)
    script = tmp_path / "job.py"
    script.write_text("print('ran')\n")
    with pytest.raises(SystemExit) as exited:
        main(["run", "--master", "local[2]", *remote, str(script)])
    assert exited.value.code == 2
    printed = capsys.readouterr().err
    assert said in printed
    assert "secret" not in printed


def test_the_tests_extra_installs_the_connect_client_and_ci_runs_the_connect_set():
    extras = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "sparkjet[connect]" in extras["test"]
    assert {"pyspark[connect]>=4.0,<5", "pandas<3"} <= set(extras["connect"])
    for module in ("grpc", "grpc_status", "google.rpc.status_pb2", "pyarrow", "zstandard"):
        importlib.import_module(module)
    assert int(importlib.import_module("pandas").__version__.split(".")[0]) < 3
    assert "bash .ci/test --spark-master=connect -m connect\n" in (PROJECT / ".ci" / "run").read_text()


@pytest.mark.spark
def test_a_session_of_the_other_kind_than_the_running_one_is_refused(spark, request):
    """Spark runs one session per process: a Connect URL beside a classic session, or a master
    beside a Connect session, is a SessionError (the classic run checks the one, the Connect run the other)."""
    if request.config.getoption("--spark-master") == CONNECT:
        asked, expected = {"master": "local[2]"}, "Jet(master='local[2]'): a Spark Connect session already runs"
    else:
        asked, expected = {"remote": "sc://host:15002"}, "Jet(remote='sc://host:15002'): a classic SparkSession already runs"
    with pytest.raises(SessionError) as raised:
        Jet(**asked).spark()
    assert str(raised.value).startswith(expected)
    assert str(raised.value).endswith("(Jet(), or Jet(spark=session)), or run this job in another process")


class ReachedTheEngine(Exception):
    """Raised by the engine a test puts in place of the real one: the job got that far."""


@pytest.fixture
def sessionsAtTheEngine(monkeypatch) -> list:
    """The sessions jobs ask ``engineOf`` for an engine on; the job stops there."""
    asked = []

    def engineOf(spark):
        asked.append(spark)
        raise ReachedTheEngine

    monkeypatch.setattr(engine, "engineOf", engineOf)
    return asked


def test_a_given_connect_session_gets_past_everything_outside_the_engine(connectSpark, sessionsAtTheEngine, tmp_path):
    jet = Jet(spark=connectSpark)
    assert jet.spark() is connectSpark
    assert connectSpark.session_id in shipping._shippedToSessions, "sparkjet went to the server as artifacts"
    batch = Pipeline.create()
    batch.readFrom(Sources.items(["a", "b"])).writeTo(Sinks.list("connect-batch"))
    stream = Pipeline.create()
    stream.readFrom(TestSources.finiteStream([(1, "a")])).withoutTimestamps().writeTo(Sinks.list("connect-stream"))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    for pipeline, jobConfig in ((batch, None), (stream, config.setCheckpointLocation(str(tmp_path / "checkpoint")))):
        with pytest.raises(ReachedTheEngine):
            jet.newJob(pipeline, jobConfig)
    assert sessionsAtTheEngine == [connectSpark, connectSpark]
    jet.shutdown()
    assert not connectSpark.is_stopped, "a session given to Jet is the user's to stop"


def test_a_checkpoint_at_a_url_fsspec_cannot_reach_is_refused_on_connect_naming_what_to_install(connectSpark):
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage("s3a://bucket/checkpoints", "Job 'on-connect'")
    assert str(raised.value) == (
        "Job 'on-connect': cannot keep its checkpoint in 's3a://bucket/checkpoints': a Spark Connect client reaches "
        "it through fsspec, which says: Install s3fs to access S3. Install the library of 's3a://' file systems "
        "where the client runs (s3fs for s3a://, pyarrow and Hadoop's libhdfs for hdfs://), or keep the "
        "checkpoint in a directory path"
    )


def test_a_stream_job_runs_on_connect_exactly_once_and_leaves_no_checkpoint(connectSpark, tmp_path):
    """A finite stream's items reach its list sink once each, through the micro-batches the
    server hands to this client; the completed job removes its checkpoint."""
    events = [(time, f"item {time}") for time in range(0, 300, 3)]
    stream = Pipeline.create()
    stream.readFrom(TestSources.finiteStream(events, 25)).withoutTimestamps().writeTo(Sinks.list("connect-stream"))
    checkpoint = tmp_path / "checkpoint"
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(checkpoint))
    jet = Jet(spark=connectSpark)
    try:
        job = jet.newJob(stream, config, name="on-connect")
        job.join()
        assert Counter(jet.getList("connect-stream")) == Counter(text for _, text in events)
        assert job.metrics().microBatchCount >= 4
    finally:
        jet.shutdown()
    assert not checkpoint.exists()


SESSION_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyspark import SparkContext
    from sparkjet.coredag.runtime import shipping
    from sparkjet.planner import Jet

    jet = Jet(remote=sys.argv[1]) if len(sys.argv) > 1 else Jet()
    spark = jet.spark()
    seen = {
        "session": type(spark).__module__,
        "sparkContext": repr(SparkContext._active_spark_context),
        "shipped": spark.session_id in shipping._shippedToSessions,
        "rows": spark.range(3).count(),
    }
    jet.shutdown()
    seen["stoppedByShutdown"] = spark.is_stopped
    print(json.dumps(seen))
    """
)


@pytest.mark.parametrize("how", ["SPARK_REMOTE", "Jet(remote=...)", "sparkjet run --remote"])
def test_jet_starts_a_connect_session_where_asked_and_its_shutdown_releases_it(connectServer, tmp_path, how):
    script = tmp_path / "session.py"
    script.write_text(SESSION_SCRIPT)
    environment = {name: value for name, value in os.environ.items() if name not in ("SPARK_REMOTE", "SPARK_API_MODE")}
    commands = {
        "SPARK_REMOTE": [sys.executable, str(script)],
        "Jet(remote=...)": [sys.executable, str(script), connectServer],
        "sparkjet run --remote": [str(pathlib.Path(sys.executable).parent / "sparkjet"), "run", "--remote", connectServer, str(script)],
    }
    if how == "SPARK_REMOTE":
        environment["SPARK_REMOTE"] = connectServer
    done = run(commands[how], env=environment, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "session": "pyspark.sql.connect.session",
        "sparkContext": "None",
        "shipped": True,
        "rows": 3,
        "stoppedByShutdown": True,
    }


def workerLibraries(directory: pathlib.Path) -> pathlib.Path:
    """Return a directory holding only what a Connect server's Python workers need beside PySpark
    (pyarrow, pandas and theirs), links to this Python's copies: no sparkjet, no mmh3."""
    directory.mkdir()
    for name in ("pyarrow", "pandas", "numpy", "dateutil", "pytz", "tzdata"):
        package = pathlib.Path(importlib.import_module(name).__file__).parent
        (directory / name).symlink_to(package)
        bundled = package.with_name(f"{name}.libs")  # a wheel's own shared libraries, found beside it
        if bundled.is_dir():
            (directory / bundled.name).symlink_to(bundled)
    return directory


def test_sparkjet_reaches_a_bare_servers_python_workers_as_the_sessions_artifacts(connectServer, tmp_path):
    """A server whose Python workers run a venv of their own, without pip, sparkjet or mmh3,
    with a PYTHONPATH of pyarrow, pandas and theirs alone."""
    from pyspark.sql import SparkSession

    bare = tmp_path / "bare-python"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    workers = {"PYSPARK_PYTHON": str(bare / "bin" / "python"), "PYTHONPATH": str(workerLibraries(tmp_path / "libs"))}

    def imports(batches):  # defined here, so that it travels by value: the workers cannot import tests
        import pyarrow

        from sparkjet.coredag.model import murmur3

        for _ in batches:
            yield pyarrow.RecordBatch.from_pydict({"cMurmur3": [murmur3.murmur3 is not murmur3.pythonMurmur3]})

    with startConnectServer(tmp_path, workers) as url:
        spark = SparkSession.builder.remote(url).create()
        try:
            with pytest.raises(Exception, match="No module named 'sparkjet'"):
                spark.range(1).mapInArrow(imports, "cMurmur3 boolean").collect()
            session.readyForSparkjet(spark)
            assert [row.cMurmur3 for row in spark.range(1).mapInArrow(imports, "cMurmur3 boolean").collect()] == [True]
        finally:
            spark.stop()


LOCAL_SERVER_SCRIPT = textwrap.dedent(
    """
    import json
    from pyspark import SparkContext
    from sparkjet.planner import Jet

    jet = Jet(master="local[1]")
    spark = jet.spark()
    seen = {"session": type(spark).__module__, "rows": spark.range(3).count()}
    for key in ("spark.master", "spark.python.daemon.module", "spark.connect.grpc.binding.address", "spark.ui.enabled"):
        seen[key] = spark.conf.get(key)
    jet.shutdown()
    seen["serverStopped"] = SparkContext._active_spark_context is None
    print(json.dumps(seen))
    """
)


def test_spark_api_mode_connect_starts_a_local_server_with_sparkjets_settings_stopped_by_shutdown(connectRun, tmp_path):
    """PySpark's local Connect server, in the script's process as PySpark starts it: on the
    master Jet was given, retrying failed tasks, with sparkjet's worker daemon, listening on
    127.0.0.1 alone. (SPARK_TESTING: PySpark's server takes a free port, not 15002.)"""
    script = tmp_path / "local_server.py"
    script.write_text(LOCAL_SERVER_SCRIPT)
    environment = {name: value for name, value in os.environ.items() if name != "SPARK_REMOTE"}
    environment |= {"SPARK_API_MODE": "connect", "SPARK_TESTING": "1"}
    done = run([sys.executable, str(script)], env=environment, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Failed to set" not in done.stderr, "the settings the server started with are not set again"
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "session": "pyspark.sql.connect.session",
        "rows": 3,
        "spark.master": "local[1,4]",
        "spark.python.daemon.module": session.WORKER_DAEMON,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.ui.enabled": "false",
        "serverStopped": True,
    }
