"""Source processors: lines of files read by byte range, and items given by the user."""

import fnmatch
import itertools
import os
from collections.abc import Iterator

import attrs

from coredag.errors import DagError, InputError
from coredag.processor import AbstractProcessor, ProcessorContext
from coredag.standard import BatchFunction, StandardProcessorSupplier, batched


def listFiles(directory: str, glob: str) -> tuple[tuple[str, int], ...]:
    """Return ``(path, size)`` of the files in ``directory`` matching ``glob``, sorted by name."""
    if not os.path.isdir(directory):
        raise DagError(f"Sources.files: the directory '{directory}' does not exist")
    names = sorted(name for name in os.listdir(directory) if fnmatch.fnmatchcase(name, glob))
    paths = [os.path.join(directory, name) for name in names]
    files = tuple((path, os.path.getsize(path)) for path in paths if os.path.isfile(path))
    if not files:
        raise DagError(f"Sources.files: no file in '{directory}' matches the glob '{glob}'")
    for path, _ in files:
        if not os.access(path, os.R_OK):
            raise DagError(f"Sources.files: the file '{path}' is not readable")
    return files


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


def lineBatchesStartingIn(path: str, start: int, end: int, charset: str) -> Iterator[list[str]]:
    """Yield, in lists, the lines whose first byte lies in ``[start, end)``, without terminators.

    The range is read in chunks cut at line ends, so each chunk decodes on its own.
    """
    with open(path, "rb") as file:
        if start > 0:
            file.seek(start - 1)
            file.readline()
        position = remainderStart = file.tell()
        remainder = b""
        while position < end:
            chunk = file.read(min(READ_CHUNK, end - position))
            if not chunk:
                break
            position += len(chunk)
            data = remainder + chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                yield _decodeLines(path, remainderStart, data[:cut], charset)
                remainder, remainderStart = data[cut:], remainderStart + cut
            else:
                remainder = data
        if remainder:
            line = remainder + file.readline()
            yield _decodeLines(path, remainderStart, line if line.endswith(b"\n") else line + b"\n", charset)


READ_CHUNK = 1 << 20


def _decodeLines(path: str, offset: int, data: bytes, charset: str) -> list[str]:
    """Decode ``data``, whole lines ending in a newline that start at byte ``offset``."""
    try:
        text = data.decode(charset)
    except UnicodeDecodeError as cause:
        raise InputError(
            f"Sources.files: '{path}' line {_lineNumber(path, offset + cause.start)} is not "
            f"valid {charset}: {cause.reason} at byte {offset + cause.start} of the file"
        ) from cause
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    lines.pop()
    return lines


def _lineNumber(path: str, position: int) -> int:
    with open(path, "rb") as file:
        return file.read(position).count(b"\n") + 1


@attrs.frozen
class ReadFilesP(StandardProcessorSupplier):
    """Reads the lines of the files in a directory; each processor reads one byte range."""

    directory: str
    glob: str = "*"
    charset: str = "utf-8"
    files: tuple[tuple[str, int], ...] | None = None

    def preflight(self) -> "ReadFilesP":
        """Check the directory and fix the list of files the job reads."""
        return attrs.evolve(self, files=listFiles(self.directory, self.glob))

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function yielding the lines of this processor's byte range, in lists."""
        return lambda _: self.lineBatches(context)

    def lineBatches(self, context: ProcessorContext) -> Iterator[list[str]]:
        """Yield, in lists, the lines of processor ``context.globalProcessorIndex``'s range."""
        files = self.files if self.files is not None else listFiles(self.directory, self.glob)
        for path, start, end in byteRanges(
            files, context.globalProcessorIndex, context.totalParallelism
        ):
            yield from lineBatchesStartingIn(path, start, end, self.charset)

    def lines(self, context: ProcessorContext) -> Iterator[str]:
        """Yield the lines of processor ``context.globalProcessorIndex``'s byte range."""
        return itertools.chain.from_iterable(self.lineBatches(context))

    def __call__(self) -> "TraverserSourceProcessor":
        return TraverserSourceProcessor(self.lines)


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

    def __call__(self) -> "TraverserSourceProcessor":
        return TraverserSourceProcessor(self.share)


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
