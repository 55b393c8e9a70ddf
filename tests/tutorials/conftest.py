"""Fixtures of the tutorial tests."""

from collections import Counter

import pytest

from tests.conftest import CONNECT, tokenize


@pytest.fixture
def childSessions(request, monkeypatch):
    """The session a tutorial's child processes start with ``Jet()``: on a run with
    ``--spark-master=connect``, one of the run's Connect server (PySpark's ``SPARK_REMOTE``);
    else a local one, as a user's."""
    if request.config.getoption("--spark-master") == CONNECT:
        monkeypatch.setenv("SPARK_REMOTE", request.getfixturevalue("connectServer"))


@pytest.fixture
def smallCorpus(tmp_path, corpusLines):
    """The first 2,000 lines of the corpus, split over two files, and their Counter."""
    directory = tmp_path / "books"
    directory.mkdir()
    (directory / "a.txt").write_text("\n".join(corpusLines[:1000]) + "\n")
    (directory / "b.txt").write_text("\n".join(corpusLines[1000:2000]) + "\n")
    return directory, Counter(word for line in corpusLines[:2000] for word in tokenize(line))


def speechBlocks(paths) -> list[tuple[str, list[str]]]:
    """``(speaker, lines)`` per speech: each file's text cut at empty lines, keeping the
    blocks whose first line ends with ':'. Independent of the tutorials' own parsing."""
    speeches = []
    for path in paths:
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            heading, *lines = block.strip("\n").split("\n")
            if heading.endswith(":"):
                speeches.append((heading[:-1].lower(), lines))
    return speeches
