"""Source processors: lines of files (as text or JSON) read by byte range in the worker or
by Spark's reader, rows of a Spark DataFrame, items given by the user (a batch source of the
user's functions is built_batch_source.py's)."""

import codecs
import fnmatch
import functools
import itertools
import json
import os
import pickle
import urllib.parse
from collections.abc import Callable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier, batched
from sparkjet.coredag.errors import InputError, shorten
from sparkjet.coredag.model.user_paths import isHadoopUrl


def listFiles(directory: str, glob: str, origin: str = "Sources.files") -> tuple[tuple[str, int], ...]:
    """Return ``(path, size)`` of the files in ``directory`` matching ``glob``, sorted by name,
    hidden files left out; none for a directory without visible files, as Jet's and Spark's
    readers read nothing there. A path is absolute, as the driver found it: a Python worker
    started in another working directory reads the same file. Errors start with ``origin``, the
    factory that made the source."""
    if not os.path.isdir(directory):
        raise InputError(f"{origin}: the directory '{directory}' does not exist")
    entries = os.listdir(directory)
    visible = [name for name in entries if not isHidden(name)]
    if not visible:
        return ()
    names = sorted(name for name in visible if fnmatch.fnmatchcase(name, glob))
    paths = [os.path.join(os.path.abspath(directory), name) for name in names]
    files = tuple((path, os.path.getsize(path)) for path in paths if os.path.isfile(path))
    if not files:
        note = _hiddenNote(glob, entries)
        raise InputError(f"{origin}: no file in '{directory}' matches the glob '{glob}'{note}")
    for path, _ in files:
        if not os.access(path, os.R_OK):
            raise InputError(f"{origin}: the file '{path}' is not readable")
    return files


def isHidden(name: str) -> bool:
    """Return whether a file is hidden from readers, as Hadoop's FileInputFormat hides it: its
    name starts with '.' or '_' (``_SUCCESS``, the ``.crc`` checksums of a written directory)."""
    return name.startswith((".", "_"))


def _hiddenNote(glob: str, names: list[str]) -> str:
    """Return why the hidden files among ``names`` that ``glob`` matches are not read, or nothing
    if it matches none."""
    hidden = sorted(name for name in names if isHidden(name) and fnmatch.fnmatchcase(name, glob))
    if not hidden:
        return ""
    shown = ", ".join(f"'{name}'" for name in hidden[:3]) + (", ..." if len(hidden) > 3 else "")
    return (
        f" (it matches only {shown}: names starting with '.' or '_' are hidden files, never read, "
        "as Spark's reader skips them)"
    )


def byteRanges(
    files: tuple[tuple[str, int], ...], index: int, count: int
) -> Iterator[tuple[str, int, int]]:
    """Yield ``(path, start, end)``: processor ``index`` of ``count``'s share of the files' bytes."""
    total = sum(size for _, size in files)
    low, high = total * index // count, total * (index + 1) // count
    offset = 0
    for path, size in files:
        start, end = max(low - offset, 0), min(high - offset, size)
        if start < end:
            yield path, start, end
        offset += size


def lineBatchesStartingIn(
    path: str, start: int, end: int, charset: str, origin: str = "Sources.files", maxLineBytes: int | None = None
) -> Iterator[list[str]]:
    """Yield, in lists, the lines whose first byte lies in ``[start, end)``, without terminators, as
    Spark's reader gives them; a line of more than ``maxLineBytes`` bytes, where given, is an
    InputError naming the file, the line and its size (docs/internals/core-dag-on-spark.md)."""
    with open(path, "rb") as file:
        try:
            for offset, data in _lineBytesStartingIn(file, start, end, maxLineBytes):
                if offset == 0 and data.startswith(UTF8_BOM):
                    offset, data = len(UTF8_BOM), data[len(UTF8_BOM) :]
                if maxLineBytes is not None and len(data) > maxLineBytes:
                    _checkLineLengths(offset, data, maxLineBytes)
                if data:
                    yield _decodeLines(path, offset, data, charset, origin)
        except _LongLine as long:
            raise _longLineError(path, long.offset, maxLineBytes, origin) from None


READ_CHUNK = 1 << 20

UTF8_BOM = b"\xef\xbb\xbf"


