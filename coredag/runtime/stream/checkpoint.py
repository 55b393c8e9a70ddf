"""A stream job's checkpoint: Spark's query checkpoint, the snapshots (state files and snapshot
records), the files of sources sparkjet feeds and the output directories the job claimed, in a
local directory or at a Hadoop URL (see ``checkpoint_storage``). ``StreamCheckpoint`` alone knows
its layout, and an exported snapshot's, which is a checkpoint's with a description: it exports
itself to one and is seeded from one. A restarted job takes the snapshot of Spark's last committed
micro-batch; Spark runs the next one again with the same input. Where fed sources live under a
URL: docs/internals/stream-state.md."""

import contextlib
import fcntl
import functools
import json
import logging
import os
import pickle
import re
import shutil
import socket
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping

import attrs

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.model.metrics import SnapshotMetrics
from sparkjet.coredag.processors.output_paths import localPathOf
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, UnreadableFile, cannotKeep, checkpointStorage
from sparkjet.coredag.runtime.files import (
    WRITING,
    LocalFiles,
    filesAt,
    hadoopFileUrl,
    isUrl,
    makeDirectories,
    unreachableScheme,
    withoutPassword,
)
from sparkjet.coredag.runtime.permissions import checkPrivate
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.state_store import StateStore, referencedFiles, removeStateFiles
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot, SnapshotError, misfits, movedSourceLog
from sparkjet.coredag.runtime.stream.query_log import (
    LOG_FILE,
    BrokenFile,
    batchOf,
    checkCommit,
    checkOffsets,
    checkQueryMetadata,
    checkSourceLog,
)
from sparkjet.coredag.runtime.stream.state_directory import exportedSnapshotDirectory, fedSourcesDirectory
from sparkjet.coredag.runtime.stream.stream_dag import streamSources, unpeeked

RECORDS = "snapshot-records"
"""The snapshot records: per micro-batch, where each processor's state is (its state files and
watermarks), pickled."""
FORMER_RECORDS = "states"
"""Where a checkpoint written before ``RECORDS`` keeps them; still read, and removed as they age."""
STATE = "state"
"""The processors' state files, each written by its task (see ``state_store``)."""
QUERY = "query"
SOURCES = "sources"
"""Where Spark's query checkpoint keeps each source's log of what it read."""
DESCRIPTION = "snapshot.json"
"""What an exported snapshot's directory holds beside a checkpoint's files: its ``JobStateSnapshot``."""
CLAIMED = "claimed-outputs.json"
SHAPE = "job-shape.json"
"""What the job ran: each vertex's processor kind and its number of stream sources, checked on a restart."""
OWNER = "owner.json"
"""A temporary checkpoint's process (its id and host): one whose process is gone was a killed driver's."""
TEMPORARY_PREFIX = "sparkjet-"
LOCK = "lock"
"""Held (``flock``) by the process running the job, so a second job is refused the checkpoint."""
SOURCE_PREFIX = "source-"

logger = logging.getLogger("sparkjet")


@attrs.frozen
class RunStart:
    """Where a run of a stream job starts in its checkpoint: after micro-batch
    ``lastCommittedBatch`` (None before the first), its processors with ``states``."""

    lastCommittedBatch: int | None
    states: dict
    """The processors' states: by vertex name, by processor index, a ProcessorState."""


