"""Exported snapshots (Jet's ``Job.exportSnapshot`` and ``JobConfig.setInitialSnapshotName``):
a copy of a stream job's last committed snapshot, kept under a name until destroyed, from which a
new job starts, taking each vertex's state by its name. What is copied and what a new job
refuses: docs/guide/state-and-snapshots.md."""

import contextlib
import functools
import json
import logging
import os
import pickle
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping

import attrs

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.files import makeDirectories
from sparkjet.coredag.runtime.state_store import referencedFiles
from sparkjet.coredag.runtime.stream.checkpoint import (
    CLAIMED,
    LOCK,
    QUERY,
    SHAPE,
    SOURCE_PREFIX,
    STATE,
    STATES,
    StreamCheckpoint,
    statesName,
)
from sparkjet.coredag.runtime.stream.state_directory import fileName, stateDirectory
from sparkjet.coredag.runtime.stream.stream_dag import processorKind, streamSources, unpeeked

EXPORTED = "exported-snapshots"
"""The directory under sparkjet's state directory holding the exported snapshots."""
DESCRIPTION = "snapshot.json"
SOURCES = "sources"
"""Where Spark's query checkpoint keeps each source's log of what it read."""

logger = logging.getLogger("sparkjet")


class SnapshotError(JobError):
    """A snapshot that cannot be exported, found or started from."""


@attrs.frozen
class JobStateSnapshot:
    """A snapshot exported under ``snapshotName`` (Jet's ``JobStateSnapshot``): the state of job
    ``job`` after micro-batch ``batchId``, taken at ``created`` (epoch milliseconds), its state files
    ``size`` bytes; ``processorKinds`` names the processor of each vertex that saved entries,
    ``sourceCount`` the stream sources the job read."""

    snapshotName: str
    job: str
    created: int
    batchId: int
    size: int
    processorKinds: Mapping[str, str]
    sourceCount: int
    directory: str

    def name(self) -> str:
        """Return the snapshot's name."""
        return self.snapshotName

    def jobName(self) -> str:
        """Return the name of the job it was exported from."""
        return self.job

    def creationTime(self) -> int:
        """Return when it was taken, in epoch milliseconds."""
        return self.created

    def payloadSize(self) -> int:
        """Return the size of the snapshot's state files, in bytes."""
        return self.size

    def destroy(self) -> None:
        """Remove the snapshot (Jet keeps an exported snapshot until this is called)."""
        shutil.rmtree(self.directory, ignore_errors=True)


def snapshotDirectory(name: str) -> str:
    """Return the directory of the snapshot exported under ``name``."""
    return os.path.join(stateDirectory(), EXPORTED, fileName(name, f"Snapshot '{name}'"))


def processorKinds(dag: DAG, vertexNames) -> dict[str, str]:
    """Return the kind of processor each of ``vertexNames`` runs in ``dag`` (see ``processorKind``)."""
    return {name: processorKind(dag.getVertex(name)) for name in vertexNames}


