"""Fixtures of the tutorial tests."""

from collections import Counter

import pytest

from tests.conftest import tokenize


@pytest.fixture
def smallCorpus(tmp_path, corpusLines):
    """The first 2,000 lines of the corpus, split over two files, and their Counter."""
    directory = tmp_path / "books"
    directory.mkdir()
    (directory / "a.txt").write_text("\n".join(corpusLines[:1000]) + "\n")
    (directory / "b.txt").write_text("\n".join(corpusLines[1000:2000]) + "\n")
    return directory, Counter(word for line in corpusLines[:2000] for word in tokenize(line))