class StreamCheckpoint:
    """The checkpoint of one stream job, at ``location``: a local path or a Hadoop URL. Its
    storage is reached on first use, or by ``open`` with the job's name for the error."""

    def __init__(self, location: str, remedy: str | None = None) -> None:
        self.location = location
        self.remedy = remedy or (
            f"restore it, or remove the checkpoint '{withoutPassword(location)}' to start the job over, empty: "
            "that loses the job's state and where it was in its sources"
        )
        """What to do about a broken file, as its CheckpointError says."""
        self.sourcesDirectory = fedSourcesDirectory(location) if isUrl(location) else location
        """The local directory of the fed sources' files."""
        self._storage = None

    def open(self, jobName: str) -> "StreamCheckpoint":
        """Reach the checkpoint's storage now; one that cannot be reached (an unknown scheme, a
        file system that does not answer) or where the tasks cannot keep their state is a
        CheckpointError naming the job and the location."""
        self._storage = checkpointStorage(self.location, f"Job '{jobName}'")
        self.stateLocation  # noqa: B018: where the tasks cannot keep their state is an error now, before the job runs
        if self.sourcesDirectory != self.location:
            checkPrivate(
                self.sourcesDirectory, lambda reason: cannotKeep(f"Job '{jobName}'", self.location, reason), CheckpointError
            )
        return self

    @property
    def storage(self):
        """Return the checkpoint's storage, reached now if not yet."""
        if self._storage is None:
            self._storage = checkpointStorage(self.location, "A stream job")
        return self._storage

    @property
    def queryLocation(self) -> str:
        """Return the path or URL of Spark's query checkpoint."""
        return self.storage.url(QUERY)

    @property
    def stateLocation(self) -> str:
        """Return where the tasks keep the processors' state files: the checkpoint's ``state``
        directory, as a local path (a ``file://`` URL's too) or as a URL the tasks reach through
        fsspec's file system for its scheme. A scheme fsspec does not know, or whose library is
        not installed here, is a CheckpointError."""
        if not isUrl(self.location):
            return os.path.join(self.location, STATE)
        local = localPathOf(self.location)
        if local is not None:
            return os.path.join(local, STATE)
        split = urllib.parse.urlsplit(self.location)
        unreachable = unreachableScheme(self.location)
        if unreachable is not None:
            raise CheckpointError(
                f"The checkpoint '{withoutPassword(self.location)}' cannot keep the processors' state: each task "
                f"writes its processor's state through fsspec, which says: {unreachable}. Install the library of "
                f"'{split.scheme}://' file systems on the driver and every executor (s3fs for s3a://, pyarrow and "
                "Hadoop's libhdfs for hdfs://), or keep the checkpoint on a file system every machine mounts"
            ) from None
        return f"{self.location.rstrip('/')}/{STATE}"

    def stateStore(self, version: int) -> StateStore:
        """Return the store where the tasks of micro-batch ``version`` save their processors' state."""
        return StateStore(self.stateLocation, version)

    def removeStateFiles(self, keeping: set[str]) -> None:
        """Remove the state files but those ``keeping`` names (the versions a restart or the next
        micro-batch may read): older versions, and those of failed or abandoned tasks."""
        removeStateFiles(self.stateLocation, keeping)

    def sourceDirectory(self, number: int) -> str:
        """Return the local directory of stream source ``number``'s own files."""
        return os.path.join(self.sourcesDirectory, f"{SOURCE_PREFIX}{number}")

    def sourceNames(self) -> list[str]:
        """Return the names of the fed sources' directories."""
        entries = os.listdir(self.sourcesDirectory) if os.path.isdir(self.sourcesDirectory) else []
        return [name for name in entries if name.startswith(SOURCE_PREFIX)]

    def lastCommittedBatch(self) -> int | None:
        """Return the last micro-batch Spark committed (None before the first)."""
        return max(self._batches(f"{QUERY}/commits"), default=None)

    def _batches(self, log: str) -> list[int]:
        """Return the batches whose files Spark's metadata log ``log`` holds, in order."""
        return sorted(int(name) for name in self.storage.names(log) if name.isdigit())

    def checkQueryLog(self) -> None:
        """Refuse Spark's query checkpoint where a file Spark reads when the query starts is
        broken (see ``query_log``), before Spark reads it and fails with a trace naming none."""
        for name, check in self._filesSparkReads():
            data = self._read(name)
            if data is not None:
                self._decoded(name, data, check)

    def _filesSparkReads(self):
        """Yield each file Spark reads when the query starts, with its check: the query's
        metadata, the last two offsets, the last commit, each source's log since its last
        compaction."""
        yield f"{QUERY}/metadata", checkQueryMetadata
        for batch in self._batches(f"{QUERY}/offsets")[-2:]:
            yield f"{QUERY}/offsets/{batch}", checkOffsets
        for batch in self._batches(f"{QUERY}/commits")[-1:]:
            yield f"{QUERY}/commits/{batch}", checkCommit
        for source in self.storage.names(f"{QUERY}/{SOURCES}"):
            listed = self.storage.names(f"{QUERY}/{SOURCES}/{source}")
            names = sorted((name for name in listed if LOG_FILE.fullmatch(name)), key=batchOf)
            compactions = [number for number, name in enumerate(names) if name.endswith(".compact")]
            for name in names[compactions[-1] if compactions else 0:]:
                yield f"{QUERY}/{SOURCES}/{source}/{name}", checkSourceLog

    def restoredStates(self) -> dict:
        """Return the processors' states at the end of the last committed micro-batch (none
        before the first)."""
        batch = self.lastCommittedBatch()
        if batch is None:
            return {}
        name = self._records().get(batch, recordName(batch))
        saved = self._read(name)
        if saved is None:
            raise CheckpointError(
                f"The checkpoint '{withoutPassword(self.location)}' has no snapshot record of micro-batch {batch}, which "
                f"Spark committed: it was changed from outside; {self.remedy}"
            )
        return self._decoded(name, saved, _states)

    def checkCommitLog(self) -> None:
        """Refuse a checkpoint whose states are ahead of Spark's commit log (the log was removed
        or cut): the job would start over silently, its state lost. The states kept are those of
        the last committed micro-batch and, saved before Spark committed it, of the next."""
        saved = list(self._records())
        committed = _orMinusOne(self.lastCommittedBatch())
        if max(saved, default=-1) > committed + 1:
            raise CheckpointError(
                f"The checkpoint '{self.location}' has the snapshot of micro-batch {max(saved)} but Spark's commit log "
                f"({self.storage.url(QUERY + '/commits')}) ends at {committed if committed >= 0 else 'none'}: "
                "it was changed from outside; restore it, or remove the checkpoint to start the job empty"
            )

    def recordedShape(self) -> dict | None:
        """Return what the job's earlier run ran (see ``recordShape``), None for a new checkpoint."""
        recorded = self._read(SHAPE)
        return None if recorded is None else self._decoded(SHAPE, recorded, _shape)

    def recordShape(self, processorKinds: dict[str, str], sourceCount: int) -> None:
        """Note each vertex's processor kind and the number of stream sources, for a restart to check."""
        shape = {"processorKinds": processorKinds, "sourceCount": sourceCount}
        self.storage.write(SHAPE, json.dumps(shape, sort_keys=True).encode("utf-8"))

    def lock(self, jobName: str) -> "CheckpointLock":
        """Take the checkpoint for job ``jobName`` alone; one another job holds is a CheckpointError."""
        return CheckpointLock.take(self, jobName)

    def _read(self, name: str) -> bytes | None:
        """Return the bytes of file ``name`` (None if there is none); one the storage cannot read
        is a CheckpointError naming it, what is wrong and what to do."""
        try:
            return self.storage.read(name)
        except UnreadableFile as error:
            raise self._broken(name, str(error)) from None

    def _decoded(self, name: str, data: bytes, decode):
        """Return ``data`` of file ``name`` decoded; a truncated or garbled file, or one of
        another shape, is a CheckpointError naming it, what is wrong and what to do."""
        try:
            return decode(data)
        except Exception as error:
            wrong = str(error) if isinstance(error, BrokenFile) else f"{type(error).__name__}: {error}"
            raise self._broken(name, f"{wrong}; {len(data)} bytes") from None

    def _broken(self, name: str, wrong: str) -> CheckpointError:
        """Return the error for file ``name`` that cannot be read, ``wrong`` saying why."""
        return CheckpointError(
            f"The checkpoint file '{withoutPassword(self.storage.url(name))}' cannot be read ({wrong}): it was cut "
            f"short or changed from outside; {self.remedy}"
        )

    def saveStates(self, batchId: int, states: dict) -> SnapshotMetrics:
        """Save where the processors' states are at the end of micro-batch ``batchId`` (their
        tasks wrote the state files), whole or not at all (written aside, then renamed), before
        Spark commits the micro-batch; return the snapshot's figures: the bytes its tasks wrote."""
        started, takenAt = time.perf_counter(), wallClockMillis()
        self.storage.write(recordName(batchId), pickle.dumps(states))
        self._removeStatesBefore(batchId - 1)
        written = sum(state.size for byIndex in states.values() for state in byIndex.values())
        return SnapshotMetrics(batchId, takenAt, written, time.perf_counter() - started)

    def _removeStatesBefore(self, batchId: int) -> None:
        """Remove the states older than micro-batch ``batchId``: a restart needs the last
        committed micro-batch's, and the one after it may not be committed yet."""
        for batch, name in self._records().items():
            if batch < batchId:
                self.storage.remove(name)

    def _records(self) -> dict[int, str]:
        """Return the name of each micro-batch's snapshot record kept, by micro-batch (one of a
        checkpoint written before ``RECORDS`` in ``FORMER_RECORDS``)."""
        return {
            int(name[6:-7]): f"{directory}/{name}"
            for directory in (FORMER_RECORDS, RECORDS)
            for name in self.storage.names(directory)
            if isRecordName(name)
        }

    def exportTo(self, snapshot: JobStateSnapshot, states: dict, dag: DAG) -> JobStateSnapshot:
        """Copy the job's ``states`` after micro-batch ``snapshot.batchId`` (Spark committed it)
        into ``snapshot``'s directory, replacing one there whole (written aside, then renamed);
        return it with its state files' size."""
        directory, doing = snapshot.directory, f"Exporting the snapshot '{snapshot.snapshotName}'"
        writing = directory + WRITING
        shutil.rmtree(writing, ignore_errors=True)
        makeDirectories(writing)
        exported = LocalFiles(writing)
        if self.storage.exists(QUERY):
            self.storage.copyOut(QUERY, exported.path(QUERY))
        claims = self.storage.read(CLAIMED)
        if claims is not None:
            exported.write(CLAIMED, claims, doing)
        for number, vertex in enumerate(streamSources(dag)):
            if os.path.isdir(self.sourceDirectory(number)):
                unpeeked(vertex).copyWorkDirectory(self.sourceDirectory(number), snapshotSource(writing, number))
        toSnapshot = functools.partial(snapshotSource, directory)
        moveSourceLogs(exported.path(QUERY), sourceMoves(self.sourceDirectory, toSnapshot, snapshot.sourceCount))
        stateFiles = sorted(referencedFiles(states))
        for name in stateFiles:
            exported.write(f"{STATE}/{name}", filesAt(self.stateLocation).read(name), doing)
        snapshot = attrs.evolve(snapshot, size=sum(exported.size(f"{STATE}/{name}") for name in stateFiles))
        exported.write(recordName(snapshot.batchId), pickle.dumps(states), doing)
        exported.write(DESCRIPTION, json.dumps(attrs.asdict(snapshot)).encode("utf-8"), doing)
        if os.path.isdir(directory):
            shutil.rmtree(directory)
        os.replace(writing, directory)
        return snapshot

    @classmethod
    def ofSnapshot(cls, snapshot: JobStateSnapshot) -> "StreamCheckpoint":
        """Return the files of ``snapshot``, laid out as a checkpoint's: a broken one is a
        CheckpointError naming it and saying to export the snapshot again."""
        again = f"export the snapshot '{snapshot.snapshotName}' again, or destroy it (JobStateSnapshot.destroy)"
        return cls(snapshot.directory, again)

    def seedFrom(self, snapshot: JobStateSnapshot, jobName: str) -> None:
        """Make this checkpoint (of a job that has none yet) a copy of ``snapshot``: its query under
        a new id (Spark runs one query of an id at a time, and the exporting job may go on), its
        file sources' logs naming the fed files where this job feeds them (rewritten aside, then
        copied in)."""
        self.remove(keeping=(LOCK, SHAPE))
        for entry in sorted(set(os.listdir(snapshot.directory)) - {DESCRIPTION, QUERY}):
            copied = os.path.join(snapshot.directory, entry)
            if entry.startswith(SOURCE_PREFIX):
                shutil.copytree(copied, os.path.join(self.sourcesDirectory, entry))
            else:
                self.storage.copyIn(copied, entry)
        if os.path.isdir(os.path.join(snapshot.directory, QUERY)):
            with tempfile.TemporaryDirectory(prefix="sparkjet-seed-") as staging:
                query = shutil.copytree(os.path.join(snapshot.directory, QUERY), os.path.join(staging, QUERY))
                fromSnapshot = functools.partial(snapshotSource, snapshot.directory)
                moveSourceLogs(query, sourceMoves(fromSnapshot, self.sourceDirectory, snapshot.sourceCount))
                self.storage.copyIn(query, QUERY)
        metadata = f"{QUERY}/metadata"
        if self.storage.exists(metadata):
            self.storage.write(metadata, json.dumps({"id": str(uuid.uuid4())}).encode("utf-8"))
        logger.info("Job '%s' starts from snapshot '%s' of job '%s'", jobName, snapshot.snapshotName, snapshot.job)

    def claimedOutputs(self) -> set[str]:
        """Return the output directories an earlier run of the job claimed. A checkpoint not
        reachable yet has none to read here: a Hadoop URL before this process's SparkSession
        started, or a bad location, whose job then fails on ``open`` before it runs."""
        try:
            self.storage  # noqa: B018: reached now, or not yet
        except CheckpointError:
            return set()
        claims = self._read(CLAIMED)
        return set() if claims is None else self._decoded(CLAIMED, claims, _claims)

    def openRun(
        self, jobName: str, initialSnapshot: JobStateSnapshot | None, claimed: list[str] | None,
    ) -> "RunStart":
        """Open the checkpoint for a run of job ``jobName`` (see ``open``), seeded from
        ``initialSnapshot`` while it has no committed micro-batch (see ``seedFrom``), the output
        directories ``claimed`` recorded for the job's restarts (None: a temporary checkpoint, which
        records none); return where the run starts."""
        self.open(jobName)
        if initialSnapshot is not None and self.lastCommittedBatch() is None:
            self.seedFrom(initialSnapshot, jobName)
        if claimed is not None:
            self.recordClaims(claimed)
        return RunStart(self.lastCommittedBatch(), self.restoredStates())

    def recordClaims(self, directories: list[str]) -> None:
        """Note the output directories this job claimed, for its restarts."""
        claims = sorted(self.claimedOutputs() | set(directories))
        self.storage.write(CLAIMED, json.dumps(claims).encode("utf-8"))

    def remove(self, keeping: tuple[str, ...] = ()) -> None:
        """Remove what the job keeps in its checkpoint (the fed sources' files included) but
        the entries ``keeping``, then the directory if that left it empty: never anything else
        found there, a files sink's output or the user's own files."""
        try:
            for name in self.storage.names():
                if isCheckpointEntry(name) and name not in keeping:
                    self.storage.removeTree(name)
            self.storage.removeIfEmpty()
        except Exception as error:  # what is left stays; the job's own outcome counts
            logger.warning("Could not remove the checkpoint '%s': %s", self.location, error)
        for name in self.sourceNames():
            shutil.rmtree(os.path.join(self.sourcesDirectory, name), ignore_errors=True)
        if self.sourcesDirectory != self.location:
            with contextlib.suppress(OSError):
                os.rmdir(self.sourcesDirectory)


