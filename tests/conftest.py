"""Shared fixtures: one SparkSession for the whole test session, and the bundled corpus."""

import os
import pathlib
import re
import sys
from collections import Counter

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


def pytest_addoption(parser):
    """``--spark-master``: where the ``spark`` fixture's session runs."""
    parser.addoption(
        "--spark-master",
        default="local[2]",
        metavar="MASTER",
        help="a Spark master URL (default local[2]), or 'cluster': a standalone master and two "
        "workers started on 127.0.0.1 for the run (with -m cluster: the end-to-end set)",
    )


def pytest_collection_modifyitems(config, items):
    """Mark ``cluster`` the tests of the end-to-end set that use the SparkSession."""
    from tests.cluster import END_TO_END

    for item in items:
        if item.nodeid.startswith(END_TO_END) and "spark" in item.fixturenames:
            item.add_marker(pytest.mark.cluster)


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


@pytest.fixture(scope="session")
def spark(request):
    """The one SparkSession of the test run: local[2] as on CI, or as ``--spark-master`` says."""
    from sparkjet.coredag.runtime.session import embeddedSession
    from tests.cluster import clusterSession

    master = request.config.getoption("--spark-master")
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
