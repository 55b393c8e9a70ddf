"""A stream job on the driver: checked and prepared before it runs (what it starts from), then
run a ``StreamRun`` at a time: one until the job ends, a new one after each resume or restart,
as its ``Lifecycle`` says; ``Jet.shutdown()`` ends it after its last snapshot, its checkpoint kept."""

import warnings
from collections.abc import Callable
from typing import Protocol

import attrs

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.errors import JobError, StoppedByShutdown
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.processors.sinks import FilesSinkP
from sparkjet.coredag.runtime.cache import Cache
from sparkjet.coredag.runtime.engine import Engine, JobControl
from sparkjet.coredag.runtime.lifecycle import JobPhase, Lifecycle
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.files import withoutPassword
from sparkjet.coredag.runtime.permissions import checkPrivate
from sparkjet.coredag.runtime.stream.checkpoint import CheckpointLock, StreamCheckpoint, loadSnapshot
from sparkjet.coredag.runtime.stream.exported_snapshot import (
    JobStateSnapshot,
    SnapshotError,
    checkCompatible,
    checkShape,
    processorKinds,
)
from sparkjet.coredag.runtime.stream.stream_dag import (
    checkReplayable,
    checkStreamSinks,
    notExactlyOnce,
    resumingOutputs,
    streamSources,
    unpeeked,
)
from sparkjet.coredag.runtime.stream.micro_batch_loop import StreamTarget
from sparkjet.coredag.runtime.stream.stream_run import Assertions, StreamRun


@attrs.frozen
class StreamJobStart:
    """What a stream job starts from: its ``dag`` (files sinks going on in the directories its
    earlier runs claimed), its ``checkpoint`` (None without a processing guarantee) and the
    exported snapshot it starts from, if any."""

    dag: DAG
    checkpoint: StreamCheckpoint | None
    initialSnapshot: JobStateSnapshot | None
    lock: CheckpointLock | None = None
    """The job's hold on its checkpoint, released when the job ends."""
    processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE
    """The job's guarantee, which its processors' contexts give."""

    def release(self) -> None:
        """Let go of the checkpoint: the job ended, or does not run after all."""
        if self.lock is not None:
            self.lock.release()


class StreamConfig(Protocol):
    """What a stream job reads of its client's ``JobConfig`` when it is submitted."""

    def getProcessingGuarantee(self) -> ProcessingGuarantee: ...

    def checkpointLocation(self, jobName: str) -> str: ...

    def getInitialSnapshotName(self) -> str | None: ...


def streamJobStart(jobName: str, dag: DAG, config: StreamConfig) -> StreamJobStart:
    """Check stream job ``jobName`` before it runs (warning, when it is exactly once, of its
    sinks that are not) and find what it starts from, as ``config`` says: its initial snapshot
    and, with a guarantee, its checkpoint, held from now on (see ``StreamJobStart.release``)."""
    processingGuarantee = config.getProcessingGuarantee()
    location = None if processingGuarantee is ProcessingGuarantee.NONE else config.checkpointLocation(jobName)
    initialSnapshotName = config.getInitialSnapshotName()
    if processingGuarantee is ProcessingGuarantee.EXACTLY_ONCE:
        warnNotExactlyOnce(jobName, notExactlyOnce(dag))
    checkStreamSinks(dag)
    claimed: set[str] = set()
    initial = None
    if initialSnapshotName is not None:
        initial = startingSnapshot(initialSnapshotName, jobName, dag)
        claimed = StreamCheckpoint.ofSnapshot(initial).claimedOutputs()
    checkpoint = lock = None
    if location is not None:
        checkReplayable(dag, jobName)
        checkpoint = StreamCheckpoint(location)
        lock = checkpoint.open(jobName).lock(jobName)
        try:
            checkRestart(checkpoint, jobName, dag)
            claimed |= checkpoint.claimedOutputs()
        except BaseException:  # refused: the checkpoint is let go now, not when its error is
            lock.release()
            raise
    return StreamJobStart(resumingOutputs(dag, claimed), checkpoint, initial, lock, processingGuarantee)


