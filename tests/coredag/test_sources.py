"""Reading files by byte range (every line read exactly once, whatever the parallelism), as
JSON lines, or through Spark's reader for URLs; rows of a DataFrame."""

import itertools
import json
import os
import re
import tempfile
from collections import Counter
from operator import itemgetter
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkjet.coredag import DAG, Edge, InputError, ProcessorContext
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.processors import sources
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import (
    DataFrameSourceP,
    DecodeLines,
    ItemsP,
    ReadFilesP,
    ReadJsonP,
    SparkRowsP,
    byteRanges,
    isHadoopUrl,
    lineBatchesStartingIn,
    listFiles,
    rowsAsDicts,
)

FILES = {
    "a.txt": b"alpha\nbeta\r\ngamma\n",
    "b.txt": b"no newline at the end",
    "c.txt": b"",
    "d.txt": b"\n\nx\n\r\n\n",
    "e.txt": b"long" * 5000 + b"\nshort\n",
    "f.txt": "h\u00e9llo w\u00f6rld\n\u20acuro\r\nlast \u00e9\n".encode(),
    "g.log": b"mid\rline carriage return\n",
    "h.txt": b"classic\rmac\r\rline ends\r",
    "i.txt": b"\r\n\r\rmixed\n\r\nends\r\n\n\rand none",
    "j.txt": b"\xef\xbb\xbfa byte order mark first\r\nthen one \xef\xbb\xbf inside\n\xef\xbb\xbf\r",
}

BOM = b"\xef\xbb\xbf"


def naiveLines(content: bytes) -> list[str]:
    """Split on \\r\\n, \\r or \\n as Spark's reader does, after a UTF-8 byte order mark at the
    start, dropping the empty piece after a final line end."""
    pieces = re.split(rb"\r\n|\r|\n", content.removeprefix(BOM))
    if not pieces[-1]:
        pieces.pop()
    return [piece.decode("utf-8") for piece in pieces]


@pytest.fixture
def directory(tmp_path):
    """A directory holding FILES."""
    for name, content in FILES.items():
        (tmp_path / name).write_bytes(content)
    return tmp_path


def readAll(source: ReadFilesP, count: int) -> list[str]:
    """Return the lines processors 0..count-1 read, in processor order."""
    contexts = [ProcessorContext("read", index, count) for index in range(count)]
    return [line for context in contexts for line in source.items(context)]


def test_naive_reader_agrees_with_splitlines_where_both_apply():
    assert naiveLines(b"a\r\nb\n\nc") == "a\r\nb\n\nc".splitlines() == ["a", "b", "", "c"]
    assert naiveLines(b"a\rb\r\n\r\rc\r") == "a\rb\r\n\r\rc\r".splitlines() == ["a", "b", "", "", "c"]


@pytest.mark.parametrize("count", range(1, 10))
def test_union_of_processors_lines_is_every_line_once(directory, count):
    expected = Counter(line for name in sorted(FILES) for line in naiveLines(FILES[name]))
    assert Counter(readAll(ReadFilesP(str(directory)), count)) == expected


@pytest.mark.parametrize("count", [1, 4, 9])
def test_lines_come_in_file_order(directory, count):
    expected = [line for name in sorted(FILES) for line in naiveLines(FILES[name])]
    assert readAll(ReadFilesP(str(directory)), count) == expected


@pytest.mark.parametrize("name", sorted(FILES))
def test_any_split_point_gives_every_line_once(directory, name):
    content = FILES[name]
    path, size = str(directory / name), len(content)
    newlines = [i for i, byte in enumerate(content) if byte in b"\r\n"]
    aroundNewlines = {i + offset for i in newlines for offset in (-1, 0, 1, 2)}
    splits = {*range(min(size, 60) + 1), *aroundNewlines, size // 2, size}
    for split in sorted(s for s in splits if 0 <= s <= size):
        before = itertools.chain.from_iterable(lineBatchesStartingIn(path, 0, split, "utf-8"))
        after = itertools.chain.from_iterable(lineBatchesStartingIn(path, split, size, "utf-8"))
        lines = [*before, *after]
        assert lines == naiveLines(content), split


@pytest.mark.parametrize("count", range(1, 10))
def test_byte_ranges_cover_every_byte_once(count):
    files = (("a", 10), ("b", 0), ("c", 7), ("d", 1))
    covered = Counter(
        (path, offset)
        for index in range(count)
        for path, start, end in byteRanges(files, index, count)
        for offset in range(start, end)
    )
    assert covered == Counter((path, offset) for path, size in files for offset in range(size))


def test_byte_ranges_never_yield_an_empty_range():
    files = (("a", 3), ("b", 0), ("c", 2))
    ranges = [r for index in range(9) for r in byteRanges(files, index, 9)]
    assert all(start < end for _, start, end in ranges)


def test_undecodable_line_raises_input_error_with_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"first\nsecond\r\nthi\xffrd\nfourth\n")
    with pytest.raises(InputError) as raised:
        readAll(ReadFilesP(str(tmp_path)), 1)
    assert str(raised.value) == (
        f"Sources.files: '{path}' line 3 is not valid utf-8: invalid start byte at byte 17 of the file; "
        "if the files are in another charset, name it: Sources.files(directory, charset='latin-1')"
    )
    assert isinstance(raised.value.__cause__, UnicodeDecodeError)