def isCheckpointEntry(name: str) -> bool:
    """Return whether ``name``, in a checkpoint's directory, is the job's own (what ``remove`` removes)."""
    own = (QUERY, RECORDS, FORMER_RECORDS, STATE, CLAIMED, CLAIMED + WRITING, SHAPE, SHAPE + WRITING, LOCK, OWNER)
    return name in own or name.startswith(SOURCE_PREFIX)


def temporaryCheckpoint(jobName: str) -> StreamCheckpoint:
    """Return a new temporary checkpoint for job ``jobName``, which has no guarantee, noting the
    process that owns it; first remove those a killed driver left (their process gone)."""
    removeAbandonedCheckpoints(tempfile.gettempdir())
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", jobName)[:40]
    location = tempfile.mkdtemp(prefix=f"{TEMPORARY_PREFIX}{readable}-")
    with open(os.path.join(location, OWNER), "w", encoding="utf-8") as file:
        json.dump({"pid": os.getpid(), "host": socket.gethostname()}, file)
    return StreamCheckpoint(location)


def removeAbandonedCheckpoints(directory: str) -> None:
    """Remove the temporary checkpoints in ``directory`` whose process on this host is gone:
    only this user's, only those that note their process, only what a checkpoint keeps."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        try:
            if not name.startswith(TEMPORARY_PREFIX) or os.stat(path).st_uid != os.getuid():
                continue
            with open(os.path.join(path, OWNER), encoding="utf-8") as file:
                owner = json.load(file)
        except (OSError, ValueError):
            continue
        if owner.get("host") == socket.gethostname() and not processRuns(owner.get("pid")):
            StreamCheckpoint(path).remove()


def processRuns(pid: object) -> bool:
    """Return whether process ``pid`` runs on this host (one that cannot be asked is taken to)."""
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _states(data: bytes) -> dict:
    """Return the states pickled in ``data``: by vertex name, by processor index, a ProcessorState."""
    states = pickle.loads(data)
    if not isinstance(states, dict) or not all(
        isinstance(vertex, str) and isinstance(byIndex, dict)
        and all(type(index) is int and isinstance(state, ProcessorState) for index, state in byIndex.items())
        for vertex, byIndex in states.items()
    ):
        raise BrokenFile(f"it holds a {type(states).__name__}, not the processors' states by vertex and index")
    return states


def _shape(data: bytes) -> dict:
    """Return the job's shape in ``data`` (see ``recordShape``)."""
    shape = json.loads(data)
    kinds = shape.get("processorKinds") if isinstance(shape, dict) else None
    if not (
        isinstance(kinds, dict) and all(isinstance(name, str) and isinstance(kind, str) for name, kind in kinds.items())
        and type(shape.get("sourceCount")) is int
    ):
        raise BrokenFile(
            'it is not a job\'s shape, a JSON object such as {"processorKinds": {"map": "..."}, "sourceCount": 1}'
        )
    return shape