def warnNotExactlyOnce(jobName: str, sinks: list[str]) -> None:
    """Say, when an exactly-once job is submitted, which of its sinks cannot be exactly once
    (the warning names the line of ``Jet.newJob`` that submitted it)."""
    if sinks:
        warnings.warn(
            f"Job '{jobName}' is EXACTLY_ONCE, but its sink(s) {', '.join(sinks)} may repeat the items of a "
            "micro-batch run again after a restart (a logger logs them again; a sink of your own may do "
            "anything): only its list, files, JSON and noop sinks are exactly once",
            stacklevel=4,
        )


def checkRestart(checkpoint: StreamCheckpoint, jobName: str, dag: DAG) -> None:
    """Refuse to go on from ``checkpoint`` with a job its state does not fit (other stream
    sources, a vertex of the same name running another processor), or from one whose commit log
    was cut or whose files Spark reads are broken; then note what this job runs, for its own restarts."""
    checkpoint.checkQueryLog()
    checkpoint.checkCommitLog()
    recorded = checkpoint.recordedShape()
    sourceCount = len(streamSources(dag))
    if recorded is not None:
        starting = f"Job '{jobName}' cannot go on from its checkpoint '{checkpoint.location}'"
        checkShape(recorded["processorKinds"], recorded["sourceCount"], dag, sourceCount, starting, CheckpointError)
    checkpoint.recordShape(processorKinds(dag, [vertex.name for vertex in dag]), sourceCount)


def startingSnapshot(name: str, jobName: str, dag: DAG) -> JobStateSnapshot:
    """Return the exported snapshot ``name`` job ``jobName`` starts from, checked to fit its
    ``dag`` and to be whole (its files as a restart checks a checkpoint's); the state of
    vertices it no longer has is dropped with a warning."""
    snapshot = loadSnapshot(name)
    checkPrivate(
        snapshot.directory, lambda reason: f"Job '{jobName}' cannot start from snapshot '{name}': {reason}", SnapshotError
    )
    files = StreamCheckpoint.ofSnapshot(snapshot)
    files.checkQueryLog()
    files.restoredStates()
    dropped = checkCompatible(snapshot, jobName, dag, len(streamSources(dag)))
    if dropped:
        warnings.warn(
            f"Job '{jobName}' starts from snapshot '{name}' without the state of {', '.join(map(repr, dropped))}: "
            "this job has no vertex of that name",
            stacklevel=4,
        )
    return snapshot


def preparedStreamJob(
    engine: Engine, jobName: str, dag: DAG, config: StreamConfig, control: JobControl,
    publish: Callable[[dict[str, list]], None], assertionsOf: Callable[[DAG], Assertions],
) -> "StreamJob":
    """Return stream job ``jobName`` ready to run: checked and started as ``config`` says (see
    ``streamJobStart``), its ``dag`` preflighted and its physical plan fixed on ``engine``; a job
    that cannot start lets go of its checkpoint."""
    start = streamJobStart(jobName, dag, config)
    try:
        preflighted = preflightDag(start.dag)
        physical = engine.physicalPlan(preflighted)
        return StreamJob(engine, start, preflighted, physical, jobName, control, publish, assertionsOf(preflighted))
    except BaseException:
        start.release()
        raise


