"""Files that are not what a pipeline expects: a missing or empty directory, an empty file,
bytes the charset does not decode, one line of 50 MB."""

import os
from collections import Counter

import pytest

import coredag.sources
from coredag import DagError, InputError
from pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem


def linesTo(sink, directory, charset: str = "utf-8") -> Pipeline:
    """A pipeline writing the lines of the files in ``directory`` to ``sink``."""
    p = Pipeline.create()
    p.readFrom(Sources.files(str(directory), charset=charset)).writeTo(sink)
    return p


def wordCount(directory) -> Pipeline:
    """The word count of the files in ``directory``, into the list ``counts``."""
    p = Pipeline.create()
    words = p.readFrom(Sources.files(str(directory))).flatMap(str.split)
    words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    return p


def test_a_missing_directory_fails_at_submission_naming_it(submitter, tmp_path):
    missing, output = tmp_path / "missing", tmp_path / "out"
    with pytest.raises(DagError) as raised:
        submitter.newJob(linesTo(Sinks.files(str(output)), missing))
    assert str(raised.value) == f"Sources.files: the directory '{missing}' does not exist"
    assert not output.exists()


@pytest.mark.spark
def test_an_empty_directory_reads_nothing(jet, tmp_path):
    jet.newJob(wordCount(tmp_path)).join()
    assert jet.getList("counts") == []


@pytest.mark.spark
@pytest.mark.parametrize("files", [{"empty.txt": ""}, {"empty.txt": "", "words.txt": "to be or not to be\n"}])
def test_an_empty_file_reads_nothing(jet, tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    jet.newJob(wordCount(tmp_path)).join()
    expected = Counter(word for text in files.values() for word in text.split())
    assert Counter(dict(jet.getList("counts"))) == expected


@pytest.mark.spark
def test_undecodable_bytes_fail_naming_file_line_and_charset_and_leave_no_output(jet, tmp_path):
    directory, output = tmp_path / "in", tmp_path / "out"
    directory.mkdir()
    (directory / "a.txt").write_text("plain\n")
    (directory / "b.txt").write_bytes("first\ncaf\u00e9\nlast\n".encode("latin-1"))
    with pytest.raises(InputError) as raised:
        jet.newJob(linesTo(Sinks.files(str(output)), directory)).join()
    assert str(raised.value) == (
        f"Sources.files: '{directory / 'b.txt'}' line 2 is not valid utf-8: invalid continuation "
        "byte at byte 9 of the file; if the files are in another charset, name it: "
        "Sources.files(directory, charset='latin-1')"
    )
    assert not output.exists()
    jet.newJob(linesTo(Sinks.list("latin"), directory, charset="latin-1")).join()
    assert jet.getList("latin") == ["plain", "first", "caf\u00e9", "last"]


@pytest.mark.spark
def test_a_50_mb_line_is_read_whole_across_chunks_and_byte_ranges(jet, tmp_path):
    text = f"before it\n{'a' * (50 << 20)} and after\nlast line\n"
    (tmp_path / "long.txt").write_text(text)
    p = Pipeline.create()
    lines = p.readFrom(Sources.files(str(tmp_path))).setLocalParallelism(2)
    words = lines.flatMap(lambda line: [(word[:3], len(word)) for word in line.split()])
    words.setLocalParallelism(2).writeTo(Sinks.list("words"))
    job = jet.newJob(p)
    job.join()
    expected = Counter((word[:3], len(word)) for line in text.splitlines() for word in line.split())
    assert Counter(jet.getList("words")) == expected
    source = job.metrics().vertex(f"filesSource({os.path.join(tmp_path, '*')})")
    assert (source.processors, source.itemsOut) == (2, 3)


def test_lines_longer_than_a_read_chunk_are_whole_from_any_split_point(tmp_path, monkeypatch):
    monkeypatch.setattr(coredag.sources, "READ_CHUNK", 4)
    text = "a line of h\u00e9llo w\u00f6rld \u20acuros\nshort\n\nlast line, with no end"
    path = tmp_path / "lines.txt"
    path.write_text(text)
    size = path.stat().st_size
    for split in range(size + 1):
        ranges = (coredag.sources.lineBatchesStartingIn(str(path), *bounds, "utf-8") for bounds in ((0, split), (split, size)))
        assert [line for batches in ranges for batch in batches for line in batch] == text.splitlines(), split
