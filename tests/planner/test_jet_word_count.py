"""Word count end to end on Spark: the planned DAG runs and equals collections.Counter."""

import re

import pytest

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from tests.conftest import CORPUS

pytestmark = pytest.mark.spark


def wordCount(directory, parallelism: int, sink=None) -> Pipeline:
    p = Pipeline.create()
    words = (
        p.readFrom(Sources.files(str(directory), "*.txt"))
        .setLocalParallelism(parallelism)
        .flatMap(lambda line: re.split(r"\W+", line.lower()))
        .setLocalParallelism(parallelism)
        .filter(lambda word: word != "")
        .setLocalParallelism(parallelism)
    )
    counts = words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting())
    counts.setLocalParallelism(parallelism).writeTo(sink or Sinks.list("counts"))
    return p


@pytest.fixture(scope="module")
def eightFiles(tmp_path_factory, corpusLines):
    """The corpus split by lines into 8 files."""
    directory = tmp_path_factory.mktemp("eight")
    share = -(-len(corpusLines) // 8)
    for number in range(8):
        chunk = corpusLines[number * share : (number + 1) * share]
        (directory / f"part-{number}.txt").write_text("".join(line + "\n" for line in chunk))
    return directory


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_word_count_of_one_file_equals_counter(jet, corpusCounts, parallelism):
    jet.newJob(wordCount(CORPUS.parent, parallelism)).join()
    assert dict(jet.getList("counts")) == corpusCounts


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_word_count_of_eight_files_equals_counter(jet, corpusCounts, eightFiles, parallelism):
    jet.newJob(wordCount(eightFiles, parallelism)).join()
    assert dict(jet.getList("counts")) == corpusCounts


def test_each_word_is_counted_once(jet, corpusCounts):
    jet.newJob(wordCount(CORPUS.parent, 3)).join()
    words = [word for word, _ in jet.getList("counts")]
    assert len(words) == len(set(words)) == len(corpusCounts) == 11456


def test_files_sink_writes_one_line_per_item(jet, corpusCounts, tmp_path):
    output = tmp_path / "counts"
    jet.newJob(wordCount(CORPUS.parent, 2, Sinks.files(str(output)))).join()
    lines = [
        line
        for part in sorted(output.glob("part-*"))
        for line in part.read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(lines) == sorted(str(entry) for entry in corpusCounts.items())
    assert (output / "_SUCCESS").exists()
