"""Shared fixtures: one SparkSession for the whole test session, and the bundled corpus."""

import pathlib
import re
from collections import Counter

import pytest
from hypothesis import settings

# Property tests check results, never wall time: no per-example deadline on a busy machine.
settings.register_profile("sparkjet", deadline=None)
settings.load_profile("sparkjet")

PROJECT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tutorials" / "data" / "tinyshakespeare.txt"


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


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run: local[2], as on CI."""
    from coredag.execution import embeddedSession

    session = embeddedSession("local[2]", appName="sparkjet-tests")
    yield session
    session.stop()


@pytest.fixture
def jet(spark):
    """A Jet client on the shared session."""
    from planner import Jet

    client = Jet(spark=spark)
    yield client
    client.shutdown()
