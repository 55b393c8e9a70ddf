"""The inputs, built at run time in a scratch directory: the corpus repeated, 10-line, many keys."""

import math
import pathlib
import shutil
from collections import Counter

import attrs

from benchmarks.words import split, summarize

PROJECT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tutorials" / "data" / "tinyshakespeare.txt"
MIB = 1024 * 1024
KEY_STRIDE = 7_654_321
TINY_LINES = 10
KEY_CHUNK = 1_000_000


@attrs.frozen
class Input:
    """A directory of text files and the summary every variant's counts must equal."""

    name: str
    directory: str
    size: int
    fileCount: int
    description: str
    expected: dict


def corpusBytes() -> bytes:
    """Return the bundled corpus; refuse it unless ASCII with a final newline.

    Java's ``\\W`` (Spark's ``split``) and Python's ``\\W`` agree on ASCII only, and copies
    laid end to end keep their lines apart only when the corpus ends with a newline.
    """
    data = CORPUS.read_bytes()
    if not data.isascii():
        raise SystemExit(
            f"{CORPUS} is not pure ASCII: Java's and Python's \\W would split it differently"
        )
    if not data.endswith(b"\n"):
        raise SystemExit(f"{CORPUS} does not end with a newline: its copies would join two words")
    return data


def corpusCounts(corpus: bytes) -> Counter:
    """Count the corpus's words with the shared tokenization, independently of any variant."""
    return Counter(
        word for line in corpus.decode("ascii").splitlines() for word in split(line) if word
    )


def freshDirectory(directory: pathlib.Path) -> pathlib.Path:
    """Return ``directory``, emptied."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


def directorySize(directory: pathlib.Path) -> int:
    """Return the total size of the files in ``directory``."""
    return sum(path.stat().st_size for path in directory.iterdir())


def corpusInput(root: pathlib.Path, sizeMiB: int, fileCount: int) -> Input:
    """Repeat the corpus to about ``sizeMiB`` MiB, split at line ends over ``fileCount`` files."""
    corpus = corpusBytes()
    copies = max(1, round(sizeMiB * MIB / len(corpus)))
    directory = freshDirectory(root / f"corpus-{sizeMiB}MiB-{fileCount}files")
    paths = [directory / f"part-{index:02d}.txt" for index in range(fileCount)]
    writeRepeated(corpus, copies, paths)
    expected = summarize((word, count * copies) for word, count in corpusCounts(corpus).items())
    size = directorySize(directory)
    return Input(
        name=f"{sizeMiB} MiB, {fileCount} file{'s' if fileCount > 1 else ''}",
        directory=str(directory),
        size=size,
        fileCount=fileCount,
        description=f"the corpus {copies} times ({size:,} bytes) in {fileCount} file(s)",
        expected=expected,
    )


def writeRepeated(corpus: bytes, copies: int, paths: list[pathlib.Path]) -> None:
    """Write ``copies`` copies of ``corpus`` end to end, cut at line starts into ``paths``."""
    total = copies * len(corpus)
    cuts = [
        0,
        *(lineStartFrom(corpus, total * index // len(paths)) for index in range(1, len(paths))),
        total,
    ]
    for path, start, end in zip(paths, cuts[:-1], cuts[1:], strict=True):
        with open(path, "wb") as file:
            writeSlice(file, corpus, start, end)


def lineStartFrom(corpus: bytes, position: int) -> int:
    """Return the first line start at or after ``position`` in the repeated corpus."""
    offset = position % len(corpus)
    if offset == 0:
        return position
    return position - offset + corpus.index(b"\n", offset - 1) + 1


def writeSlice(file, corpus: bytes, start: int, end: int) -> None:
    """Write bytes ``[start, end)`` of the repeated corpus."""
    view, size = memoryview(corpus), len(corpus)
    while start < end:
        offset = start % size
        piece = view[offset : min(size, offset + end - start)]
        file.write(piece)
        start += len(piece)


def tinyInput(root: pathlib.Path) -> Input:
    """The first ten lines of the corpus, one file."""
    corpus = corpusBytes()
    text = b"".join(corpus.splitlines(keepends=True)[:TINY_LINES])
    directory = freshDirectory(root / "tiny")
    (directory / "part-00.txt").write_bytes(text)
    return Input(
        name="10 lines",
        directory=str(directory),
        size=directorySize(directory),
        fileCount=1,
        description=f"the first {TINY_LINES} lines of the corpus ({len(text)} bytes)",
        expected=summarize(corpusCounts(text).items()),
    )


def keysInput(root: pathlib.Path, keyCount: int) -> Input:
    """One key per line: every key once, then every odd key again, in a scrambled order.

    Key ``j`` is ``k`` and ``j`` zero-padded, so it occurs ``1 + j % 2`` times: the expected
    counts need no counting at all.
    """
    width = len(str(keyCount - 1))
    stride = next(
        s for s in range(KEY_STRIDE, KEY_STRIDE + 2 * keyCount, 2) if math.gcd(s, keyCount) == 1
    )
    directory = freshDirectory(root / f"keys-{keyCount}")
    with open(directory / "part-00.txt", "w", encoding="ascii") as file:
        for keepEven in (True, False):
            for start in range(0, keyCount, KEY_CHUNK):
                keys = (
                    (index * stride) % keyCount
                    for index in range(start, min(start + KEY_CHUNK, keyCount))
                )
                file.write("".join(f"k{key:0{width}d}\n" for key in keys if keepEven or key % 2))
    lines, size = keyCount + keyCount // 2, directorySize(directory)
    return Input(
        name=f"{keyCount:,} keys",
        directory=str(directory),
        size=size,
        fileCount=1,
        description=f"{keyCount:,} distinct keys in {lines:,} lines ({size:,} bytes), one file",
        expected=summarize((f"k{key:0{width}d}", 1 + key % 2) for key in range(keyCount)),
    )
