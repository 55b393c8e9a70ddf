"""Stream sources: Spark Structured Streaming reads them; each micro-batch's rows become the
source's items on the workers. Every source's rows share one shape (``source``, ``text``,
``eventTime``, ``sequence``), so one query reads all of a job's stream sources at once."""

import abc
import base64
import itertools
import logging
import os
import pickle
import shutil
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import ClassVar

import attrs

from sparkjet.coredag.api.capabilities import Capabilities
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import InputError, shorten
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.simple_event import SimpleEvent
from sparkjet.coredag.processors.full_disk import removedOnFailure
from sparkjet.coredag.processors.sinks import workerLogger
from sparkjet.coredag.processors.sources import BatchConvertingProcessor, SparkRowsP, lineBatchesStartingIn, refuseUnreadableCharset

FINITE_STREAM_SECONDS_APART = 2
"""How far apart the modification times of a finite stream's files are: Spark's file stream
source takes files in that order, one per micro-batch."""


def sqlString(text: str) -> str:
    """Return ``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@attrs.frozen
class StreamSourceP(StandardProcessorSupplier):
    """A stream source: ``streamingRows`` starts Spark's reading of it, ``microBatchRows`` picks
    its rows out of a micro-batch, and its processors turn them into items (into JetEvents with
    the source's own time where the stage chose ``nativeTimestamps``)."""

    sourceId: str = attrs.field(kw_only=True)
    nativeTimestamps: bool = attrs.field(default=False, kw_only=True)

    readsThroughSpark = True
    readsStream = True
    finite: ClassVar[bool] = False
    """A finite stream ends once its items are read; the job then completes."""

    def capabilities(self) -> Capabilities:
        """Return a standard source's capabilities, finite where its stream ends."""
        return attrs.evolve(super().capabilities(), finite=self.finite)

    @abc.abstractmethod
    def streamingRows(self, spark, workDirectory: str):
        """Return the streaming DataFrame of the source's rows; ``workDirectory`` is the
        source's own, removed when the job ends."""

    def feeder(self, jobName: str, workDirectory: str):
        """Return what the driver runs to feed the source while the job runs (None: Spark reads it alone)."""
        return None

    def cannotReplay(self) -> str | None:
        """Return why the source cannot give its items again after a restart (naming it and what
        to use instead), None where it can: a job with a processing guarantee refuses it."""
        return None

    def copyWorkDirectory(self, workDirectory: str, target: str) -> None:
        """Copy the source's work directory to the new directory ``target`` (an exported
        snapshot): as it is, for no one writes or removes its files while the job runs."""
        shutil.copytree(workDirectory, target)

    def lineOf(self, itemRepr: str) -> str | None:
        """Return where the source read the line a failed stage shows as ``itemRepr`` in the last
        micro-batch (None where it cannot tell)."""
        return None

    @abc.abstractmethod
    def rowConverter(self) -> Callable[[list], list]:
        """Return the function turning a batch of ``(text, eventTime, sequence)`` rows into items."""

    def streamRows(self, frame, text: str = "NULL", eventTime: str = "NULL", sequence: str = "NULL"):
        """Return ``frame``'s rows in the shape every stream source shares, as SQL expressions say."""
        return frame.selectExpr(
            f"{sqlString(self.sourceId)} AS source", f"CAST({text} AS STRING) AS text",
            f"CAST({eventTime} AS BIGINT) AS eventTime", f"CAST({sequence} AS BIGINT) AS sequence",
        )

    def microBatchRows(self, rows):
        """Return this source's rows of a micro-batch's ``rows``."""
        return rows.where(rows.source == self.sourceId).select("text", "eventTime", "sequence")

    def sparkRowsSupplier(self) -> SparkRowsP:
        """Return the supplier turning the rows into items."""
        return SparkRowsP(self.rowConverter())

    def batchFunction(self, context) -> BatchFunction:
        """Return the fast path of ``sparkRowsSupplier()``."""
        return self.sparkRowsSupplier().batchFunction(context)

    def __call__(self) -> BatchConvertingProcessor:
        return self.sparkRowsSupplier()()


@attrs.frozen
class TextLines:
    """The text of each row: a line."""

    def __call__(self, rows: list) -> list[str]:
        return [row[0] for row in rows]


@attrs.frozen
class GeneratedEvents:
    """``generatorFn(timestamp, sequence)`` of each row (a JetEvent at that time, if ``timestamped``)."""

    generatorFn: Callable[[int, int], object]
    timestamped: bool

    def __call__(self, rows: list) -> list:
        items = ((eventTime, self.generatorFn(eventTime, sequence)) for _, eventTime, sequence in rows)
        return [JetEvent(eventTime, item) if self.timestamped else item for eventTime, item in items]


@attrs.frozen
class PickledEvents:
    """The ``(timestamp, item)`` pickled in each row's text: the item (a JetEvent, if ``timestamped``)."""

    timestamped: bool

    def __call__(self, rows: list) -> list:
        events = (pickle.loads(base64.b64decode(row[0])) for row in rows)
        return [JetEvent(timestamp, item) if self.timestamped else item for timestamp, item in events]


WATCHER = "Sources.fileWatcher"

DEFAULT_MAX_LINE_BYTES = 64 << 20
"""The longest line a watched file may have, in bytes (64 MiB): a line is one item, held whole
by a Python worker and, where it crosses a shuffle or reaches the driver, by Spark's JVM."""

LISTED_FILES_SCHEMA = "path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY"
"""Spark's binaryFile schema: the watcher's query lists files through it, reading no content."""

logger = logging.getLogger("sparkjet")


@attrs.frozen
class ListedFile:
    """A file Spark's file stream source gave a micro-batch: its URL, and its size and
    modification time (milliseconds) when Spark listed it."""

    url: str
    size: int
    modified: int

    @property
    def path(self) -> str:
        """Return the file's local path."""
        return localPath(self.url)


class WatchedFiles:
    """The driver's record of a watched directory's files: the size and modification time of
    those the last micro-batch read, and those already warned about (one warning per file)."""

    def __init__(self) -> None:
        self.lastRead: dict[str, tuple[int, int]] = {}
        self.warned: set[str] = set()

    def warnOnce(self, path: str, message: str) -> None:
        """Log ``message`` about ``path`` as a warning, unless one was logged about it already."""
        if path not in self.warned:
            self.warned.add(path)
            logger.warning("%s", message)


@attrs.frozen
class FileWatcherP(StreamSourceP):
    """The lines of the files that appear in ``directory`` (names matching ``glob``), each file
    read whole, once, those present at the start included: Spark's file stream source lists
    them (as binary files, their content unread), the driver checks each micro-batch's files and
    the workers read their lines as ``Sources.files`` does (``charset``, errors naming the file
    and line). A file deleted before it is read is skipped with a warning, or, unless
    ``ignoreMissingFiles``, fails the job; a line longer than ``maxLineBytes`` fails it."""

    directory: str
    glob: str = "*"
    charset: str = attrs.field(default="utf-8", validator=refuseUnreadableCharset)
    ignoreMissingFiles: bool = attrs.field(default=True, kw_only=True)
    maxLineBytes: int = attrs.field(default=DEFAULT_MAX_LINE_BYTES, kw_only=True)
    record: WatchedFiles = attrs.field(factory=WatchedFiles, init=False, eq=False, repr=False)
    """The driver's record of the files read, kept from one micro-batch to the next."""

    origin = WATCHER

    def preflight(self) -> "FileWatcherP":
        """Check that the watched directory exists."""
        if not os.path.isdir(self.directory):
            raise InputError(f"{WATCHER}: the directory '{self.directory}' does not exist")
        return self

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of the new files: path, size and modification time as listed."""
        files = (
            spark.readStream.format("binaryFile").schema(LISTED_FILES_SCHEMA)
            .option("pathGlobFilter", self.glob).option("ignoreMissingFiles", self.ignoreMissingFiles)
            .load(self.directory)
        )
        return self.streamRows(
            files, text="_metadata.file_path", eventTime="_metadata.file_size",
            sequence="unix_millis(_metadata.file_modification_time)",
        )

    def microBatchRows(self, rows):
        """Return the micro-batch's files still there, as ``(url, size, modified)`` rows for the
        workers to read, in the order they appeared (modified, then name): the driver lists them,
        checks them and warns of those being written. Spark's file source gives them largest
        first, and a later file read before an earlier one makes the earlier one's events late.
        The rows are the driver's own list, so no Spark job sorts them again."""
        files = super().microBatchRows(rows)
        kept = self.checkedFiles(self.listedFiles(files))
        return files.sparkSession.createDataFrame([(file.url, file.size, file.modified) for file in kept], files.schema)

    def listedFiles(self, files) -> list[ListedFile]:
        """Return the ``files`` Spark's source gave this micro-batch, oldest first; a file deleted
        since it was listed is an InputError naming it unless ``ignoreMissingFiles`` (then Spark
        skips it)."""
        try:
            listed = [ListedFile(*row) for row in files.collect()]
        except Exception as error:
            missing = missingFileOf(error)
            if missing is None:
                raise
            raise missingFileError(self.directory, localPath(missing)) from None
        return sorted(listed, key=lambda file: (file.modified, file.url))

    def checkedFiles(self, listed: list[ListedFile]) -> list[ListedFile]:
        """Return the ``listed`` files still there, noting them as read; warn of the files the
        last micro-batch read that changed since, and of a listed file read while being written;
        skip (or, unless ``ignoreMissingFiles``, fail on) a listed file deleted since."""
        self.warnOfChangesSinceRead()
        present = []
        for file in listed:
            found = fileStatus(file.path)
            if found is None:
                self.skipMissing(file.path)
                continue
            self.warnIfBeingWritten(file, *found)
            self.record.lastRead[file.path] = found
            present.append(file)
        return present

    def skipMissing(self, path: str) -> None:
        """Warn that ``path``, deleted before it was read, is skipped; unless
        ``ignoreMissingFiles``, raise the InputError naming it instead."""
        if not self.ignoreMissingFiles:
            raise missingFileError(self.directory, path)
        self.record.warnOnce(path, skippedFileWarning(self.directory, path))

    def warnIfBeingWritten(self, file: ListedFile, size: int, modified: int) -> None:
        """Warn if ``file``, now of ``size`` bytes and ``modified`` then, changed since Spark
        listed it or does not end with a line end: it is being written as it is read."""
        if (size, modified) != (file.size, file.modified):
            self.record.warnOnce(file.path, self.writtenWhileReadWarning(file.path, file.size, size))
        elif size and not endsWithLineEnd(file.path, size):
            self.record.warnOnce(
                file.path,
                f"{WATCHER}: '{file.path}' does not end with a line end: it may have been read while still "
                f"being written (its last line cut short, what followed never read); {self.moveInWhole()}",
            )

    def warnOfChangesSinceRead(self) -> None:
        """Warn of each file the last micro-batch read whose size or modification time changed
        since (Spark's file stream source reads a file once: what was added to it is lost)."""
        for path, (size, modified) in self.record.lastRead.items():
            found = fileStatus(path)
            if found is not None and found != (size, modified):
                self.record.warnOnce(path, self.writtenWhileReadWarning(path, size, found[0], after=True))
        self.record.lastRead.clear()

    def writtenWhileReadWarning(self, path: str, before: int, now: int, after: bool = False) -> str:
        """Return the warning of a file that changed while or after it was read."""
        when = "after it was read" if after else "after Spark listed it, before it was read"
        return (
            f"{WATCHER}: '{path}' changed {when} ({before:,} bytes then, {now:,} now): it was still being "
            f"written, and what was written after {'it was read' if after else 'that'} is never read, as "
            f"Spark's file stream source reads each file once; {self.moveInWhole()}"
        )

    def moveInWhole(self) -> str:
        """Return the advice on putting files into the watched directory."""
        return f"write each file elsewhere, then move it into '{self.directory}' whole (a rename)"

    def lineOf(self, itemRepr: str) -> str | None:
        """Return where the line a failed stage shows as ``itemRepr`` (``shorten(line)``) is
        among the files the last micro-batch read, as ``line 3 of '/in/a.txt'`` (the first such
        line), None if none is: for the error of a timestamp function, say, to name its file."""
        for path, (size, _) in self.record.lastRead.items():
            try:
                lines = itertools.chain.from_iterable(lineBatchesStartingIn(path, 0, size, self.charset, WATCHER))
                number = next((number for number, line in enumerate(lines, 1) if shorten(line) == itemRepr), None)
            except (OSError, InputError):
                continue
            if number is not None:
                return f"line {number} of '{path}'"
        return None

    def rowConverter(self) -> "WatchedFileLines":
        """Return the reading of the lines of the files in ``(url, size, modified)`` rows."""
        return WatchedFileLines(self.directory, self.charset, self.maxLineBytes, self.ignoreMissingFiles)

    def sparkRowsSupplier(self) -> "ReadWatchedFilesP":
        """Return the supplier reading the micro-batch's files, a chunk of lines at a time."""
        return ReadWatchedFilesP(self.rowConverter())


@attrs.frozen
class WatchedFileLines:
    """Reads, on a worker, the lines of watched files given as ``(url, size, modified)`` rows:
    those starting in the file's first ``size`` bytes (as Spark listed it), as ``Sources.files``
    reads them; a file deleted since is skipped with a warning, or fails the job."""

    directory: str
    charset: str
    maxLineBytes: int
    ignoreMissingFiles: bool

    def batches(self, rows: list) -> Iterator[list[str]]:
        """Yield, in lists, the lines of the files of ``rows``, one file after the other."""
        for url, size, _ in rows:
            path = localPath(url)
            try:
                yield from lineBatchesStartingIn(path, 0, size, self.charset, WATCHER, self.maxLineBytes)
            except FileNotFoundError:
                if not self.ignoreMissingFiles:
                    raise missingFileError(self.directory, path) from None
                workerLogger(logging.getLogger("sparkjet.fileWatcher")).warning(
                    "%s", skippedFileWarning(self.directory, path)
                )

    def __call__(self, rows: list) -> list[str]:
        return list(itertools.chain.from_iterable(self.batches(rows)))


@attrs.frozen
class ReadWatchedFilesP(SparkRowsP):
    """Turns a micro-batch's ``(url, size, modified)`` rows into the files' lines; the fast path yields
    them a chunk at a time, so a large file is never held whole."""

    convertBatch: WatchedFileLines

    def batchFunction(self, context) -> BatchFunction:
        """Return the reading of each input batch's files, chunk by chunk."""
        return lambda batches: (lines for rows in batches for lines in self.convertBatch.batches(rows))


def missingFileError(directory: str, path: str) -> InputError:
    """Return the error of a file deleted after it appeared in ``directory``, before it was read."""
    return InputError(
        f"{WATCHER}: '{path}' was deleted after it appeared in '{directory}' and before it was read; "
        f"keep files there until they are read, or skip such files: "
        f"{WATCHER}(directory, ignoreMissingFiles=True), the default"
    )


def skippedFileWarning(directory: str, path: str) -> str:
    """Return the warning of a file skipped: deleted after it appeared, before it was read."""
    return (
        f"{WATCHER}: skipped '{path}': it was deleted after it appeared in '{directory}' and before it "
        f"was read ({WATCHER}(directory, ignoreMissingFiles=False) makes this an error)"
    )


def localPath(url: str) -> str:
    """Return the local path of a ``file:`` URL as Spark gives it (its characters %-encoded)."""
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path)