def _claims(data: bytes) -> set[str]:
    """Return the output directories claimed in ``data``, a JSON list of them."""
    claims = json.loads(data)
    if not isinstance(claims, list) or not all(isinstance(claim, str) for claim in claims):
        raise BrokenFile("it is not a JSON list of the output directories the job claimed")
    return set(claims)


def isRecordName(name: str) -> bool:
    """Return whether ``name``, in the checkpoint's snapshot records' directory, is a micro-batch's record."""
    return name.startswith("batch-") and name.endswith(".pickle") and name[6:-7].isdigit()


def _orMinusOne(batch: int | None) -> int:
    return -1 if batch is None else batch


class CheckpointLock:
    """A job's hold on its checkpoint: an exclusive ``flock`` on a file in a local checkpoint,
    released by ``release`` or when the process ends (a killed job holds nothing). A checkpoint
    at a Hadoop URL has no such lock: two jobs there are the user's to keep apart."""

    def __init__(self, file) -> None:
        self._file = file

    @classmethod
    def take(cls, checkpoint: StreamCheckpoint, jobName: str) -> "CheckpointLock":
        """Lock ``checkpoint`` for job ``jobName``, or raise a CheckpointError naming it."""
        if isUrl(checkpoint.location):
            return cls(None)
        makeDirectories(checkpoint.location)
        file = open(os.path.join(checkpoint.location, LOCK), "a+")
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            raise CheckpointError(
                f"Job '{jobName}' cannot use the checkpoint '{checkpoint.location}': another running job uses it; "
                "give this job another name or checkpoint location, or stop the other job first"
            ) from None
        return cls(file)

    def release(self) -> None:
        """Let another job take the checkpoint."""
        if self._file is not None:
            self._file.close()
            self._file = None