def exportSnapshot(
    name: str, jobName: str, checkpoint: StreamCheckpoint, states: dict, batchId: int, dag: DAG, sourceCount: int,
    fileUrl: Callable[[str], str],
) -> JobStateSnapshot:
    """Copy the job's state after micro-batch ``batchId`` (Spark committed it) out of
    ``checkpoint`` into the snapshot ``name``, replacing one of that name whole (``fileUrl``:
    the engine's ``fileSourceUrl``)."""
    directory = snapshotDirectory(name)
    writing = directory + ".writing"
    shutil.rmtree(writing, ignore_errors=True)
    makeDirectories(os.path.join(writing, STATES))
    if checkpoint.storage.exists(QUERY):
        checkpoint.storage.copyOut(QUERY, os.path.join(writing, QUERY))
    claims = checkpoint.storage.read(CLAIMED)
    if claims is not None:
        with open(os.path.join(writing, CLAIMED), "wb") as file:
            file.write(claims)
    for number, vertex in enumerate(streamSources(dag)):
        if os.path.isdir(checkpoint.sourceDirectory(number)):
            target = snapshotSource(writing, number)
            unpeeked(vertex).copyWorkDirectory(checkpoint.sourceDirectory(number), target)
    moveSourceLogs(
        os.path.join(writing, QUERY),
        sourceMoves(checkpoint.sourceDirectory, functools.partial(snapshotSource, directory), sourceCount, fileUrl),
    )
    with open(os.path.join(writing, statesName(batchId)), "wb") as file:
        pickle.dump(states, file)
    size = 0
    for stateFile in sorted(referencedFiles(states)):
        copied = os.path.join(writing, STATE, stateFile)
        makeDirectories(os.path.dirname(copied))
        checkpoint.storage.copyOut(f"{STATE}/{stateFile}", copied)
        size += os.path.getsize(copied)
    stateful = [vertex for vertex, byIndex in states.items() if any(state.files for state in byIndex.values())]
    snapshot = JobStateSnapshot(
        name, jobName, wallClockMillis(), batchId, size, processorKinds(dag, stateful), sourceCount, directory
    )
    with open(os.path.join(writing, DESCRIPTION), "w", encoding="utf-8") as file:
        json.dump(attrs.asdict(snapshot), file)
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.replace(writing, directory)
    return snapshot


def loadSnapshot(name: str) -> JobStateSnapshot:
    """Return the snapshot exported under ``name``; a missing one is a SnapshotError saying where it looked."""
    path = os.path.join(snapshotDirectory(name), DESCRIPTION)
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
        misfits = _misfits(snapshot)
        if not misfits:
            return snapshot
        wrong = f"{', '.join(misfits)} of another type"
    raise CheckpointError(
        f"The snapshot '{name}' cannot be read: its description '{path}' is cut short or changed "
        f"({wrong}); export it again, or destroy it"
    )


def _misfits(snapshot: JobStateSnapshot) -> list[str]:
    """Return the fields of ``snapshot``, as its description gave them, whose values are not of their type."""
    kinds, given = snapshot.processorKinds, attrs.asdict(snapshot, recurse=False)
    fits = {
        **{field: isinstance(given[field], str) for field in ("snapshotName", "job")},
        **{field: type(given[field]) is int for field in ("created", "batchId", "size", "sourceCount")},
        "processorKinds": isinstance(kinds, dict)
        and all(isinstance(item, str) for pair in kinds.items() for item in pair),
    }
    return [field for field, fitting in fits.items() if not fitting]


def snapshotFiles(snapshot: JobStateSnapshot) -> StreamCheckpoint:
    """Return the files of ``snapshot``, laid out as a checkpoint's: a broken one is a
    CheckpointError naming it and saying to export the snapshot again."""
    again = f"export the snapshot '{snapshot.snapshotName}' again, or destroy it (JobStateSnapshot.destroy)"
    return StreamCheckpoint(snapshot.directory, again)


def checkCompatible(snapshot: JobStateSnapshot, jobName: str, dag: DAG, sourceCount: int) -> list[str]:
    """Raise a SnapshotError where job ``jobName`` cannot start from ``snapshot``; return the
    vertices whose state it drops, having none of that name."""
    starting = f"Job '{jobName}' cannot start from snapshot '{snapshot.snapshotName}' (of job '{snapshot.job}')"
    return checkShape(snapshot.processorKinds, snapshot.sourceCount, dag, sourceCount, starting, SnapshotError)


