"""The files of Spark's query checkpoint, as Spark's metadata logs write them, and the checks
that one is whole: Spark reads them itself when a query starts, and a broken one fails the query
with Spark's own trace, which names no file (``Input length = 1`` for bytes that are not UTF-8).

- ``metadata``: the query's id, one JSON object (``{"id":"..."}``);
- ``offsets/N``: a version line (``v1``), a line of JSON metadata, then each source's offset,
  JSON or ``-``;
- ``commits/N``: a version line, then a JSON object (``{"nextBatchWatermarkMs":0}``), if any;
- ``sources/S/N`` (``N.compact`` every few batches, holding those before it): a version line,
  then a JSON line each, a file a file source read (``{"path":...,"timestamp":...,"batchId":...}``)
  or, for the rate source, the time it started.

No pyspark here."""

import json
import re

LOG_FILE = re.compile(r"([0-9]+)(\.compact)?")
"""The name of a batch's file in a metadata log (Spark's files being written, ``.N.<uuid>.tmp``, are not)."""


class BrokenFile(ValueError):
    """What is wrong with a checkpoint file, said as its message says it."""


def checkQueryMetadata(data: bytes) -> None:
    """Refuse a query's ``metadata`` that is not a JSON object with its id."""
    metadata = _jsonLine(_text(data), "the query's id")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("id"), str):
        raise BrokenFile('it is not the query\'s id, a JSON object such as {"id":"<uuid>"}')


def checkOffsets(data: bytes) -> None:
    """Refuse an ``offsets/N`` file of Spark's offset log that Spark cannot read back."""
    metadata, *offsets = _linesAfterVersion(data)
    if metadata.strip() and not isinstance(_jsonLine(metadata, "the batch's metadata", 2), dict):
        raise BrokenFile("line 2 is not the batch's metadata, a JSON object")
    if not offsets:
        raise BrokenFile("it ends before the sources' offsets")
    for number, line in enumerate(offsets, 3):
        if line.strip() != "-":
            _jsonLine(line, "a source's offset", number)


def checkCommit(data: bytes) -> None:
    """Refuse a ``commits/N`` file of Spark's commit log that Spark cannot read back."""
    lines = _linesAfterVersion(data, optional=True)
    if not lines:
        return  # Spark takes a commit without metadata as {}
    metadata = _jsonLine(lines[0], "the commit's metadata", 2)
    if not isinstance(metadata, dict) or type(metadata.get("nextBatchWatermarkMs", 0)) is not int:
        raise BrokenFile('line 2 is not the commit\'s metadata, a JSON object such as {"nextBatchWatermarkMs":0}')


def checkSourceLog(data: bytes) -> None:
    """Refuse a ``sources/S/N`` file of a source's own log that Spark cannot read back."""
    for number, line in enumerate(_linesAfterVersion(data, optional=True), 2):
        entry = _jsonLine(line, "an entry", number)
        if not (_isFileEntry(entry) or type(entry) is int):
            raise BrokenFile(
                f"line {number} is not an entry of a source's log: a file read "
                '({"path":...,"timestamp":...,"batchId":...}) or a number'
            )


def batchOf(name: str) -> int:
    """Return the batch of the metadata log's file ``name`` (see ``LOG_FILE``)."""
    return int(LOG_FILE.fullmatch(name).group(1))


def _isFileEntry(entry: object) -> bool:
    return (
        isinstance(entry, dict) and isinstance(entry.get("path"), str)
        and all(type(entry.get(field)) is int for field in ("timestamp", "batchId"))
    )


def _text(data: bytes) -> str:
    """Return ``data`` as text; empty or not UTF-8 is a BrokenFile."""
    if not data:
        raise BrokenFile("it is empty")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BrokenFile(f"it is not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start}") from None


def _linesAfterVersion(data: bytes, optional: bool = False) -> list[str]:
    """Return the lines of a metadata log's file after its version line (``v1``); none after it
    is a BrokenFile unless ``optional``."""
    first, *lines = _text(data).splitlines() or [""]
    if not re.fullmatch(r"v[1-9][0-9]*", first.strip()):
        raise BrokenFile(f"its first line {first[:40]!r} is not a version such as 'v1'")
    if not lines and not optional:
        raise BrokenFile("it ends after its version line")
    return lines


def _jsonLine(line: str, what: str, number: int = 1) -> object:
    """Return line ``number`` (``what`` it holds) as JSON; one that is not is a BrokenFile."""
    try:
        return json.loads(line)
    except ValueError as error:
        raise BrokenFile(f"line {number}, {what}, is not JSON ({error}): {line[:60]!r}") from None
