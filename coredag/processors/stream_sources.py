"""Stream sources: Spark Structured Streaming reads them; each micro-batch's rows become the
source's items on the workers. Every source's rows share one shape (``source``, ``text``,
``eventTime``, ``sequence``), so one query reads all of a job's stream sources at once."""

import abc
import base64
import os
import pickle
import time
from collections.abc import Callable
from typing import ClassVar

import attrs

from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import InputError
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.simple_event import SimpleEvent
from sparkjet.coredag.processors.sources import SparkRowsP

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

    def __call__(self):
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


@attrs.frozen
class FileWatcherP(StreamSourceP):
    """The lines of the files that appear in ``directory`` (names matching ``glob``), by Spark's
    file stream source: whole files, each read once, those present at the start included."""

    directory: str
    glob: str = "*"

    def preflight(self) -> "FileWatcherP":
        """Check that the watched directory exists."""
        if not os.path.isdir(self.directory):
            raise InputError(f"Sources.fileWatcher: the directory '{self.directory}' does not exist")
        return self

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of the lines of new files."""
        lines = spark.readStream.option("pathGlobFilter", self.glob).text(self.directory)
        return self.streamRows(lines, text="value")

    def rowConverter(self) -> TextLines:
        """Return the lines as they are."""
        return TextLines()


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

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of numbered, timed rows."""
        rate = spark.readStream.format("rate").option("rowsPerSecond", self.itemsPerSecond)
        rows = rate.option("numPartitions", 1).load()
        return self.streamRows(rows, eventTime="unix_millis(timestamp)", sequence="value")

    def rowConverter(self) -> GeneratedEvents:
        """Return the generated items."""
        return GeneratedEvents(self.generatorFn, self.nativeTimestamps)


@attrs.frozen
class FiniteStreamP(StreamSourceP):
    """The given ``(timestamp, item)`` events, ``itemsPerBatch`` per micro-batch, then the end of
    the stream: written to files in the source's work directory, read one file per micro-batch."""

    events: tuple[tuple[int, object], ...]
    itemsPerBatch: int

    finite = True

    def streamingRows(self, spark, workDirectory: str):
        """Write the events, a file per micro-batch (once: a restarted job reads the same files
        again); return Spark's stream of those files."""
        os.makedirs(workDirectory, exist_ok=True)
        start = int(time.time())
        for number, first in enumerate(range(0, len(self.events), self.itemsPerBatch)):
            path = os.path.join(workDirectory, f"batch-{number:06d}.txt")
            if os.path.exists(path):
                continue
            with open(path, "w", encoding="ascii") as file:
                for event in self.events[first : first + self.itemsPerBatch]:
                    file.write(base64.b64encode(pickle.dumps(event)).decode("ascii") + "\n")
            modified = start + number * FINITE_STREAM_SECONDS_APART
            os.utime(path, (modified, modified))
        lines = spark.readStream.option("maxFilesPerTrigger", 1).text(workDirectory)
        return self.streamRows(lines, text="value")

    def rowConverter(self) -> PickledEvents:
        """Return the items of the pickled events."""
        return PickledEvents(self.nativeTimestamps)
