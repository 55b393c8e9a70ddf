"""Exported snapshots (Jet's ``Job.exportSnapshot`` and ``JobConfig.setInitialSnapshotName``):
a copy of a stream job's last committed snapshot, kept under a name until destroyed, from which a
new job starts, taking each vertex's state by its name. What is copied and what a new job
refuses: docs/guide/state-and-snapshots.md. Pure values and checks: the files of a snapshot are
laid out, copied and read by ``StreamCheckpoint`` (``exportTo``, ``seedFrom``, ``loadSnapshot``)."""

import json
import shutil
from collections.abc import Mapping

import attrs

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.runtime.stream.state_directory import exportedSnapshotDirectory
from sparkjet.coredag.runtime.stream.stream_dag import processorKind


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


def processorKinds(dag: DAG, vertexNames) -> dict[str, str]:
    """Return the kind of processor each of ``vertexNames`` runs in ``dag`` (see ``processorKind``)."""
    return {name: processorKind(dag.getVertex(name)) for name in vertexNames}


def newSnapshot(name: str, jobName: str, states: dict, batchId: int, dag: DAG, sourceCount: int) -> JobStateSnapshot:
    """Return the description of snapshot ``name`` of job ``jobName``'s ``states`` after
    micro-batch ``batchId``, taken now, its size not counted yet (its export counts it)."""
    stateful = [vertex for vertex, byIndex in states.items() if any(state.files for state in byIndex.values())]
    return JobStateSnapshot(
        name, jobName, wallClockMillis(), batchId, 0, processorKinds(dag, stateful), sourceCount,
        exportedSnapshotDirectory(name),
    )


def misfits(snapshot: JobStateSnapshot) -> list[str]:
    """Return the fields of ``snapshot``, as its description gave them, whose values are not of their type."""
    kinds, given = snapshot.processorKinds, attrs.asdict(snapshot, recurse=False)
    fits = {
        **{field: isinstance(given[field], str) for field in ("snapshotName", "job")},
        **{field: type(given[field]) is int for field in ("created", "batchId", "size", "sourceCount")},
        "processorKinds": isinstance(kinds, dict)
        and all(isinstance(item, str) for pair in kinds.items() for item in pair),
    }
    return [field for field, fitting in fits.items() if not fitting]


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
