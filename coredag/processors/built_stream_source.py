"""A stream source built from the user's functions (Jet's ``SourceBuilder.stream`` and
``timestampedStream``): the driver runs ``fillBufferFn`` in a thread of its own, and what it adds
to the buffer reaches Spark's file stream source as small files a micro-batch reads."""

import base64
import os
import pickle
import re
import threading
import time
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.errors import JobError, UserFunctionError
from sparkjet.coredag.processors.stream_sources import PickledEvents, StreamSourceP

FED_FILE = re.compile(r"events-(\d{9})\.txt")
"""The name of a file the feeder wrote, numbered from 0 in the order written."""

FLUSH_SECONDS = 0.1
"""How long the items a source adds gather before they are written as one file."""

IDLE_SECONDS = 0.01
"""How long the feeding thread waits after a ``fillBufferFn`` call that added nothing."""


class SourceBuffer:
    """What ``fillBufferFn`` adds items to (Jet's ``SourceBuffer``, or with a timestamp per item,
    ``TimestampedSourceBuffer``)."""

    def __init__(self, timestamped: bool) -> None:
        self._timestamped = timestamped
        self._events: list[tuple[int | None, object]] = []

    def add(self, item: object, timestamp: int | None = None) -> None:
        """Add ``item`` (with its event ``timestamp``, in a timestamped stream)."""
        if self._timestamped and not isinstance(timestamp, int):
            raise JobError(f"a timestamped stream's buffer takes add(item, timestamp), got timestamp {timestamp!r}")
        self._events.append((timestamp, item))

    def size(self) -> int:
        """Return how many items were added since the buffer was last emptied."""
        return len(self._events)

    def close(self) -> None:
        """Refuse: a stream has no end (``close()`` ends a batch source in Jet)."""
        raise JobError("close() ends a batch source's buffer; a stream source has no end")

    def drain(self) -> list[tuple[int | None, object]]:
        """Return the events added and empty the buffer: the engine's side."""
        events, self._events = self._events, []
        return events


@attrs.frozen
class BuiltStreamP(StreamSourceP):
    """A stream of what ``fillBufferFn(state, buffer)`` adds, ``state`` made by
    ``createFn(context)`` and ended by ``destroyFn(state)``; ``timestamped`` where each item
    comes with its time."""

    createFn: Callable[[ProcessorContext], object]
    fillBufferFn: Callable[[object, SourceBuffer], None]
    destroyFn: Callable[[object], None] | None = None
    timestamped: bool = False

    def feeder(self, jobName: str, workDirectory: str) -> "SourceFeeder":
        """Return the thread that fills the source's buffer and writes what it adds."""
        return SourceFeeder(self, jobName, workDirectory)

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of the files the source's feeder writes."""
        os.makedirs(workDirectory, exist_ok=True)
        return self.streamRows(spark.readStream.text(workDirectory), text="value")

    def rowConverter(self) -> PickledEvents:
        """Return the items of the pickled events."""
        return PickledEvents(self.nativeTimestamps)


class SourceFeeder:
    """Calls a built source's ``fillBufferFn`` on the driver until stopped, writing the items it
    adds, every ``FLUSH_SECONDS``, into a new file of ``directory`` (written under a hidden name,
    then renamed, so Spark reads it whole); ``failure`` holds what a user function raised."""

    def __init__(self, source: BuiltStreamP, jobName: str, directory: str) -> None:
        self._source, self._jobName, self._directory = source, jobName, directory
        self._stopped = threading.Event()
        self._files = 0
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"sparkjet-source-{source.sourceId}", daemon=True)

    def start(self) -> None:
        """Start calling the source's functions, numbering its files after those an earlier run
        of the job wrote (Spark's file source skips a name it has read, so a resumed or restarted
        job's new items must come in new files)."""
        os.makedirs(self._directory, exist_ok=True)
        written = [int(match[1]) for name in os.listdir(self._directory) if (match := FED_FILE.fullmatch(name))]
        self._files = max(written, default=-1) + 1
        self._thread.start()

    def stop(self) -> None:
        """Stop calling ``fillBufferFn`` and wait for ``destroyFn``."""
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        source = self._source
        context = ProcessorContext(source.sourceId, 0, 1, jobName=self._jobName)
        try:
            state = self._called("createFn", lambda: source.createFn(context))
        except UserFunctionError as error:
            self.failure = error
            return
        try:
            self._feed(state)
        except UserFunctionError as error:
            self.failure = error
        finally:
            if source.destroyFn is not None:
                try:
                    self._called("destroyFn", lambda: source.destroyFn(state))
                except UserFunctionError as error:
                    self.failure = self.failure or error

    def _feed(self, state: object) -> None:
        buffer, pending, flushed = SourceBuffer(self._source.timestamped), [], time.monotonic()
        while not self._stopped.is_set():
            self._called("fillBufferFn", lambda: self._source.fillBufferFn(state, buffer))
            added = buffer.drain()
            pending += added
            if pending and time.monotonic() - flushed >= FLUSH_SECONDS:
                self._write(pending)
                pending, flushed = [], time.monotonic()
            if not added:
                self._stopped.wait(IDLE_SECONDS)

    def _write(self, events: list) -> None:
        name = f"events-{self._files:09d}.txt"
        self._files += 1
        hidden = os.path.join(self._directory, f".{name}.writing")
        with open(hidden, "w", encoding="ascii") as file:
            file.writelines(base64.b64encode(pickle.dumps(event)).decode("ascii") + "\n" for event in events)
        os.rename(hidden, os.path.join(self._directory, name))

    def _called(self, function: str, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as cause:
            raise UserFunctionError(self._source.sourceId, f"(in {function})", cause) from cause