def fileStatus(path: str) -> tuple[int, int] | None:
    """Return the size and modification time (milliseconds) of ``path``, None if it is gone."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns // 1_000_000


def endsWithLineEnd(path: str, size: int) -> bool:
    """Return whether byte ``size - 1`` of ``path`` ends a line (a file shortened since: no)."""
    try:
        with open(path, "rb") as file:
            file.seek(size - 1)
            return file.read(1) in (b"\n", b"\r")
    except FileNotFoundError:
        return True


def missingFileOf(error: Exception) -> str | None:
    """Return the URL of the file whose absence failed Spark's ``error``, if that failed it
    (Spark's FAILED_READ_FILE.FILE_NOT_EXIST, here or among its causes)."""
    cause = getattr(error, "java_exception", None)
    while cause is not None:
        if _errorCondition(cause) == "FAILED_READ_FILE.FILE_NOT_EXIST":
            return str(cause.getMessageParameters().get("path"))
        cause = cause.getCause()
    return None


def _errorCondition(javaError) -> str | None:
    """Return the condition of a Java exception that is one of Spark's errors (else None)."""
    try:
        return javaError.getCondition()
    except Exception:
        return None


@attrs.frozen
class SocketP(StreamSourceP):
    """The lines a server sends on a TCP socket, by Spark's socket source."""

    host: str
    port: int

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of the socket's lines."""
        lines = spark.readStream.format("socket").option("host", self.host).option("port", self.port).load()
        return self.streamRows(lines, text="value")

    def cannotReplay(self) -> str:
        """Return why the socket's lines cannot be read again: Spark keeps them in memory only."""
        return (
            f"Sources.socket('{self.host}', {self.port}) cannot give its lines again after a restart "
            "(Spark's socket source keeps them in the driver's memory only, so a restarted job fails "
            "on offsets it no longer has): run the job without a processing guarantee "
            "(ProcessingGuarantee.NONE: started again, it reads what the server sends from then on), "
            "or have the server write its lines to files, each written elsewhere and renamed into a "
            "directory that Sources.fileWatcher reads, which a restarted job reads again"
        )

    def rowConverter(self) -> TextLines:
        """Return the lines as they are."""
        return TextLines()


@attrs.frozen
class ItemStreamP(StreamSourceP):
    """``itemsPerSecond`` events a second, made by ``generatorFn(timestamp, sequence)``, by
    Spark's rate source (its rows' time is the events' native time)."""

    itemsPerSecond: int
    generatorFn: Callable[[int, int], object] = SimpleEvent
    initialDelayMillis: int = 0
    """How long after the stream starts its first event comes (Jet's ``longStream``)."""

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of numbered, timed rows."""
        rate = spark.readStream.format("rate").option("rowsPerSecond", self.itemsPerSecond)
        return self.delayedRows(rate.option("numPartitions", 1).load())

    def delayedRows(self, rateRows):
        """Return the rate source's rows timed ``initialDelayMillis`` or more after its start,
        numbered from 0: its row ``n`` is timed ``n / itemsPerSecond`` seconds after its start,
        so the rows before are skipped, and no event is timed in the future."""
        skipped = -(-self.initialDelayMillis * self.itemsPerSecond // 1000)
        kept = rateRows.where(f"value >= {skipped}")
        return self.streamRows(kept, eventTime="unix_millis(timestamp)", sequence=f"value - {skipped}")

    def rowConverter(self) -> GeneratedEvents:
        """Return the generated items."""
        return GeneratedEvents(self.generatorFn, self.nativeTimestamps)


@attrs.frozen
class FiniteStreamP(StreamSourceP):
    """The given ``(timestamp, item)`` events, ``itemsPerBatch`` per micro-batch, then the end of
    the stream: written to files in the source's work directory, read one file per micro-batch
    (or several, where a restarted query takes the file a killed run had listed with the next),
    in order."""

    events: tuple[tuple[int, object], ...]
    itemsPerBatch: int

    finite = True

    def streamingRows(self, spark, workDirectory: str):
        """Write the events, a file per micro-batch (once: a restarted job reads the same files
        again), each line its event's number and the pickled event, each file aside and then
        renamed (a full disk leaves none half written); return Spark's stream of those files."""
        os.makedirs(workDirectory, exist_ok=True)
        start = int(time.time())
        for number, first in enumerate(range(0, len(self.events), self.itemsPerBatch)):
            path = os.path.join(workDirectory, f"batch-{number:06d}.txt")
            if os.path.exists(path):
                continue
            lines = "".join(
                f"{sequence} {base64.b64encode(pickle.dumps(event)).decode('ascii')}\n"
                for sequence, event in enumerate(self.events[first : first + self.itemsPerBatch], first)
            )
            aside = os.path.join(workDirectory, f".batch-{number:06d}.txt.writing")  # hidden: Spark skips it
            with removedOnFailure("Feeding a finite stream source", path, len(lines), aside):
                with open(aside, "w", encoding="ascii") as file:
                    file.write(lines)
                modified = start + number * FINITE_STREAM_SECONDS_APART
                os.utime(aside, (modified, modified))
                os.rename(aside, path)
        return self.eventRows(spark.readStream.option("maxFilesPerTrigger", 1).text(workDirectory))

    def eventRows(self, lines):
        """Return the rows of the files' ``lines``: the pickled event, its number the sequence."""
        return self.streamRows(lines, text="substring_index(value, ' ', -1)", sequence="substring_index(value, ' ', 1)")

    def microBatchRows(self, rows):
        """Return the micro-batch's events in their order: Spark gives several files' rows in
        an order of its own, and a later event before an earlier one makes that one late."""
        return super().microBatchRows(rows).orderBy("sequence")

    def rowConverter(self) -> PickledEvents:
        """Return the items of the pickled events."""
        return PickledEvents(self.nativeTimestamps)
