"""Stream sources: unbounded (or, for tests, finite) sources a stream job reads, as Jet names them."""

import os
from collections.abc import Callable, Iterable

import attrs

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.model.event_time_policy import DEFAULT_IDLE_TIMEOUT
from sparkjet.coredag.model.simple_event import SimpleEvent
from sparkjet.coredag.processors.stream_sources import DEFAULT_MAX_LINE_BYTES
from sparkjet.pipeline.batch_sources import inputPaths, itemsSource, readableCharset
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction, checkPicklable


@attrs.frozen
class StreamSource:
    """An unbounded source of items; ``supportsNativeTimestamps`` if its items come with a time."""

    name: str
    supportsNativeTimestamps: bool = attrs.field(default=False, kw_only=True)
    partitionIdleTimeout: int = attrs.field(default=DEFAULT_IDLE_TIMEOUT, kw_only=True)

    def setPartitionIdleTimeout(self, timeoutMillis: int) -> "StreamSource":
        """Return this source with partitions idle after ``timeoutMillis`` without events (0:
        never); an idle partition holds no watermark back (Jet's default: 60 s)."""
        if not isinstance(timeoutMillis, int) or timeoutMillis < 0:
            raise PipelineError(
                f"setPartitionIdleTimeout (called at {SourceLocation.ofUserCall()}): the timeout must be "
                f"0 (never idle) or more milliseconds, got {timeoutMillis!r}"
            )
        return attrs.evolve(self, partitionIdleTimeout=timeoutMillis)


@attrs.frozen
class FileWatcherSource(StreamSource):
    """The lines of the files that appear in a directory: decoded from ``charset``, a file
    deleted before it is read skipped (``ignoreMissingFiles``) or an error, no line longer than
    ``maxLineBytes``."""

    directory: str
    glob: str
    charset: str = "utf-8"
    ignoreMissingFiles: bool = True
    maxLineBytes: int = DEFAULT_MAX_LINE_BYTES


@attrs.frozen
class SocketSource(StreamSource):
    """The lines a server sends on a TCP socket."""

    host: str
    port: int


@attrs.frozen
class ItemStreamSource(StreamSource):
    """Generated events at a steady rate, with native timestamps, the first
    ``initialDelayMillis`` after the stream starts."""

    itemsPerSecond: int
    generatorFn: Callable[[int, int], object]
    initialDelayMillis: int = 0


@attrs.frozen
class FiniteStreamSource(StreamSource):
    """Given ``(timestamp, item)`` events, a micro-batch of ``itemsPerBatch`` at a time; then the stream ends."""

    events: tuple[tuple[int, object], ...]
    itemsPerBatch: int


def sequenceNumber(timestamp: int, sequence: int) -> int:
    """The item ``longStream`` makes of an event: its sequence number."""
    return sequence


def fileWatcher(
    directory: str, glob: str = "*", charset: str = "utf-8", *,
    ignoreMissingFiles: bool = True, maxLineBytes: int = DEFAULT_MAX_LINE_BYTES,
) -> FileWatcherSource:
    """Return the source of the lines of files put into ``directory`` (Jet's ``Sources.fileWatcher``):
    a file deleted before it is read is skipped with a warning, as Jet's watcher skips it, unless
    not ``ignoreMissingFiles`` (Spark's option): then it fails the job; a line longer than
    ``maxLineBytes`` fails the job too."""
    where = f"Sources.fileWatcher (called at {SourceLocation.ofUserCall()})"
    if not isinstance(ignoreMissingFiles, bool):
        raise PipelineError(f"{where}: ignoreMissingFiles must be True or False, got {ignoreMissingFiles!r}")
    if not isinstance(maxLineBytes, int) or isinstance(maxLineBytes, bool) or maxLineBytes <= 0:
        raise PipelineError(f"{where}: maxLineBytes must be a positive number of bytes, got {maxLineBytes!r}")
    directory, glob = inputPaths(directory, glob, "Sources.fileWatcher")
    name = f"fileWatcherSource({os.path.join(directory, glob)})"
    charset = readableCharset(charset, "Sources.fileWatcher")
    return FileWatcherSource(name, directory, glob, charset, ignoreMissingFiles, maxLineBytes)