def _lineBytesStartingIn(
    file, start: int, end: int, maxLineBytes: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, bytes)``: whole lines, with their terminators, whose first byte lies in
    ``[start, end)``, in chunks; the last line of the file may have no terminator. A line
    gathered from more than ``maxLineBytes`` bytes of chunks without a line end raises _LongLine."""
    position = linesStart = 0 if start == 0 else _seekLineStart(file, start)
    pieces: list[bytes] = []
    gathered = 0
    while position < end:
        chunk = file.read(min(READ_CHUNK, end - position))
        if not chunk:
            break
        position += len(chunk)
        cut = _afterLastLineEnd(chunk)
        if not cut:
            pieces.append(chunk)
            gathered += len(chunk)
            if maxLineBytes is not None and gathered > maxLineBytes:
                raise _LongLine(linesStart)
            continue
        lines = b"".join((*pieces, chunk[:cut]))
        yield linesStart, lines
        pieces, linesStart, gathered = [chunk[cut:]], linesStart + len(lines), len(chunk) - cut
    rest = b"".join(pieces)
    if rest:
        atMost = None if maxLineBytes is None else maxLineBytes + 1 - len(rest)
        yield linesStart, rest if rest.endswith(b"\r") else rest + _readThroughLineEnd(file, atMost)


def _seekLineStart(file, start: int) -> int:
    """Seek ``file`` to the first line start at or after byte ``start`` (> 0) and return it: the
    byte after a ``\\n``, or after a ``\\r`` that no ``\\n`` follows."""
    file.seek(start - 1)
    ending = _readThroughLineEnd(file)
    position = start - 1 + len(ending)
    if ending.endswith(b"\r"):
        file.seek(position)
        if file.read(1) == b"\n":
            position += 1
    file.seek(position)
    return position


def _readThroughLineEnd(file, atMost: int | None = None) -> bytes:
    """Return the bytes from the file's position through its next line end, or to its end;
    or, where ``atMost`` is given, once that many are read without one, those read so far."""
    pieces, gathered = [], 0
    while chunk := file.read(READ_CHUNK):
        found = _firstLineEnd(chunk)
        if found >= 0:
            pieces.append(chunk[: found + 1])
            break
        pieces.append(chunk)
        gathered += len(chunk)
        if atMost is not None and gathered >= atMost:
            break
    return b"".join(pieces)


class _LongLine(Exception):
    """A line longer than allowed starts at byte ``offset`` of the file being read."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def _checkLineLengths(offset: int, data: bytes, maxLineBytes: int) -> None:
    """Raise _LongLine for the first of the lines ``data`` holds (starting at byte ``offset``)
    that is longer than ``maxLineBytes``, its terminator not counted."""
    for line in data.splitlines(keepends=True):
        if len(line.rstrip(b"\r\n")) > maxLineBytes:
            raise _LongLine(offset)
        offset += len(line)


def _longLineError(path: str, offset: int, maxLineBytes: int, origin: str) -> InputError:
    """Return the error of the line at byte ``offset`` of ``path``, longer than ``maxLineBytes``:
    its number and its size, counted to its end without holding it."""
    size = 0
    with open(path, "rb") as file:
        file.seek(offset)
        while chunk := file.read(READ_CHUNK):
            found = _firstLineEnd(chunk)
            size += len(chunk) if found < 0 else found
            if found >= 0:
                break
    return InputError(
        f"{origin}: '{path}' line {_lineNumber(path, offset)} is {size:,} bytes long, more than the "
        f"{maxLineBytes:,} bytes a line may have (a line is one item, held whole in memory); if such lines are "
        f"expected, raise the limit: {origin}(directory, maxLineBytes={size})"
    )


def _firstLineEnd(data: bytes) -> int:
    """Return the index of the first ``\\r`` or ``\\n`` in ``data``, or -1."""
    newline = data.find(b"\n")
    carriage = data.find(b"\r", 0, len(data) if newline < 0 else newline)
    return newline if carriage < 0 else carriage


def _afterLastLineEnd(chunk: bytes) -> int:
    """Return where the chunk's last whole line ends (0 if none): after its last ``\\n``, or
    after a later ``\\r`` that is not its last byte (a ``\\n`` may follow in the next chunk)."""
    newline = chunk.rfind(b"\n")
    carriage = chunk.rfind(b"\r", newline + 1, len(chunk) - 1)
    return max(newline, carriage) + 1


