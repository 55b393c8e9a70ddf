"""Shared fixtures: one SparkSession for the whole test session, and the bundled corpus; and the
waits of the tests, which fail only once nothing has moved for a long while, never after a fixed
time that a loaded machine can exceed."""

import contextlib
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import settings

# Property tests check results, never wall time: no per-example deadline on a busy machine.
settings.register_profile("sparkjet", deadline=None)
settings.load_profile("sparkjet")

PROJECT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tutorials" / "data" / "tinyshakespeare.txt"
APP_NAME = "sparkjet-tests"

# The sessions of the tests (the shared one, and those their scripts start) go without Spark's web
# UI: quicker to start, and no port taken; tests/planner/test_spark_ui.py turns it on in its own.
os.environ.setdefault("SPARKJET_UI", "0")
# Their streams start a micro-batch every quarter of a second, not every second: a test waits for
# micro-batches, never for the clock (coredag/runtime/stream/stream_run.py's TRIGGER_VARIABLE).
os.environ.setdefault("SPARKJET_TRIGGER_MILLIS", "250")

SUBMIT_OPTIONS = "SPARK_SUBMIT_OPTS"
GIVEN_SUBMIT_OPTIONS = os.environ.get(SUBMIT_OPTIONS)
# The JVMs the tests' scripts start live for seconds: the quick compiler alone and one GC thread.
# They started in 20-27 s where Java's defaults took 46-70 s at a load of 12-19 on 2 cores. The
# tests' own session, which lives for the whole run, starts with the options the run was given.
SHORT_LIVED_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault(SUBMIT_OPTIONS, SHORT_LIVED_OPTIONS)


QUIET_SECONDS = float(os.environ.get("SPARKJET_TEST_QUIET_SECONDS", "600"))
"""How long a wait goes on while nothing moves (no Spark task ends, no micro-batch, no line
printed, no file written) before the test fails: a stall, not a slow machine. A session's start
moves nothing visible, and took over 300 s at a load of 90 on 2 cores."""

MOVES = 3000
"""How many times the progress a wait watches may move without its condition holding: a bound
in work done (a heartbeat's micro-batches go on forever), never in time."""


def sparkProgress():
    """Return the progress of this process's Spark work (None while no SparkContext runs): the
    Spark jobs running and the tasks their stages have finished, which change whenever a task
    ends or a job starts, a stream's micro-batches included."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        return None
    tracker = context.statusTracker()
    stages = [tracker.getStageInfo(stage) for stage in tracker.getActiveStageIds()]
    finished = sorted((stage.stageId, stage.numCompletedTasks) for stage in stages if stage is not None)
    return tuple(sorted(tracker.getActiveJobsIds())), tuple(finished)


def eventually(condition, progress=sparkProgress, quiet: float = QUIET_SECONDS, moves: int = MOVES) -> None:
    """Wait until ``condition()`` holds; fail once ``progress()`` (this process's Spark work
    unless said) has stayed the same for ``quiet`` seconds, or has changed ``moves`` times
    without the condition holding."""
    seen, still, moved = progress(), time.monotonic(), 0
    while not condition():
        now = progress()
        if now != seen:
            seen, still, moved = now, time.monotonic(), moved + 1
        assert moved < moves, f"the condition did not hold while the progress moved {moves} times (to {seen!r})"
        assert time.monotonic() - still < quiet, f"the condition did not hold and nothing moved for {quiet:.0f} s ({seen!r})"
        time.sleep(0.05)


def treeProgress(directory: pathlib.Path):
    """Return the progress of a process writing under ``directory``: each file's path and size."""

    def progress():
        found = set()
        for parent, _, names in os.walk(directory):
            for name in names:
                try:
                    found.add((os.path.join(parent, name), os.path.getsize(os.path.join(parent, name))))
                except OSError:
                    continue  # removed meanwhile
        return frozenset(found)

    return progress