def socket(host: str, port: int) -> SocketSource:
    """Return the source of the lines a server at ``host:port`` sends (Jet's ``Sources.socket``)."""
    if not isinstance(port, int) or not 0 < port < 65536:
        raise PipelineError(f"Sources.socket (called at {SourceLocation.ofUserCall()}): no TCP port {port!r}")
    return SocketSource(f"socketSource({host}:{port})", host, port)


class TestSources:
    """Sources for tests and demos (Jet's ``TestSources``)."""

    __test__ = False  # not a pytest test class

    @staticmethod
    def items(items: Iterable):
        """Emit the given items, a batch source (as ``Sources.items``)."""
        return itemsSource(items)

    @staticmethod
    def itemStream(itemsPerSecond: int, generatorFn: Callable[[int, int], object] = SimpleEvent) -> ItemStreamSource:
        """Emit ``itemsPerSecond`` items a second, ``generatorFn(timestamp, sequence)`` each
        (by default a ``SimpleEvent``), with native timestamps: the time each was made."""
        if not isinstance(itemsPerSecond, int) or itemsPerSecond <= 0:
            raise PipelineError(
                f"TestSources.itemStream (called at {SourceLocation.ofUserCall()}): itemsPerSecond must be "
                f"a positive number, got {itemsPerSecond!r}"
            )
        checkFunction(generatorFn, "itemStream", "generatorFn")
        return ItemStreamSource("itemStream", itemsPerSecond, generatorFn, supportsNativeTimestamps=True)

    @staticmethod
    def longStream(eventsPerSecond: int, initialDelayMillis: int) -> ItemStreamSource:
        """Emit 0, 1, 2, ... at ``eventsPerSecond``, with native timestamps exactly ``1 /
        eventsPerSecond`` seconds apart, the first ``initialDelayMillis`` after the stream starts
        (Jet's ``longStream``; its processors are one, not one per member)."""
        where = f"TestSources.longStream (called at {SourceLocation.ofUserCall()})"
        if isinstance(eventsPerSecond, bool) or not isinstance(eventsPerSecond, int) or eventsPerSecond <= 0:
            raise PipelineError(f"{where}: eventsPerSecond must be a positive number, got {eventsPerSecond!r}")
        if isinstance(initialDelayMillis, bool) or not isinstance(initialDelayMillis, int) or initialDelayMillis < 0:
            raise PipelineError(
                f"{where}: initialDelayMillis must be 0 or more milliseconds, got {initialDelayMillis!r}"
            )
        return ItemStreamSource(
            "longStream", eventsPerSecond, sequenceNumber, initialDelayMillis, supportsNativeTimestamps=True
        )

    @staticmethod
    def finiteStream(events: Iterable[tuple[int, object]], itemsPerBatch: int = 1000) -> FiniteStreamSource:
        """Emit the given ``(timestamp, item)`` events in order, ``itemsPerBatch`` per micro-batch,
        with native timestamps; then the stream ends and the job completes, every window emitted."""
        where = f"TestSources.finiteStream (called at {SourceLocation.ofUserCall()})"
        pairs = tuple(events)
        for event in pairs:
            if not (isinstance(event, tuple) and len(event) == 2 and isinstance(event[0], int)):
                raise PipelineError(f"{where}: each event must be a (timestamp, item) pair, got {event!r}")
        if not isinstance(itemsPerBatch, int) or itemsPerBatch <= 0:
            raise PipelineError(f"{where}: itemsPerBatch must be a positive number, got {itemsPerBatch!r}")
        checkPicklable(pairs, "finiteStream", "events")
        return FiniteStreamSource("finiteStream", pairs, itemsPerBatch, supportsNativeTimestamps=True)