class StreamJob:
    """A stream job's runs: one until the job ends, a new one after each resume or restart,
    from the checkpoint the last one kept (without a guarantee, from the start, as in Jet):
    ``start`` is what it starts from (its plan shows that DAG), ``dag`` runs as ``physical`` says."""

    def __init__(
        self, engine: Engine, start: StreamJobStart, dag: DAG, physical: PhysicalPlan, jobName: str,
        control: JobControl, publish: Callable[[dict[str, list]], None], assertions: Assertions,
    ) -> None:
        self.start, self.physical = start, physical
        self.lifecycle = Lifecycle(jobName)
        control.whenCancelled(self.lifecycle.cancelled)
        self._control, self._engine, self._jobName = control, engine, jobName
        self._cancelledAfter: float | None = None
        """How long a shutdown waited for the micro-batch in progress before it cancelled its Spark jobs."""
        self._filesSinks = [] if start.checkpoint is not None else [
            vertex.name for vertex in start.dag if isinstance(unpeeked(vertex), FilesSinkP)
        ]

        def newRun(claimed: set[str]) -> StreamRun:
            target = StreamTarget(
                engine, resumingOutputs(dag, claimed), physical, jobName, control, start.processingGuarantee
            )
            return StreamRun(
                target, self.lifecycle, publish, assertions, self._homes, start.checkpoint, start.initialSnapshot
            )

        self._homes = Cache()
        """Where each shuffled vertex's partitions ran, kept across runs, so a resumed run's tasks go
        back to the processors the workers kept (see ``RddBuilder``); closed as the job ends."""
        self._newRun = newRun
        self._current = newRun(set())

    def run(self) -> JobMetrics:
        """Run one run after the other until the job ends; between a suspension and a resume,
        wait. Return the last run's figures. The checkpoint is the job's until then; a shutdown
        ends it with StoppedByShutdown, its checkpoint kept."""
        try:
            while True:
                try:
                    metrics = self._current.run()
                except Exception:  # a micro-batch whose Spark jobs a shutdown cancelled: the job stops all the same
                    if self._cancelledAfter is None or self._control.cancelled:
                        raise
                    raise StoppedByShutdown(self._stoppedMessage(self._cancelledAfter)) from None
                if self._control.cancelled:  # a cancel that came as the run stopped ends the job all the same
                    self._current.discardCheckpoint()
                    raise self._control.cancellation()
                if not self._current.suspended:
                    break
                if not self.lifecycle.awaitGoOn():
                    if not self._control.cancelled:
                        raise StoppedByShutdown(self._stoppedMessage())
                    self._current.discardCheckpoint()
                    raise self._control.cancellation()
                self._current = self._newRun(self._current.claimedOutputs())
        except StoppedByShutdown:
            self.lifecycle.end(JobPhase.NOT_RUNNING)
            raise
        except BaseException:
            self.lifecycle.end(JobPhase.FAILED)
            raise
        finally:
            self._homes.close()
            self.start.release()
        self.lifecycle.end(JobPhase.COMPLETED)
        return metrics

    def shutDown(self) -> None:
        """Stop the job after its micro-batch in progress, its states saved and committed, and
        end it (a suspended job ends at once), keeping its checkpoint."""
        self.lifecycle.shutDown()

    def cancelMicroBatch(self, waited: float) -> None:
        """Cancel the Spark jobs of the micro-batch a shutdown waited ``waited`` seconds for: it
        is not committed (its files are removed), and runs again when the job goes on."""
        self._cancelledAfter = waited
        self._engine.cancelRunning(self._control)

    def _stoppedMessage(self, cancelledAfter: float | None = None) -> str:
        """Return what the job says when a shutdown ended it: where it goes on from, and how (and
        that its micro-batch in progress was cancelled after ``cancelledAfter`` seconds)."""
        cancelled = "" if cancelledAfter is None else (
            f" (its micro-batch in progress did not end within {cancelledAfter:g} s: its Spark jobs were "
            "cancelled, and it runs again then)"
        )
        checkpoint = self.start.checkpoint
        if checkpoint is None:
            return (
                f"Job '{self._jobName}' was stopped by Jet.shutdown(); without a processing guarantee it keeps no "
                f"snapshot: submitted again, it starts from the start of its sources, its state empty{cancelled}"
            )
        committed = checkpoint.lastCommittedBatch()
        where = "before its first micro-batch" if committed is None else f"after micro-batch {committed}"
        return (
            f"Job '{self._jobName}' was stopped by Jet.shutdown() {where}, its snapshot committed in its checkpoint "
            f"'{withoutPassword(checkpoint.location)}': submit it again with the same name and checkpoint "
            f"location to go on from there{cancelled}"
        )

    def checkStartingOver(self, jobName: str, method: str) -> None:
        """Refuse to stop a job without a guarantee, to start it over from the start of its
        sources, where it has a files sink: its new run would number its micro-batches from 0
        again and write their files over those the first run committed."""
        if self._filesSinks:
            raise JobError(
                f"Job '{jobName}': cannot {method}() it: without a processing guarantee it starts over from the "
                f"start of its sources, and its files sink(s) {', '.join(map(repr, self._filesSinks))} would write "
                "over the files its first micro-batches committed; submit it with JobConfig()"
                ".setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE) to go on from its snapshot instead"
            )

    def metrics(self) -> JobMetrics:
        """Return the current run's figures."""
        return self._current.metrics()

    def exportSnapshot(self, name: str, cancelling: bool = False) -> JobStateSnapshot:
        """Export the current run's state as snapshot ``name`` (see ``StreamRun.exportSnapshot``)."""
        return self._current.exportSnapshot(name, cancelling)