def finished(process: subprocess.Popen, progress=lambda: None, quiet: float = QUIET_SECONDS) -> subprocess.CompletedProcess:
    """Wait until ``process`` ends and return what it printed; once neither its output nor
    ``progress()`` has moved for ``quiet`` seconds, kill it (its process group, if it leads
    one) and fail with what it printed."""
    printed = {"stdout": [], "stderr": []}
    readers = [
        threading.Thread(target=lambda lines=printed[name], stream=stream: lines.extend(iter(stream.readline, "")), daemon=True)
        for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
        if stream is not None
    ]
    for reader in readers:
        reader.start()
    seen, still = None, time.monotonic()
    while process.poll() is None:
        now = (len(printed["stdout"]), len(printed["stderr"]), progress())
        if now != seen:
            seen, still = now, time.monotonic()
        if time.monotonic() - still > quiet:
            stop(process)
            text = "".join(printed["stdout"] + printed["stderr"])[-3000:]
            raise AssertionError(f"{process.args!r} printed and wrote nothing for {quiet:.0f} s; killed. It printed:\n{text}")
        time.sleep(0.05)
    for reader in readers:
        reader.join()
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(printed["stdout"]), "".join(printed["stderr"]))


def stop(process: subprocess.Popen) -> None:
    """Kill ``process``, with its process group if it leads one, and reap it."""
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except ProcessLookupError:
        pass  # it ended meanwhile
    process.wait()


def run(args: list[str], progress=lambda: None, quiet: float = QUIET_SECONDS, **popen) -> subprocess.CompletedProcess:
    """``subprocess.run(args, capture_output=True, text=True)`` that fails only once the process
    has printed and ``progress()`` has moved nothing for ``quiet`` seconds (see ``finished``)."""
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **popen)
    return finished(process, progress, quiet)


def here() -> int:
    """Return the line of the caller: where a test defined the stage it expects in a message."""
    return sys._getframe(1).f_lineno


def tokenize(line: str) -> list[str]:
    """The word-count tokenization every test and tutorial uses."""
    return [word for word in re.split(r"\W+", line.lower()) if word]


@pytest.fixture(scope="session")
def corpusLines() -> list[str]:
    """The lines of the bundled corpus."""
    return CORPUS.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="session")
def corpusCounts(corpusLines) -> Counter:
    """Word counts of the corpus computed independently with collections.Counter."""
    return Counter(word for line in corpusLines for word in tokenize(line))


CONNECT = "connect"
"""``--spark-master=connect``: the ``spark`` fixture is a Spark Connect session of a server on
``local[2]`` started for the run."""

ON_CONNECT = (
    "tests/connect/",
    "tests/planner/test_jet_word_count.py",
    "tests/planner/test_batch_stages_jobs.py",
    "tests/coredag/test_routing_matrix.py",
    "tests/tutorials/test_tutorials.py::test_word_count_tutorial",
    "tests/tutorials/test_aggregate_tutorial.py",
    "tests/tutorials/test_core_dag_tutorial.py",
    "tests/tutorials/test_hash_join_tutorial.py",
    "tests/tutorials/test_seeing_your_plan_tutorial.py",
    "tests/tutorials/test_cluster_tutorial.py::test_cluster_tutorial_counts_the_words_through_a_connect_server",
    "tests/tutorials/test_windowed_stream_tutorial.py",
    "tests/tutorials/test_surviving_a_crash_tutorial.py",
    "tests/streaming/test_stream_jobs.py",
    "tests/streaming/test_windowed_streams.py",
    "tests/streaming/test_two_phase_commit.py",
    "tests/streaming/test_hadoop_checkpoint.py::test_a_job_keeps_its_checkpoint_at_a_file_url",
    "tests/streaming/test_hadoop_checkpoint.py::test_a_checkpoint_at_a_scheme_hadoop_does_not_know",
    "tests/streaming/test_hadoop_checkpoint.py::test_a_url_checkpoint_through_fsspec",
    "tests/streaming/test_remote_checkpoint.py::test_a_job_keeps_its_state_at_an_ftp_url",
    "tests/streaming/test_remote_checkpoint.py::test_a_checkpoint_the_file_system_refuses",
    "tests/streaming/test_restart_checks.py::test_a_broken_file_of_sparks_query_at_a_hadoop_url",
    "tests/planner/test_progress.py::test_polling_a_running_job_shows_its_stage_and_tasks",
    "tests/planner/test_progress.py::test_join_shows_the_job_s_progress_on_a_terminal_only_and_erases_it",
)
"""Node-id prefixes of the tests marked ``connect``: the end-to-end tests that run on a Spark
Connect session too (``pytest --spark-master=connect -m connect``): tests.cluster.END_TO_END's
batch jobs, the stream jobs' and windows' tests, checkpoints at file:// and ftp:// URLs,
tutorials 01 to 08 (06's Connect way starts a cluster and a server of its own, and runs in this
set alone), and the progress line (the worker daemon is the classic engine's)."""