def _decodeLines(path: str, offset: int, data: bytes, charset: str, origin: str) -> list[str]:
    """Decode ``data``, whole lines starting at byte ``offset`` that end in a line end but for
    the last line of a file."""
    try:
        text = data.decode(charset)
    except UnicodeDecodeError as cause:
        raise InputError(
            f"{origin}: '{path}' line {_lineNumber(path, offset + cause.start)} is not "
            f"valid {charset}: {cause.reason} at byte {offset + cause.start} of the file; "
            f"{_charsetAdvice(origin)}"
        ) from cause
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    return lines


def _charsetAdvice(origin: str) -> str:
    """Return what to do about a file the charset does not decode."""
    return f"if the files are in another charset, name it: {origin}(directory, charset='latin-1')"


def _lineNumber(path: str, position: int) -> int:
    """Return the number of the line holding byte ``position``: one more than the line ends
    (``\\r\\n``, ``\\r`` or ``\\n``) before it."""
    with open(path, "rb") as file:
        before = file.read(position)
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1


def jsonBatchesStartingIn(path: str, start: int, end: int, charset: str) -> Iterator[list[dict]]:
    """Yield, in lists, the JSON objects of the non-blank lines whose first byte lies in
    ``[start, end)``; a line holding no JSON object raises an InputError naming its number."""
    linesBefore = 0
    for lines in lineBatchesStartingIn(path, start, end, charset, "Sources.json"):
        objects = []
        for index, line in enumerate(lines):
            if line and not line.isspace():
                try:
                    objects.append(jsonObject(line))
                except ValueError as cause:
                    number = _firstLineNumber(path, start) + linesBefore + index
                    raise InputError(f"Sources.json: '{path}' line {number} is {cause}") from cause
        linesBefore += len(lines)
        yield objects


def _firstLineNumber(path: str, start: int) -> int:
    """Return the number of the first line starting at or after byte ``start``."""
    return 1 if start == 0 else _lineNumber(path, start - 1) + 1


def jsonObject(line: str) -> dict:
    """Return the JSON object ``line`` holds; raise a ValueError saying why it holds none."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as cause:
        raise ValueError(
            f"not valid JSON ({cause.msg} at column {cause.colno}): {shorten(line)}"
        ) from cause
    if type(value) is not dict:
        raise ValueError(f"not a JSON object: {shorten(line)}")
    return value


def charsetProblem(charset: str) -> str | None:
    """Return why files in ``charset`` cannot be split into lines by byte, or None if they can."""
    if not isinstance(charset, str):
        return f"expected the charset's name as a str, got {type(charset).__name__}"
    return _codecProblem(charset)


_READABLE = "'utf-8', 'latin-1', 'cp1252', 'ascii' or 'iso-8859-15'"


@functools.cache
def _codecProblem(charset: str) -> str | None:
    """Return why ``charset``'s codec cannot decode a line cut out of a file by its bytes."""
    try:
        codec = codecs.lookup(charset)
    except LookupError:
        return (
            f"unknown charset '{charset}'; expected the name of a text encoding Python knows, "
            f"such as {_READABLE}"
        )
    reason = _lineEndsReason(charset)
    if reason is None:
        return None
    cannot = f"cannot read files in the charset '{charset}' line by line: {reason}"
    if codec.name == "utf-8-sig":
        return (
            f"{cannot}; name 'utf-8' instead: it skips a byte order mark at the start of a file, "
            "as Spark's reader does"
        )
    return (
        f"{cannot}; expected a charset in which '\\r' and '\\n' are the bytes b'\\r' and b'\\n' "
        f"whatever surrounds them, such as {_READABLE}; convert the files first, e.g. "
        f"iconv -f {charset} -t utf-8"
    )


def _lineEndsReason(charset: str) -> str | None:
    """Return why ``\\r`` and ``\\n`` are not single bytes of ``charset`` that mean the same
    whatever surrounds them, probed on every pair of ASCII bytes; None if they are."""
    try:
        newline, carriage = "\n".encode(charset), "\r".encode(charset)
    except LookupError:
        return "it is not a text encoding"
    except ValueError:
        return "it cannot encode a newline"
    if newline.startswith(UTF8_BOM):
        return "it would take a byte order mark off every chunk, not only off the start of a file"
    if newline != b"\n":
        return f"a newline there is {newline!r}, not the byte b'\\n'"
    if carriage != b"\r":
        return f"a carriage return there is {carriage!r}, not the byte b'\\r'"
    pairs = bytes(itertools.chain.from_iterable(itertools.product(range(128), repeat=2)))
    try:
        text = pairs.decode(charset)
    except ValueError:
        text = ""
    if (text.count("\n"), text.count("\r")) != (pairs.count(b"\n"), pairs.count(b"\r")):
        return "what its bytes mean depends on the bytes before them, so a line cannot decode alone"
    return None