def checkShape(
    kinds: Mapping[str, str], sourceCount: int, dag: DAG, dagSourceCount: int, starting: str, error: type
) -> list[str]:
    """Raise ``error`` (``starting`` what cannot be done) where ``dag``, reading ``dagSourceCount``
    stream sources, cannot take the state a job of ``kinds`` reading ``sourceCount`` saved: other
    sources, or a vertex of the same name running another processor; return the vertices of
    ``kinds`` that ``dag`` no longer has."""
    if dagSourceCount != sourceCount:
        raise error(
            f"{starting}: that job read {sourceCount} stream source(s), this one reads {dagSourceCount}; "
            "where each source was read up to is kept per source, so the sources must be the same"
        )
    names = {vertex.name for vertex in dag.vertices()}
    kept = [name for name in kinds if name in names]
    for name, kind in processorKinds(dag, kept).items():
        if kind != kinds[name]:
            raise error(
                f"{starting}: vertex '{name}' ran a {kinds[name]} there and runs a {kind} "
                "here, so its state does not fit; rename the stage (setName) to start it empty"
            )
    return sorted(set(kinds) - names)


def seedCheckpoint(
    snapshot: JobStateSnapshot, checkpoint: StreamCheckpoint, jobName: str, fileUrl: Callable[[str], str]
) -> None:
    """Make ``checkpoint`` (of a job that has none yet) a copy of ``snapshot``: its query under a
    new id (Spark runs one query of an id at a time, and the exporting job may go on), its file
    sources' logs naming the fed files where this job feeds them (rewritten aside, then copied in;
    ``fileUrl``: the engine's ``fileSourceUrl``)."""
    checkpoint.remove(keeping=(LOCK, SHAPE))
    for entry in sorted(set(os.listdir(snapshot.directory)) - {DESCRIPTION, QUERY}):
        copied = os.path.join(snapshot.directory, entry)
        if entry.startswith(SOURCE_PREFIX):
            shutil.copytree(copied, os.path.join(checkpoint.sourcesDirectory, entry))
        else:
            checkpoint.storage.copyIn(copied, entry)
    if os.path.isdir(os.path.join(snapshot.directory, QUERY)):
        with tempfile.TemporaryDirectory(prefix="sparkjet-seed-") as staging:
            query = shutil.copytree(os.path.join(snapshot.directory, QUERY), os.path.join(staging, QUERY))
            fromSnapshot = functools.partial(snapshotSource, snapshot.directory)
            moveSourceLogs(query, sourceMoves(fromSnapshot, checkpoint.sourceDirectory, snapshot.sourceCount, fileUrl))
            checkpoint.storage.copyIn(query, QUERY)
    metadata = f"{QUERY}/metadata"
    if checkpoint.storage.exists(metadata):
        checkpoint.storage.write(metadata, json.dumps({"id": str(uuid.uuid4())}).encode("utf-8"))
    logger.info("Job '%s' starts from snapshot '%s' of job '%s'", jobName, snapshot.snapshotName, snapshot.job)


def snapshotSource(directory: str, number: int) -> str:
    """Return the directory of stream source ``number``'s files in the snapshot at ``directory``."""
    return os.path.join(directory, f"{SOURCE_PREFIX}{number}")


def sourceMoves(
    before: Callable[[int], str], after: Callable[[int], str], sourceCount: int, fileUrl: Callable[[str], str]
) -> dict[str, str]:
    """Return the URL of each stream source's local directory ``before(number)``, as Spark's
    file source names it (``fileUrl``), mapped to the URL of its directory ``after(number)``."""
    return {fileUrl(before(number)): fileUrl(after(number)) for number in range(sourceCount)}


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


def movedSourceLog(log: str, moves: Mapping[str, str]) -> str:
    """Return Spark's file source log ``log`` (a version line, then a JSON entry a line, each
    naming the file it read by URL in its ``path``) with each file in a directory of ``moves``
    named in that directory's new URL; every other line as it is."""
    version, *entries = log.split("\n")
    return "\n".join([version, *(movedEntry(entry, moves) for entry in entries)])


def movedEntry(line: str, moves: Mapping[str, str]) -> str:
    """Return the log entry ``line`` naming its file in its directory's new URL, if ``moves`` moves it."""
    try:
        entry = json.loads(line)
    except ValueError:
        return line
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return line
    directory, _, name = entry["path"].rpartition("/")
    if directory not in moves:
        return line
    return json.dumps({**entry, "path": f"{moves[directory]}/{name}"}, separators=(",", ":"), ensure_ascii=False)
