"""Files that are not what a pipeline expects: a missing or empty directory, an empty file,
bytes the charset does not decode, one line of 50 MB, hidden files, line ends other than \\n, a
byte order mark, a charset whose newline is not one byte."""

import os
import re
from collections import Counter

import pytest

from sparkjet.coredag import InputError
from sparkjet.coredag.processors import sources
from sparkjet.pipeline import AggregateOperations, Pipeline, PipelineError, Sinks, Sources, wholeItem
from tests.conftest import here

THIS_FILE = os.path.basename(__file__)


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
    with pytest.raises(InputError) as raised:
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


def linesOf(text: str) -> list[str]:
    """Split at \\r\\n, \\r or \\n, Spark's line ends, dropping the empty piece after a final one."""
    pieces = re.split(r"\r\n|\r|\n", text)
    return pieces[:-1] if pieces[-1] == "" else pieces


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_lines_longer_than_a_read_chunk_are_whole_from_any_split_point(tmp_path, monkeypatch, newline):
    monkeypatch.setattr(sources, "READ_CHUNK", 4)
    text = "a line of h\u00e9llo w\u00f6rld \u20acuros\nshort\n\nlast line, with no end".replace("\n", newline)
    path = tmp_path / "lines.txt"
    path.write_bytes(text.encode())
    size = path.stat().st_size
    for split in range(size + 1):
        ranges = (sources.lineBatchesStartingIn(str(path), *bounds, "utf-8") for bounds in ((0, split), (split, size)))
        lines = [line for batches in ranges for batch in batches for line in batch]
        assert lines == linesOf(text) == ["a line of h\u00e9llo w\u00f6rld \u20acuros", "short", "", "last line, with no end"], split


def readLines(jet, directory, parallelism: int = 3, source=Sources.files) -> list:
    """Return what ``source`` reads from ``directory`` with ``parallelism`` processors."""
    p = Pipeline.create()
    p.readFrom(source(str(directory))).setLocalParallelism(parallelism).writeTo(Sinks.list("lines"))
    jet.newJob(p).join()
    return jet.getList("lines")


def sparkLines(spark, directory) -> list[str]:
    """Return the lines Spark's own text reader reads from ``directory``."""
    return [row.value for row in spark.read.text(str(directory)).collect()]


@pytest.mark.spark
@pytest.mark.parametrize(
    "sink, source, items",
    [
        (Sinks.files, Sources.files, ["caf\u00e9", "", "  spaced  ", *map(str, range(200))]),
        (Sinks.json, Sources.json, [{"n": n, "w": f"w\u00e9{n}"} for n in range(200)]),
    ],
)
def test_a_files_sink_directory_is_read_back_item_for_item(jet, tmp_path, sink, source, items):
    output = tmp_path / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items(items)).setLocalParallelism(2).writeTo(sink(str(output)))
    jet.newJob(p).join()
    names = os.listdir(output)
    assert "_SUCCESS" in names and any(name.startswith(".part-") for name in names), names
    read = readLines(jet, output, source=source)
    assert sorted(map(repr, read)) == sorted(map(repr, items))


@pytest.mark.spark
def test_hidden_and_underscore_files_are_skipped_as_sparks_reader_skips_them(jet, spark, tmp_path):
    (tmp_path / "a.txt").write_text("read\nme\n")
    (tmp_path / ".a.txt.crc").write_bytes(b"crc\x00\xff\xfe\n")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / "_notes.txt").write_text("not read\n")
    (tmp_path / ".hidden").write_text("not read either\n")
    assert sorted(readLines(jet, tmp_path)) == sorted(sparkLines(spark, tmp_path)) == ["me", "read"]


@pytest.mark.spark
def test_a_directory_of_hidden_files_reads_nothing_as_an_empty_one(jet, spark, tmp_path):
    (tmp_path / ".part-00000.crc").write_bytes(b"\xff\xfe\n")
    (tmp_path / "_SUCCESS").write_text("")
    jet.newJob(wordCount(tmp_path)).join()
    assert jet.getList("counts") == [] == sparkLines(spark, tmp_path)