def refuseUnreadableCharset(source, attribute: attrs.Attribute, charset: str) -> None:
    """Refuse a charset whose files cannot be split into lines by byte, naming the source."""
    problem = charsetProblem(charset)
    if problem is not None:
        msg = f"{source.origin}: {problem}"
        raise InputError(msg)


@attrs.frozen
class ReadFilesP(StandardProcessorSupplier):
    """Reads the lines of the files in a directory; each processor reads one byte range.

    A directory given as a URL (any scheme, ``file://`` included) is read by Spark's reader
    instead: ``hdfs://``, ``s3a://`` and the like are out of the Python worker's reach.
    """

    directory: str
    glob: str = "*"
    charset: str = attrs.field(default="utf-8", validator=refuseUnreadableCharset)
    files: tuple[tuple[str, int], ...] | None = None

    origin = "Sources.files"

    @property
    def readsThroughSpark(self) -> bool:
        """Whether Spark's reader reads the files: the directory is a URL."""
        return isHadoopUrl(self.directory)

    def inputBytes(self) -> int | None:
        """Return the size of the files, once preflight fixed them (unknown for URLs)."""
        return None if self.files is None else sum(size for _, size in self.files)

    def preflight(self) -> "ReadFilesP":
        """Check a local directory and fix the list of files the job reads (Spark checks URLs)."""
        if self.readsThroughSpark:
            return self
        return attrs.evolve(self, files=listFiles(self.directory, self.glob, self.origin))

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function yielding the items of this processor's byte range, in lists."""
        return lambda _: self.itemBatches(context)

    def itemBatches(self, context: ProcessorContext) -> Iterator[list]:
        """Yield, in lists, the items of processor ``context.globalProcessorIndex``'s range."""
        files = self.files
        if files is None:
            files = listFiles(self.directory, self.glob, self.origin)
        for path, start, end in byteRanges(
            files, context.globalProcessorIndex, context.totalParallelism
        ):
            yield from self.rangeBatches(path, start, end)

    def rangeBatches(self, path: str, start: int, end: int) -> Iterator[list[str]]:
        """Yield, in lists, the items of the lines starting in a byte range of one file."""
        return lineBatchesStartingIn(path, start, end, self.charset, self.origin)

    def items(self, context: ProcessorContext) -> Iterator:
        """Yield the items of processor ``context.globalProcessorIndex``'s byte range."""
        return itertools.chain.from_iterable(self.itemBatches(context))

    def sparkInput(self, spark):
        """Return Spark's reading of the files: rows of the line's bytes and the file's URL."""
        pattern = f"{self.directory.rstrip('/')}/{self.glob}"
        try:
            lines = spark.read.text(pattern)
        except Exception as error:
            if "PATH_NOT_FOUND" not in str(error):
                raise
            raise InputError(f"{self.origin}: no file matches '{pattern}' ({error})") from None
        return lines.selectExpr("cast(value as binary) as line", "_metadata.file_path as path")

    def sparkRowsSupplier(self) -> "SparkRowsP":
        """Return the supplier decoding the rows of ``sparkInput`` into lines."""
        return SparkRowsP(DecodeLines(self.charset, self.origin))

    def __call__(self) -> "TraverserSourceProcessor":
        return TraverserSourceProcessor(self.items)


@attrs.frozen
class ReadJsonP(ReadFilesP):
    """Reads the files' non-blank lines as JSON objects (dicts), by byte range or through Spark."""

    origin = "Sources.json"

    def rangeBatches(self, path: str, start: int, end: int) -> Iterator[list[dict]]:
        """Yield, in lists, the JSON objects of the lines starting in a byte range of one file."""
        return jsonBatchesStartingIn(path, start, end, self.charset)

    def sparkRowsSupplier(self) -> "SparkRowsP":
        """Return the supplier decoding the rows of ``sparkInput`` into JSON objects."""
        return SparkRowsP(DecodeLines(self.charset, self.origin, parseJson=True))