def pytest_addoption(parser):
    """``--spark-master``: where the ``spark`` fixture's session runs."""
    parser.addoption(
        "--spark-master",
        default="local[2]",
        metavar="MASTER",
        help="a Spark master URL (default local[2]); 'cluster': a standalone master and two "
        "workers started on 127.0.0.1 for the run (with -m cluster: the end-to-end set); or "
        "'connect': a Spark Connect server on local[2] started for the run, reached as a client "
        "without a SparkContext (with -m connect: the tests that run on Connect)",
    )


def pytest_collection_modifyitems(config, items):
    """Mark ``cluster`` the tests of the end-to-end set that use the SparkSession, and
    ``connect`` those that run on a Spark Connect session too."""
    from tests.cluster import END_TO_END

    for item in items:
        if item.nodeid.startswith(END_TO_END) and "spark" in item.fixturenames:
            item.add_marker(pytest.mark.cluster)
        if item.nodeid.startswith(ON_CONNECT):
            item.add_marker(pytest.mark.connect)


def pytest_collection_finish(session):
    """Where tests that start Spark run and the run was given no ``SPARK_SUBMIT_OPTS``, the JVMs
    their scripts start map the classes a session loads from a class-data archive, made once
    per Java and PySpark (tests.class_archive)."""
    from tests.class_archive import USE_OPTIONS, classArchive

    runsSpark = any(item.get_closest_marker("spark") for item in session.items)
    if GIVEN_SUBMIT_OPTIONS is None and runsSpark and not session.config.option.collectonly:
        archive = classArchive(SHORT_LIVED_OPTIONS, run)
        os.environ[SUBMIT_OPTIONS] = f"{SHORT_LIVED_OPTIONS} {USE_OPTIONS.format(archive)}"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> pathlib.Path:
    """sparkjet's wheel, built once for the tests that install it."""
    from tests.test_installed_examples import buildWheel

    return buildWheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def standaloneCluster(request, tmp_path_factory):
    """The standalone cluster of a run with ``--spark-master=cluster``, stopped at the end."""
    from tests.cluster import startCluster

    if request.config.getoption("--spark-master") != "cluster":
        pytest.skip("needs the standalone cluster: pytest --spark-master=cluster -m cluster")
    with startCluster(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def bareCluster(request, tmp_path_factory):
    """A standalone cluster whose workers have nothing installed: they run a Python of its own
    (a venv of this Python's base, without pip or the project) and a PYTHONPATH without the
    project. Its ``python`` is what the executors run (a driver's PYSPARK_PYTHON); stopped at
    the end of the module."""
    from tests.cluster import startBareCluster

    if request.config.getoption("--spark-master") != "cluster":
        pytest.skip("needs the standalone clusters: pytest --spark-master=cluster -m cluster")
    with startBareCluster(tmp_path_factory.mktemp("bare-cluster")) as cluster:
        yield cluster


CLIENT_VARIABLES = ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE")
"""What makes PySpark a Spark Connect client: a server started by a client's test must not be one."""


def freePort() -> int:
    """Return a TCP port of 127.0.0.1 no one listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    """Whether something accepts connections on ``port`` of 127.0.0.1."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def startConnectServer(directory: pathlib.Path, environment: dict[str, str]) -> Iterator[str]:
    """A Spark Connect server on ``local[2]`` in a process of its own (PySpark's
    start-connect-server.sh, in the foreground), listening on 127.0.0.1 alone for a token of its
    own, with this process's environment and ``environment`` over it; yield the URL that reaches
    it (the token in it); stopped at the end. Its log is ``directory``/server.log."""
    import pyspark

    home = pathlib.Path(pyspark.__file__).parent
    port, token, log = freePort(), uuid.uuid4().hex, directory / "server.log"
    with givenJavaOptions():
        variables = {name: value for name, value in os.environ.items() if name not in CLIENT_VARIABLES}
    variables |= {
        "SPARK_HOME": str(home), "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
        "SPARK_PID_DIR": str(directory), "SPARK_LOG_DIR": str(directory), **environment,
    }
    command = [
        str(home / "sbin" / "start-connect-server.sh"), "--wait", "--master", "local[2,4]",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=8",
    ]
    with open(log, "w") as output:
        server = subprocess.Popen(command, env=variables, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        eventually(lambda: server.poll() is not None or listening(port), progress=lambda: log.stat().st_size)
        assert server.poll() is None, f"the Spark Connect server ended as it started; its log:\n{log.read_text()[-3000:]}"
        yield f"sc://localhost:{port}/;token={token}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # its JVM removes its temporary directories
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            stop(server)


@pytest.fixture(scope="session")
def connectServer(request, tmp_path_factory) -> Iterator[str]:
    """The URL of the Spark Connect server of a run with ``--spark-master=connect``: its Python
    workers run this Python and import the project, as a local session's do."""
    if request.config.getoption("--spark-master") != CONNECT:
        pytest.skip("needs the Spark Connect server: pytest --spark-master=connect -m connect")
    paths = [str(PROJECT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    environment = {"PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(paths)}
    with startConnectServer(tmp_path_factory.mktemp("connect-server"), environment) as url:
        yield url


def noSparkContext() -> None:
    """Fail if this process runs a classic SparkContext (a Spark Connect client runs none)."""
    from pyspark import SparkContext

    assert SparkContext._active_spark_context is None, "a classic SparkContext runs in the Spark Connect client"


@contextlib.contextmanager
def givenJavaOptions():
    """Within: ``SPARK_SUBMIT_OPTS`` as the run was given it, for a JVM that lives for the whole
    run; given none, the class archive's options alone where the run made one."""
    short = os.environ[SUBMIT_OPTIONS]
    given = GIVEN_SUBMIT_OPTIONS
    os.environ[SUBMIT_OPTIONS] = short.removeprefix(SHORT_LIVED_OPTIONS).lstrip() if given is None else given
    try:
        yield
    finally:
        os.environ[SUBMIT_OPTIONS] = short


@pytest.fixture(scope="session")
def spark(request):
    """The one SparkSession of the test run: local[2] as on CI, or as ``--spark-master`` says (a
    Connect session: with no classic SparkContext in this process, at its start and its end)."""
    from pyspark.sql import SparkSession

    from sparkjet.coredag.runtime.session import embeddedSession
    from tests.cluster import clusterSession

    master = request.config.getoption("--spark-master")
    if master == CONNECT:
        session = SparkSession.builder.remote(request.getfixturevalue("connectServer")).getOrCreate()
        noSparkContext()
        yield session
        session.stop()
        noSparkContext()
        return
    with givenJavaOptions():
        if master == "cluster":
            shipped = request.getfixturevalue("tmp_path_factory").mktemp("shipped") / "tests.zip"
            session = clusterSession(request.getfixturevalue("standaloneCluster"), APP_NAME, shipped)
        else:
            session = embeddedSession(master, appName=APP_NAME)
    yield session
    session.stop()


@pytest.fixture
def jet(spark):
    """A Jet client on the shared session."""
    from sparkjet.planner import Jet

    client = Jet(spark=spark)
    yield client
    client.shutdown()