LINE_ENDS = {
    "cr.txt": b"classic\rmac\r\rline ends\r",
    "crlf.txt": b"windows\r\nline ends\r\n\r\nlast",
    "mixed.txt": b"\r\n\r\rmixed\n\r\nends \xc3\xa9\r\n\n\rand none" * 50,
    "bom.txt": b"\xef\xbb\xbfa byte order mark\rthen \xef\xbb\xbf inside\r\n",
}


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3, 8])
def test_lines_end_at_cr_crlf_and_lf_and_a_bom_is_skipped_as_in_sparks_reader(jet, spark, tmp_path, parallelism):
    for name, content in LINE_ENDS.items():
        (tmp_path / name).write_bytes(content)
    expected = Counter(line for content in LINE_ENDS.values() for line in linesOf(content.decode().removeprefix("\ufeff")))
    assert Counter(readLines(jet, tmp_path, parallelism)) == expected == Counter(sparkLines(spark, tmp_path))
    assert "a byte order mark" in expected and "then \ufeff inside" in expected


@pytest.mark.spark
def test_json_lines_ending_in_cr_after_a_bom_are_read_as_sparks_json_reader_reads_them(jet, spark, tmp_path):
    (tmp_path / "a.json").write_bytes(b'\xef\xbb\xbf{"n": 1}\r{"n": 2}\r\n\r{"n": 3}\r')
    read = readLines(jet, tmp_path, source=Sources.json)
    assert sorted(read, key=lambda item: item["n"]) == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert sorted(row.n for row in spark.read.json(str(tmp_path)).collect()) == [1, 2, 3]


@pytest.mark.parametrize("source", [Sources.files, Sources.json])
@pytest.mark.parametrize(
    "charset, newline",
    [("utf-16", b"\xff\xfe\n\x00"), ("utf-16-le", b"\n\x00"), ("utf-16-be", b"\x00\n"), ("utf-32", b"\xff\xfe\x00\x00\n\x00\x00\x00"), ("utf-32-be", b"\x00\x00\x00\n")],
)
def test_a_charset_whose_newline_is_not_one_byte_is_refused_where_the_source_is_defined(tmp_path, source, charset, newline):
    (tmp_path / "utf16.txt").write_text("two\nlines\n", encoding=charset)
    with pytest.raises(PipelineError) as raised:
        source(str(tmp_path), charset=charset)
    line = here() - 1
    origin = f"Sources.{source.__name__}"
    assert str(raised.value) == (
        f"{origin} (called at {THIS_FILE}:{line}): cannot read files in the charset '{charset}' line by "
        f"line: a newline there is {newline!r}, not the byte b'\\n'; expected a charset in which '\\r' "
        "and '\\n' are the bytes b'\\r' and b'\\n' whatever surrounds them, such as 'utf-8', 'latin-1', "
        f"'cp1252', 'ascii' or 'iso-8859-15'; convert the files first, e.g. iconv -f {charset} -t utf-8"
    )
    assert "latin-1')" not in str(raised.value)


@pytest.mark.parametrize("source", [Sources.files, Sources.json])
def test_an_unknown_charset_is_refused_where_the_source_is_defined(tmp_path, source):
    with pytest.raises(PipelineError) as raised:
        source(str(tmp_path), charset="nope")
    line = here() - 1
    assert str(raised.value) == (
        f"Sources.{source.__name__} (called at {THIS_FILE}:{line}): unknown charset 'nope'; expected "
        "the name of a text encoding Python knows, such as 'utf-8', 'latin-1', 'cp1252', 'ascii' or "
        "'iso-8859-15'"
    )


@pytest.mark.parametrize("charset", ["utf-7", "utf-8-sig", "iso2022_jp"])
def test_a_charset_that_cannot_be_split_into_lines_by_byte_is_refused_where_the_source_is_defined(tmp_path, charset):
    with pytest.raises(PipelineError, match=rf"^Sources.files \(called at {THIS_FILE}:\d+\): cannot read files in the charset '{charset}' line by line"):
        Sources.files(str(tmp_path), charset=charset)