def recordName(batchId: int) -> str:
    """Return the name of the states saved at the end of micro-batch ``batchId``."""
    return f"{RECORDS}/batch-{batchId:09d}.pickle"


def loadSnapshot(name: str) -> JobStateSnapshot:
    """Return the snapshot exported under ``name``; a missing one is a SnapshotError saying where it looked."""
    path = os.path.join(exportedSnapshotDirectory(name), DESCRIPTION)
    if not os.path.exists(path):
        raise SnapshotError(
            f"No snapshot was exported under the name '{name}' (looked in {os.path.dirname(path)}); "
            "export one with job.exportSnapshot(name) or job.cancelAndExportSnapshot(name)"
        )
    try:
        with open(path, encoding="utf-8") as file:
            described = json.load(file)
        snapshot = JobStateSnapshot(**{**described, "directory": os.path.dirname(path)})
    except (ValueError, TypeError) as error:
        wrong = f"{type(error).__name__}: {error}"
    else:
        wrongFields = misfits(snapshot)
        if not wrongFields:
            return snapshot
        wrong = f"{', '.join(wrongFields)} of another type"
    raise CheckpointError(
        f"The snapshot '{name}' cannot be read: its description '{path}' is cut short or changed "
        f"({wrong}); export it again, or destroy it"
    )