@pytest.mark.parametrize("count", [2, 3, 5])
def test_undecodable_line_number_is_right_in_a_later_byte_range(tmp_path, count):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 40)) + b"\xfe\n")
    with pytest.raises(InputError, match=r"'.*bad\.txt' line 40 is not valid utf-8"):
        readAll(ReadFilesP(str(tmp_path)), count)


def test_other_charset_is_used(tmp_path):
    (tmp_path / "latin.txt").write_bytes("caf\u00e9\nna\u00efve\n".encode("latin-1"))
    assert readAll(ReadFilesP(str(tmp_path), charset="latin-1"), 2) == ["caf\u00e9", "na\u00efve"]


def test_missing_directory_is_named(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(InputError) as raised:
        listFiles(str(missing), "*")
    assert str(raised.value) == f"Sources.files: the directory '{missing}' does not exist"


def test_preflight_names_a_missing_directory(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(InputError, match="the directory '.*nope' does not exist"):
        ReadFilesP(missing).preflight()


def test_unmatched_glob_is_named(directory):
    with pytest.raises(InputError) as raised:
        ReadFilesP(str(directory), glob="*.csv").preflight()
    assert str(raised.value) == f"Sources.files: no file in '{directory}' matches the glob '*.csv'"


def test_glob_that_matches_only_a_directory_is_unmatched(tmp_path):
    (tmp_path / "sub.txt").mkdir()
    with pytest.raises(InputError, match="matches the glob"):
        listFiles(str(tmp_path), "*.txt")


def test_glob_filters_files_and_skips_directories(directory):
    (directory / "zz.txt").mkdir()
    files = listFiles(str(directory), "*.log")
    assert files == ((str(directory / "g.log"), len(FILES["g.log"])),)
    names = [path.rsplit("/", 1)[1] for path, _ in listFiles(str(directory), "[ab].txt")]
    assert names == ["a.txt", "b.txt"]


def test_glob_restricts_the_lines_read(directory):
    lines = readAll(ReadFilesP(str(directory), glob="a.*"), 3)
    assert lines == naiveLines(FILES["a.txt"])


def test_preflight_fixes_the_files_the_job_reads(directory):
    checked = ReadFilesP(str(directory), glob="a*.txt").preflight()
    (directory / "a2.txt").write_bytes(b"added later\n")
    assert checked.files == ((str(directory / "a.txt"), len(FILES["a.txt"])),)
    assert readAll(checked, 2) == naiveLines(FILES["a.txt"])
    assert "added later" in readAll(ReadFilesP(str(directory), glob="a*.txt"), 2)


@pytest.mark.parametrize("count", [1, 3, 4])
def test_items_source_shares_every_item_once(count):
    source = ItemsP(tuple("abcdefghij"))
    contexts = [ProcessorContext("items", index, count) for index in range(count)]
    shared = [item for context in contexts for item in source.share(context)]
    assert Counter(shared) == Counter("abcdefghij")


# JSON lines: each non-blank line one object, errors naming the file and line

JSON_FILES = {
    "a.json": b'{"n": 1, "s": "x"}\n\n{"n": 2, "nested": {"l": [1, 2]}}\r\n   \n',
    "b.json": "".join(f'{{"n": {n}, "w": "w\u00e9{n}"}}\n' for n in range(3, 60)).encode(),
    "c.json": b'{"n": 60}',
}


def jsonObjects(files: dict[str, bytes]) -> list[dict]:
    """The objects of the non-blank lines, in file order, by a separate computation."""
    texts = (files[name].decode("utf-8") for name in sorted(files))
    return [json.loads(line) for text in texts for line in text.splitlines() if line.strip()]


@pytest.fixture
def jsonDirectory(tmp_path):
    """A directory holding JSON_FILES."""
    for name, content in JSON_FILES.items():
        (tmp_path / name).write_bytes(content)
    return tmp_path


@pytest.mark.parametrize("count", range(1, 10))
def test_json_source_reads_every_object_once_in_file_order(jsonDirectory, count):
    assert readAll(ReadJsonP(str(jsonDirectory)), count) == jsonObjects(JSON_FILES)


@pytest.mark.parametrize("count", range(1, 8))
def test_invalid_json_line_raises_input_error_with_file_and_line(tmp_path, count):
    path = tmp_path / "bad.json"
    lines = [f'{{"n": {n}}}' for n in range(1, 30)] + ["", '{"n": oops}', '{"n": 32}']
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as raised:
        readAll(ReadJsonP(str(tmp_path)), count)
    assert str(raised.value) == (
        f"Sources.json: '{path}' line 31 is not valid JSON (Expecting value at column 7): '{{\"n\": oops}}'"
    )
    assert isinstance(raised.value.__cause__.__cause__, json.JSONDecodeError)


def test_json_line_that_is_not_an_object_is_named(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('{"n": 1}\n[1, 2]\n')
    with pytest.raises(InputError) as raised:
        readAll(ReadJsonP(str(tmp_path)), 1)
    assert str(raised.value) == f"Sources.json: '{path}' line 2 is not a JSON object: '[1, 2]'"


def test_json_source_names_itself_in_decoding_and_directory_errors(tmp_path):
    (tmp_path / "bad.json").write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(InputError, match=r"^Sources\.json: '.*bad\.json' line 2 is not valid utf-8"):
        readAll(ReadJsonP(str(tmp_path)), 2)
    with pytest.raises(InputError, match=r"^Sources\.json: the directory '.*nope' does not exist$"):
        ReadJsonP(str(tmp_path / "nope")).preflight()


# URLs go through Spark's reader


@pytest.mark.parametrize(
    "directory, isUrl",
    [
        ("/data/in", False),
        ("relative/in", False),
        ("C:\\data\\in", False),
        ("file:///data/in", True),
        ("hdfs://namenode:8020/in", True),
        ("s3a://bucket/in", True),
        ("gs://bucket/in", True),
    ],
)
def test_any_url_scheme_is_read_by_spark_and_a_path_by_the_worker(directory, isUrl):
    assert isHadoopUrl(directory) is isUrl
    assert ReadFilesP(directory).readsThroughSpark is isUrl
    assert ReadJsonP(directory).readsThroughSpark is isUrl


def test_a_url_is_not_checked_locally_before_the_job():
    source = ReadFilesP("file:///no/such/directory")
    assert source.preflight() is source


def test_rows_of_spark_reader_decode_into_lines_or_json_objects():
    rows = [(bytearray(b"plain"), "file:/d/a"), (bytearray("caf\u00e9".encode("latin-1")), "file:/d/b")]
    assert DecodeLines("latin-1", "Sources.files")(rows) == ["plain", "caf\u00e9"]
    jsonRows = [(bytearray(b'{"a": 1}'), "file:/d/a"), (bytearray(b" "), "file:/d/a"), (bytearray(b""), "file:/d/a")]
    assert DecodeLines("utf-8", "Sources.json", parseJson=True)(jsonRows) == [{"a": 1}]


def test_rows_of_spark_reader_that_fail_name_the_file():
    undecodable = [(bytearray(b"ok"), "file:/d/a%20b.txt"), (bytearray(b"x\xffy"), "file:/d/a%20b.txt")]
    with pytest.raises(InputError) as raised:
        DecodeLines("utf-8", "Sources.files")(undecodable)
    assert str(raised.value) == (
        "Sources.files: a line of 'file:/d/a b.txt' is not valid utf-8: invalid start byte at byte 1 "
        "of the line: b'x\\xffy'; if the files are in another charset, name it: "
        "Sources.files(directory, charset='latin-1')"
    )
    with pytest.raises(InputError) as raised:
        DecodeLines("utf-8", "Sources.json", parseJson=True)([(bytearray(b"{"), "file:/d/j")])
    assert str(raised.value) == (
        "Sources.json: a line of 'file:/d/j' is not valid JSON "
        "(Expecting property name enclosed in double quotes at column 2): '{'"
    )


def test_spark_rows_supplier_converts_on_both_paths():
    rows = [(bytearray(b'{"a": 1}'), "u"), (bytearray(b""), "u"), (bytearray(b'{"b": 2}'), "u")]
    supplier = ReadJsonP("file:///d").sparkRowsSupplier()
    context = ProcessorContext("rows", 0, 1)
    verifyProcessor(supplier).context(context).input(rows).expectOutput([{"a": 1}, {"b": 2}]).verify()
    assert list(supplier.fastPath(context)(iter(rows))) == [{"a": 1}, {"b": 2}]


def test_spark_rows_supplier_of_a_dataframe_holds_no_dataframe():
    class Row(tuple):
        def asDict(self, recursive):
            return {"word": self[0], "recursive": recursive}

    source = DataFrameSourceP(object())
    assert source.readsThroughSpark
    assert source.sparkRowsSupplier() == SparkRowsP(rowsAsDicts)
    expected = [{"word": "a", "recursive": True}]
    verifyProcessor(source).input([Row(("a",))]).expectOutput(expected).verify()


# Through Spark: a file:// URL gives what the worker reader gives (lines ending in \r, \r\n or
# \n; a byte order mark skipped at the start of a file)

SPARK_FILES = FILES


def runSource(jet, supplier, count: int) -> list:
    """Run ``supplier`` with ``count`` processors into a list sink; return the items."""
    dag = DAG()
    source = dag.newVertex("source", supplier, count)
    dag.edge(Edge.between(source, dag.newVertex("sink", ListSinkP("read"), 1)))
    jet.newJob(dag).join()
    return jet.getList("read")


@pytest.mark.spark
@pytest.mark.parametrize("count", [1, 3, 8])
def test_file_url_read_by_spark_equals_the_worker_reader(jet, tmp_path, count):
    for name, content in SPARK_FILES.items():
        (tmp_path / name).write_bytes(content)
    local = readAll(ReadFilesP(str(tmp_path), "*.txt").preflight(), count)
    throughSpark = runSource(jet, ReadFilesP(tmp_path.as_uri(), "*.txt"), count)
    assert Counter(throughSpark) == Counter(local)
    assert len(local) > 10


@pytest.mark.spark
@pytest.mark.parametrize("count", [1, 4])
def test_json_file_url_read_by_spark_equals_the_worker_reader(jet, jsonDirectory, count):
    throughSpark = runSource(jet, ReadJsonP(jsonDirectory.as_uri()), count)
    assert sorted(throughSpark, key=itemgetter("n")) == jsonObjects(JSON_FILES)


@pytest.mark.spark
def test_invalid_json_read_by_spark_names_the_file(jet, tmp_path):
    (tmp_path / "bad.json").write_text('{"a": 1}\nnot json\n')
    with pytest.raises(InputError) as raised:
        runSource(jet, ReadJsonP(tmp_path.as_uri()), 2)
    assert str(raised.value) == (
        f"Sources.json: a line of 'file:{tmp_path}/bad.json' is not valid JSON "
        "(Expecting value at column 1): 'not json'"
    )


@pytest.mark.spark
def test_url_matching_nothing_names_the_pattern(jet, tmp_path):
    url = (tmp_path / "absent").as_uri()
    with pytest.raises(InputError, match=f"^Sources.files: no file matches '{url}/\\*' \\(.*Path does not exist"):
        runSource(jet, ReadFilesP(url), 2)


# Line ends as Spark's reader has them: \r, \r\n and \n, from any split point and chunk size

CARRIAGE_RETURNS = BOM + b"a\r\nbb\r\r\n\rccc\n\n\r\r\ndd\r\xc3\xa9\re"


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_three_ranges_from_any_split_points_read_every_line_once_whatever_the_chunk(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(sources, "READ_CHUNK", chunk)
    path = tmp_path / "cr.txt"
    path.write_bytes(CARRIAGE_RETURNS)
    size = len(CARRIAGE_RETURNS)
    for low, high in itertools.combinations_with_replacement(range(size + 1), 2):
        ranges = ((0, low), (low, high), (high, size))
        lines = [line for bounds in ranges for batch in lineBatchesStartingIn(str(path), *bounds, "utf-8") for line in batch]
        assert lines == naiveLines(CARRIAGE_RETURNS) == ["a", "bb", "", "", "ccc", "", "", "", "dd", "\u00e9", "e"], (low, high)


def test_a_split_between_cr_and_lf_reads_no_empty_line(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    assert list(lineBatchesStartingIn(str(path), 0, 4, "utf-8")) == [["one"]]
    assert list(lineBatchesStartingIn(str(path), 4, 10, "utf-8")) == [["two"]]
    assert list(lineBatchesStartingIn(str(path), 4, 5, "utf-8")) == []


def test_a_lone_cr_at_a_range_end_ends_the_line(tmp_path):
    path = tmp_path / "cr.txt"
    path.write_bytes(b"one\rtwo\rthree")
    assert list(lineBatchesStartingIn(str(path), 0, 4, "utf-8")) == [["one"]]
    assert list(lineBatchesStartingIn(str(path), 4, 5, "utf-8")) == [["two"]]
    assert list(lineBatchesStartingIn(str(path), 5, 13, "utf-8")) == [["three"]]


def test_undecodable_line_number_and_byte_count_cr_line_ends_and_the_bom(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(BOM + b"one\rtwo\r\nth\xffree\r")
    with pytest.raises(InputError) as raised:
        readAll(ReadFilesP(str(tmp_path)), 2)
    assert str(raised.value).startswith(
        f"Sources.files: '{path}' line 3 is not valid utf-8: invalid start byte at byte 14 of the file;"
    )


# A UTF-8 byte order mark: skipped at the start of a file only, as Hadoop's LineRecordReader does


@pytest.mark.parametrize(
    "content, lines",
    [
        (BOM + b"hello\nworld\n", ["hello", "world"]),
        (BOM, []),
        (BOM + b"\r\nx", ["", "x"]),
        (BOM + BOM + b"z\n", ["\ufeffz"]),
        (b"x\n" + BOM + b"mid\n", ["x", "\ufeffmid"]),
    ],
)
def test_a_byte_order_mark_is_skipped_at_the_start_of_a_file_only(tmp_path, content, lines):
    path = tmp_path / "bom.txt"
    path.write_bytes(content)
    for split in range(len(content) + 1):
        ranges = ((0, split), (split, len(content)))
        read = [line for bounds in ranges for batch in lineBatchesStartingIn(str(path), *bounds, "utf-8") for line in batch]
        assert read == lines, split


def test_a_byte_order_mark_is_skipped_whatever_the_charset_as_spark_skips_its_bytes(tmp_path):
    (tmp_path / "latin.txt").write_bytes(BOM + "caf\u00e9\n".encode("latin-1"))
    assert readAll(ReadFilesP(str(tmp_path), charset="latin-1"), 1) == ["caf\u00e9"]


def test_json_lines_end_at_cr_and_crlf_and_the_first_may_follow_a_bom(tmp_path):
    content = BOM + b'{"n": 1}\r{"n": 2}\r\n\r{"n": 3}\r  \r'
    (tmp_path / "cr.json").write_bytes(content)
    for count in range(1, len(content) + 1):
        assert readAll(ReadJsonP(str(tmp_path)), count) == [{"n": 1}, {"n": 2}, {"n": 3}], count


@pytest.mark.parametrize("count", [1, 3, 7])
def test_invalid_json_line_number_counts_cr_line_ends(tmp_path, count):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"n": 1}\r{"n": 2}\r\n\r{"n": 3}\rnope\r{"n": 5}\r')
    with pytest.raises(InputError) as raised:
        readAll(ReadJsonP(str(tmp_path)), count)
    assert str(raised.value) == f"Sources.json: '{path}' line 5 is not valid JSON (Expecting value at column 1): 'nope'"


# Hidden files (names starting with "." or "_"): skipped, as Hadoop's FileInputFormat does


def test_hidden_files_are_not_listed(tmp_path):
    for name in ["part-00000", ".part-00000.crc", "_SUCCESS", "._SUCCESS.crc", "_notes.txt"]:
        (tmp_path / name).write_bytes(b"\xff\xfe\n")
    assert listFiles(str(tmp_path), "*") == ((str(tmp_path / "part-00000"), 3),)


def test_a_directory_of_hidden_files_lists_none_as_an_empty_one(tmp_path):
    (tmp_path / ".hidden").write_text("x\n")
    (tmp_path / "_SUCCESS").write_text("")
    assert listFiles(str(tmp_path), "*") == ()
    assert listFiles(str(tmp_path), "*.txt") == ()
    assert readAll(ReadFilesP(str(tmp_path)), 2) == []


def test_a_glob_matching_only_hidden_files_is_unmatched_and_says_they_are_skipped(tmp_path):
    (tmp_path / "part-00000").write_text("x\n")
    (tmp_path / ".part-00000.crc").write_text("x\n")
    with pytest.raises(InputError) as raised:
        ReadFilesP(str(tmp_path), glob="*.crc").preflight()
    assert str(raised.value) == (
        f"Sources.files: no file in '{tmp_path}' matches the glob '*.crc' (it matches only "
        "'.part-00000.crc': names starting with '.' or '_' are hidden files, never read, as Spark's "
        "reader skips them)"
    )


# Charsets: only those whose line ends are the bytes \r and \n can be read from any byte


@pytest.mark.parametrize(
    "charset, newline",
    [
        ("utf-16", b"\xff\xfe\n\x00"),
        ("utf-16-le", b"\n\x00"),
        ("UTF-16BE", b"\x00\n"),
        ("utf-32", b"\xff\xfe\x00\x00\n\x00\x00\x00"),
        ("utf-32-le", b"\n\x00\x00\x00"),
        ("utf-32-be", b"\x00\x00\x00\n"),
        ("cp500", b"%"),
    ],
)
def test_a_charset_whose_newline_is_not_the_byte_lf_is_refused(charset, newline):
    with pytest.raises(InputError) as raised:
        ReadJsonP("/data/in", charset=charset)
    assert str(raised.value) == (
        f"Sources.json: cannot read files in the charset '{charset}' line by line: a newline there "
        f"is {newline!r}, not the byte b'\\n'; expected a charset in which '\\r' and '\\n' are the "
        "bytes b'\\r' and b'\\n' whatever surrounds them, such as 'utf-8', 'latin-1', 'cp1252', 'ascii' "
        f"or 'iso-8859-15'; convert the files first, e.g. iconv -f {charset} -t utf-8"
    )


@pytest.mark.parametrize("charset", ["utf-7", "iso2022_jp", "hz"])
def test_a_charset_with_shift_states_is_refused(charset):
    with pytest.raises(InputError, match=f"^Sources.files: cannot read files in the charset '{charset}' line by line: what its bytes mean depends on the bytes before them"):
        ReadFilesP("/data/in", charset=charset)


def test_utf_8_sig_is_refused_pointing_to_utf_8_which_skips_the_bom():
    with pytest.raises(InputError, match=r"; name 'utf-8' instead: it skips a byte order mark at the start of a file, as Spark's reader does$"):
        ReadFilesP("/data/in", charset="utf-8-sig")


def test_an_unknown_charset_or_one_that_is_no_text_encoding_is_refused():
    with pytest.raises(InputError) as raised:
        ReadFilesP("/data/in", charset="nope")
    assert str(raised.value) == (
        "Sources.files: unknown charset 'nope'; expected the name of a text encoding Python "
        "knows, such as 'utf-8', 'latin-1', 'cp1252', 'ascii' or 'iso-8859-15'"
    )
    with pytest.raises(InputError, match="^Sources.files: cannot read files in the charset 'base64' line by line: it is not a text encoding; expected"):
        ReadFilesP("/data/in", charset="base64")


@pytest.mark.parametrize("charset", ["utf-8", "UTF8", "latin-1", "cp1252", "ascii", "iso-8859-15", "shift_jis", "gb18030"])
def test_charsets_whose_line_ends_are_cr_and_lf_bytes_are_accepted(charset):
    assert sources.charsetProblem(charset) is None
    assert ReadFilesP("/data/in", charset=charset).charset == charset


@given(
    pieces=st.lists(st.sampled_from([b"a", b"bc", b"\r", b"\n", b"\r\n", "\u00e9".encode(), BOM]), max_size=40),
    cuts=st.lists(st.integers(0, 120), max_size=4),
    chunk=st.integers(1, 9),
)
def test_any_line_ends_split_anywhere_and_read_in_any_chunk_give_every_line_once(pieces, cuts, chunk):
    content = b"".join(pieces)
    bounds = sorted({0, len(content), *(min(cut, len(content)) for cut in cuts)})
    with tempfile.TemporaryDirectory() as directory, mock.patch.object(sources, "READ_CHUNK", chunk):
        path = os.path.join(directory, "lines.txt")
        with open(path, "wb") as file:
            file.write(content)
        ranges = [lineBatchesStartingIn(path, low, high, "utf-8") for low, high in zip(bounds, bounds[1:])]
        lines = [line for batches in ranges for batch in batches for line in batch]
    assert lines == naiveLines(content)
