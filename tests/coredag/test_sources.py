"""Reading files by byte range: every line read exactly once, whatever the parallelism."""

import itertools
from collections import Counter

import pytest

from coredag import DagError, InputError, ProcessorContext
from coredag.sources import ItemsP, ReadFilesP, byteRanges, lineBatchesStartingIn, listFiles

FILES = {
    "a.txt": b"alpha\nbeta\r\ngamma\n",
    "b.txt": b"no newline at the end",
    "c.txt": b"",
    "d.txt": b"\n\nx\n\r\n\n",
    "e.txt": b"long" * 5000 + b"\nshort\n",
    "f.txt": "h\u00e9llo w\u00f6rld\n\u20acuro\r\nlast \u00e9\n".encode(),
    "g.log": b"mid\rline carriage return\n",
}


def naiveLines(content: bytes) -> list[str]:
    """Split on \\n, dropping one \\r before it and the empty piece after a final \\n."""
    pieces = content.split(b"\n")
    lines = [piece[:-1] if piece.endswith(b"\r") else piece for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return [line.decode("utf-8") for line in lines]


@pytest.fixture
def directory(tmp_path):
    """A directory holding FILES."""
    for name, content in FILES.items():
        (tmp_path / name).write_bytes(content)
    return tmp_path


def readAll(source: ReadFilesP, count: int) -> list[str]:
    """Return the lines processors 0..count-1 read, in processor order."""
    contexts = [ProcessorContext("read", index, count) for index in range(count)]
    return [line for context in contexts for line in source.lines(context)]


def test_naive_reader_agrees_with_splitlines_where_both_apply():
    assert naiveLines(b"a\r\nb\n\nc") == "a\r\nb\n\nc".splitlines() == ["a", "b", "", "c"]


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
    newlines = [i for i, byte in enumerate(content) if byte == ord("\n")]
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
        f"Sources.files: '{path}' line 3 is not valid utf-8: invalid start byte at byte 17 of the file"
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
    with pytest.raises(DagError) as raised:
        listFiles(str(missing), "*")
    assert str(raised.value) == f"Sources.files: the directory '{missing}' does not exist"


def test_preflight_names_a_missing_directory(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(DagError, match="the directory '.*nope' does not exist"):
        ReadFilesP(missing).preflight()


def test_unmatched_glob_is_named(directory):
    with pytest.raises(DagError) as raised:
        ReadFilesP(str(directory), glob="*.csv").preflight()
    assert str(raised.value) == f"Sources.files: no file in '{directory}' matches the glob '*.csv'"


def test_glob_that_matches_only_a_directory_is_unmatched(tmp_path):
    (tmp_path / "sub.txt").mkdir()
    with pytest.raises(DagError, match="matches the glob"):
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