def snapshotSource(directory: str, number: int) -> str:
    """Return the directory of stream source ``number``'s files in the snapshot at ``directory``."""
    return os.path.join(directory, f"{SOURCE_PREFIX}{number}")


def sourceMoves(before: Callable[[int], str], after: Callable[[int], str], sourceCount: int) -> dict[str, str]:
    """Return the URL of each stream source's local directory ``before(number)``, as Spark's
    file source names it (``hadoopFileUrl``), mapped to the URL of its directory ``after(number)``."""
    return {hadoopFileUrl(before(number)): hadoopFileUrl(after(number)) for number in range(sourceCount)}


def moveSourceLogs(query: str, moves: Mapping[str, str]) -> None:
    """Rewrite the file sources' logs in the local copy ``query`` of a query checkpoint where an
    entry names a file in a directory of ``moves`` (see ``movedSourceLog``), removing the
    checksum Hadoop kept of the old text."""
    logs = os.path.join(query, SOURCES)
    for source in os.listdir(logs) if os.path.isdir(logs) else []:
        for name in os.listdir(os.path.join(logs, source)):
            if name.startswith("."):  # a checksum, or a log Spark was writing
                continue
            path = os.path.join(logs, source, name)
            with open(path, encoding="utf-8", newline="") as file:
                log = file.read()
            moved = movedSourceLog(log, moves)
            if moved != log:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(logs, source, f".{name}.crc"))
                with open(path, "w", encoding="utf-8", newline="") as file:
                    file.write(moved)
