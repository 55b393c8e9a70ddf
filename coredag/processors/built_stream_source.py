"""A stream source built from the user's functions (Jet's ``SourceBuilder.stream`` and
``timestampedStream``): the driver runs ``fillBufferFn`` in a thread of its own, and what it adds
to the buffer reaches Spark's file stream source as small files a micro-batch reads, each fed
with the source's snapshot (docs/internals/stream-state.md, "Sources sparkjet feeds")."""

import base64
import os
import pickle
import re
import shutil
import threading
import time
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import Inbox, Outbox, Processor, ProcessorContext, restoreSnapshot
from sparkjet.coredag.errors import JobError, NoSpaceError, UserFunctionError, shorten
from sparkjet.coredag.model.event_time_policy import TIMESTAMP_ADVICE
from sparkjet.coredag.processors.full_disk import removedOnFailure
from sparkjet.coredag.processors.stream_sources import PickledEvents, StreamSourceP

FED_FILE = re.compile(r"events-(\d{9})\.txt")
"""The name of a file the feeder wrote, numbered from 0 in the order written."""

SNAPSHOT_FILE = re.compile(r"\.events-(\d{9})\.snapshot")
"""The name of the source's snapshot saved with fed file of that number (hidden: Spark skips it)."""

WRITING = ".writing"
"""The end of a file's name while it is written (hidden, so Spark skips it); renamed once whole."""

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
        if self._timestamped and (isinstance(timestamp, bool) or not isinstance(timestamp, int)):
            raise JobError(
                f"a timestamped stream's buffer takes add(item, timestamp), got timestamp {timestamp!r} "
                f"({type(timestamp).__name__}) for item {shorten(item)}: {TIMESTAMP_ADVICE}"
            )
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
    comes with its time. ``createSnapshotFn(state)`` returns what ``restoreSnapshotFn(state,
    snapshots)`` takes back (in a list, as Jet's) when the job runs again."""

    createFn: Callable[[ProcessorContext], object]
    fillBufferFn: Callable[[object, SourceBuffer], None]
    destroyFn: Callable[[object], None] | None = None
    timestamped: bool = False
    createSnapshotFn: Callable[[object], object] | None = attrs.field(default=None, kw_only=True)
    restoreSnapshotFn: Callable[[object, list], None] | None = attrs.field(default=None, kw_only=True)

    def feeder(self, jobName: str, workDirectory: str) -> "SourceFeeder":
        """Return the thread that fills the source's buffer and writes what it adds."""
        return SourceFeeder(self, jobName, workDirectory)

    def cannotReplay(self) -> str | None:
        """Return why the source, without both snapshot functions, cannot go on after a restart:
        it would start again from createFn and feed its items twice."""
        if self.createSnapshotFn is not None and self.restoreSnapshotFn is not None:
            return None
        builder = "timestampedStream" if self.timestamped else "stream"
        return (
            f"SourceBuilder.{builder}('{self.sourceId}') has no createSnapshotFn and restoreSnapshotFn, so after a "
            "restart it would start over from createFn and feed its items a second time: add both to its builder, "
            ".createSnapshotFn(lambda state: snapshot).restoreSnapshotFn(lambda state, snapshots: ...), as Jet's "
            "fault-tolerant sources do, or run the job without a processing guarantee (ProcessingGuarantee.NONE: "
            "started again, it starts over)"
        )

    def copyWorkDirectory(self, workDirectory: str, target: str) -> None:
        """Copy the source's files while its feeder writes and Spark removes (an exported snapshot)."""
        FeedDirectory(workDirectory).copyTo(target)

    def streamingRows(self, spark, workDirectory: str):
        """Return Spark's stream of the files the source's feeder writes; Spark removes each once
        the micro-batch that read it is committed (when it starts the next one with new input)."""
        os.makedirs(workDirectory, exist_ok=True)
        return self.streamRows(spark.readStream.option("cleanSource", "delete").text(workDirectory), text="value")

    def rowConverter(self) -> PickledEvents:
        """Return the items of the pickled events."""
        return PickledEvents(self.nativeTimestamps)


@attrs.frozen
class FeedDirectory:
    """The files a feeder writes in ``path``: ``events-<n>.txt``, the items Spark reads, and
    ``.events-<n>.snapshot``, the source's snapshot once they were added (a pickled list, empty
    without one). File ``n`` is fed by writing its items aside, saving its snapshot (written
    aside, then renamed: the moment it is fed) and then moving the items into place; a feeder
    started again finishes the last file fed and goes on from its snapshot."""

    path: str

    def fedPath(self, number: int) -> str:
        """Return the path of fed file ``number``."""
        return os.path.join(self.path, f"events-{number:09d}.txt")

    def snapshotPath(self, number: int) -> str:
        """Return the path of the snapshot saved with fed file ``number``."""
        return os.path.join(self.path, f".events-{number:09d}.snapshot")

    def feed(self, number: int, lines: list[str], snapshot: bytes) -> None:
        """Feed file ``number`` with ``lines`` and the source's ``snapshot``; remove the snapshot
        before it. A full disk is a NoSpaceError, and leaves nothing of file ``number``."""
        asides = _aside(self.fedPath(number)), _aside(self.snapshotPath(number))
        needed = sum(map(len, lines)) + len(snapshot)
        with removedOnFailure("Feeding a stream source", self.fedPath(number), needed, *asides):
            with open(asides[0], "w", encoding="ascii") as file:
                file.writelines(lines)
            with open(asides[1], "wb") as file:
                file.write(snapshot)
        os.rename(asides[1], self.snapshotPath(number))
        os.rename(asides[0], self.fedPath(number))
        _removeIfThere(self.snapshotPath(number - 1))

    def recover(self) -> tuple[int, bytes | None]:
        """Finish the last file fed (its items moved into place), remove what was written for a
        file not fed; return the number of the next file and the last snapshot saved (None before
        the first)."""
        os.makedirs(self.path, exist_ok=True)
        names = os.listdir(self.path)
        last = max(_numbers(SNAPSHOT_FILE, names), default=None)
        if last is not None and os.path.exists(_aside(self.fedPath(last))):
            os.rename(_aside(self.fedPath(last)), self.fedPath(last))
        for name in names:
            snapshot = SNAPSHOT_FILE.fullmatch(name)
            if name.endswith(WRITING) or (snapshot and int(snapshot[1]) != last):
                _removeIfThere(os.path.join(self.path, name))
        fed = _numbers(FED_FILE, names)
        following = max([*fed, -1 if last is None else last]) + 1
        return following, None if last is None else _read(self.snapshotPath(last))

    def copyTo(self, target: str) -> None:
        """Copy the directory while its feeder writes into it and Spark removes what it read: the
        last snapshot saved and the files fed up to it that are still there."""
        os.makedirs(target, exist_ok=True)
        last = self._copyLastSnapshot(target)
        if last is None:
            return
        for number in _numbers(FED_FILE, os.listdir(self.path)):
            if number < last:
                _copyIfThere(self.fedPath(number), _beside(target, self.fedPath(number)))
        # file `last` is written aside, then moved into place, then removed once read and committed
        if not _copyIfThere(_aside(self.fedPath(last)), _beside(target, self.fedPath(last))):
            _copyIfThere(self.fedPath(last), _beside(target, self.fedPath(last)))

    def _copyLastSnapshot(self, target: str) -> int | None:
        """Copy the last snapshot saved (the feeder removes one once it saved the next); return its number."""
        while True:
            last = max(_numbers(SNAPSHOT_FILE, os.listdir(self.path)), default=None)
            if last is None or _copyIfThere(self.snapshotPath(last), _beside(target, self.snapshotPath(last))):
                return last


def _aside(path: str) -> str:
    """Return where ``path`` is written before it is renamed into place: a hidden name beside it."""
    directory, name = os.path.split(path)
    hidden = name if name.startswith(".") else f".{name}"
    return os.path.join(directory, hidden + WRITING)


def _beside(directory: str, path: str) -> str:
    """Return the path of ``path``'s file in ``directory``."""
    return os.path.join(directory, os.path.basename(path))


def _numbers(pattern: re.Pattern, names: list[str]) -> list[int]:
    return [int(match[1]) for name in names if (match := pattern.fullmatch(name))]


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def _removeIfThere(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _copyIfThere(source: str, target: str) -> bool:
    """Copy ``source`` to ``target``; return False where it is gone."""
    try:
        shutil.copyfile(source, target)
    except FileNotFoundError:
        return False
    return True


class SourceFeeder:
    """Calls a built source's ``fillBufferFn`` on the driver until stopped, feeding the items it
    adds, every ``FLUSH_SECONDS``, into a new file of ``directory`` with the source's snapshot
    (see ``FeedDirectory``); ``failure`` holds what a user function raised."""

    def __init__(self, source: BuiltStreamP, jobName: str, directory: str) -> None:
        self._source, self._jobName, self._directory = source, jobName, FeedDirectory(directory)
        self._stopped = threading.Event()
        self._files = 0
        self._restored: bytes | None = None
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"sparkjet-source-{source.sourceId}", daemon=True)

    def start(self) -> None:
        """Start calling the source's functions, from the snapshot of the last file an earlier
        run of the job fed, numbering its files after it (Spark's file source skips a name it
        has read, so a resumed or restarted job's new items must come in new files)."""
        self._files, self._restored = self._directory.recover()
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
            self._restore(state)
            self._feed(state)
        except (UserFunctionError, NoSpaceError) as error:
            self.failure = error
        finally:
            if source.destroyFn is not None:
                try:
                    self._called("destroyFn", lambda: source.destroyFn(state))
                except UserFunctionError as error:
                    self.failure = self.failure or error

    def _restore(self, state: object) -> None:
        """Give ``restoreSnapshotFn`` the snapshot an earlier run saved with its last file, if any."""
        restoreSnapshotFn = self._source.restoreSnapshotFn
        if self._restored is None or restoreSnapshotFn is None:
            return
        snapshots = self._called("restoreSnapshotFn", lambda: pickle.loads(self._restored))
        if snapshots:  # as Jet's, not called where createSnapshotFn returned None
            self._called("restoreSnapshotFn", lambda: restoreSnapshotFn(state, snapshots))

    def _feed(self, state: object) -> None:
        buffer, pending, flushed = SourceBuffer(self._source.timestamped), [], time.monotonic()
        while not self._stopped.is_set():
            self._called("fillBufferFn", lambda: self._source.fillBufferFn(state, buffer))
            added = buffer.drain()
            pending += added
            if pending and time.monotonic() - flushed >= FLUSH_SECONDS:
                self._write(pending, self._snapshot(state))
                pending, flushed = [], time.monotonic()
            if not added:
                self._stopped.wait(IDLE_SECONDS)

    def _snapshot(self, state: object) -> bytes:
        """Return the pickled list of the source's snapshot now (empty where it has none)."""
        createSnapshotFn = self._source.createSnapshotFn
        if createSnapshotFn is None:
            return pickle.dumps([])
        snapshot = self._called("createSnapshotFn", lambda: createSnapshotFn(state))
        return self._called("createSnapshotFn", lambda: pickle.dumps([] if snapshot is None else [snapshot]))

    def _write(self, events: list, snapshot: bytes) -> None:
        lines = [base64.b64encode(pickle.dumps(event)).decode("ascii") + "\n" for event in events]
        self._directory.feed(self._files, lines, snapshot)
        self._files += 1

    def _called(self, function: str, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as cause:
            raise UserFunctionError(self._source.sourceId, f"(in {function})", cause) from cause


class DrivenProcessor:
    """A stream source processor of the user's own (Jet's ``Sources.streamFromProcessor``), run
    on the driver as a built source's state: each ``fillBufferFn`` call is one ``complete()``."""

    def __init__(self, processor: Processor, context: ProcessorContext) -> None:
        self.processor, self.outbox, self.done = processor, Outbox(1, None), False
        processor.init(self.outbox, context)


@attrs.frozen
class StartProcessor:
    """A driven processor's ``createFn``: a new processor from ``supplier``, initialized."""

    supplier: Callable[[], Processor]

    def __call__(self, context: ProcessorContext) -> DrivenProcessor:
        return DrivenProcessor(self.supplier(), context)


def completeOnce(driven: DrivenProcessor, buffer: SourceBuffer) -> None:
    """A driven processor's ``fillBufferFn``: call ``complete()`` once, until it returns True,
    and add what it emitted."""
    if not driven.done:
        driven.done = driven.processor.complete()
    for item in driven.outbox.drainBucket(0):
        buffer.add(item)


def closeProcessor(driven: DrivenProcessor) -> None:
    """A driven processor's ``destroyFn``."""
    driven.processor.close()


def snapshotOfProcessor(driven: DrivenProcessor) -> list[tuple]:
    """A driven processor's ``createSnapshotFn``: the entries its ``saveToSnapshot()`` saves."""
    while not driven.processor.saveToSnapshot():
        pass
    return driven.outbox.drainSnapshotBucket()


def restoreProcessor(driven: DrivenProcessor, snapshots: list) -> None:
    """A driven processor's ``restoreSnapshotFn``: its entries to ``restoreFromSnapshot``, then
    ``finishSnapshotRestore()``."""
    restoreSnapshot(driven.processor, Inbox(entry for entries in snapshots for entry in entries))
    while not driven.processor.finishSnapshotRestore():
        pass