@attrs.frozen
class DecodeLines:
    """Turns a batch of ``(line bytes, file URL)`` rows of Spark's reader into lines or JSON
    objects; Spark does not number lines, so an error names the file and quotes the line."""

    charset: str
    origin: str
    parseJson: bool = False

    def __call__(self, rows: list) -> list:
        items = []
        for line, url in rows:
            try:
                text = line.decode(self.charset)
            except UnicodeDecodeError as cause:
                raise InputError(
                    f"{self.origin}: a line of '{urllib.parse.unquote(url)}' is not valid "
                    f"{self.charset}: {cause.reason} at byte {cause.start} of the line: "
                    f"{shorten(bytes(line))}; {_charsetAdvice(self.origin)}"
                ) from cause
            if not self.parseJson:
                items.append(text)
            elif text and not text.isspace():
                try:
                    items.append(jsonObject(text))
                except ValueError as cause:
                    raise InputError(
                        f"{self.origin}: a line of '{urllib.parse.unquote(url)}' is {cause}"
                    ) from cause
        return items


@attrs.frozen
class DataFrameSourceP(StandardProcessorSupplier):
    """Emits the rows of a Spark DataFrame as dicts: processor i converts partition i of the
    DataFrame's RDD (coalesced or padded to the processors' number), no row goes to the driver."""

    dataFrame: object

    readsThroughSpark = True

    def sparkInput(self, spark):
        """Return the DataFrame."""
        return self.dataFrame

    def sparkRowsSupplier(self) -> "SparkRowsP":
        """Return the supplier turning rows into dicts; it holds no DataFrame."""
        return SparkRowsP(rowsAsDicts)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the fast path of ``sparkRowsSupplier()``: rows given as input become dicts."""
        return self.sparkRowsSupplier().batchFunction(context)

    def __call__(self) -> "BatchConvertingProcessor":
        return self.sparkRowsSupplier()()


def rowsAsDicts(rows: list) -> list[dict]:
    """Return each Spark Row as a dict, nested Rows included."""
    return [row.asDict(recursive=True) for row in rows]


@attrs.frozen
class SparkRowsP(StandardProcessorSupplier):
    """Turns the rows Spark read for a source into the source's items, a batch at a time."""

    convertBatch: Callable[[list], list]

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the conversion mapped over the input batches."""
        return functools.partial(map, self.convertBatch)

    def __call__(self) -> "BatchConvertingProcessor":
        return BatchConvertingProcessor(self.convertBatch)


@attrs.frozen
class ItemsP(StandardProcessorSupplier):
    """Emits the given items; processor i of n emits items i, i+n, i+2n, ..."""

    items: tuple

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function yielding this processor's share of the items, in lists."""
        return lambda _: batched(self.share(context))

    def share(self, context: ProcessorContext) -> Iterator:
        """Yield the items processor ``context.globalProcessorIndex`` emits."""
        return iter(self.items[context.globalProcessorIndex :: context.totalParallelism])

    def inputBytes(self) -> int:
        """Return the pickled size of the items."""
        return len(pickle.dumps(self.items, protocol=pickle.HIGHEST_PROTOCOL))

    def __call__(self) -> "TraverserSourceProcessor":
        return TraverserSourceProcessor(self.share)


class BatchConvertingProcessor(AbstractProcessor):
    """Emits what a batch conversion makes of each item of ordinal 0, alone in its batch."""

    def __init__(self, convertBatch: Callable[[list], list]) -> None:
        self._convertBatch = convertBatch

    def onInit(self, context: ProcessorContext) -> None:
        """Set up the emission of each item's conversion."""
        self._emitter = self.flatMapper(lambda item: self._convertBatch([item]))

    def tryProcess0(self, item) -> bool:
        """Emit what ``item`` converts to; False if the outbox refused."""
        return self._emitter.tryProcess(item)


class TraverserSourceProcessor(AbstractProcessor):
    """A source: emits, from ``complete()``, the items a function of the context yields."""

    def __init__(self, itemsFor) -> None:
        self._itemsFor = itemsFor
        self._traverser: Iterator | None = None

    def complete(self) -> bool:
        """Emit the source's items; False while the outbox refuses."""
        if self._traverser is None:
            self._traverser = self._itemsFor(self.context)
        return self.emitFromTraverser(self._traverser)
