"""What a stream job's run does per micro-batch: its Core DAG run through the engine over the
rows Spark read, each processor starting from the state it saved at the end of the previous
micro-batch, and the states it ends with saved as the snapshot Spark commits with it."""

import contextlib
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Protocol

import attrs

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.errors import JobError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics, MicroBatchMetrics, MicroBatchSummary, SnapshotMetrics
from sparkjet.coredag.runtime.cache import Cache, StreamCaches
from sparkjet.coredag.runtime.engine import Engine, JobControl, MicroBatch
from sparkjet.coredag.runtime.lifecycle import Lifecycle
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.processor_state import processorWatermarks, vertexWatermarks
from sparkjet.coredag.runtime.state_store import referencedFiles
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot, SnapshotError, newSnapshot
from sparkjet.coredag.runtime.stream.stream_dag import staticVertices

POLL_SECONDS = 0.05
"""How often a stopping run looks whether Spark committed its last micro-batch."""

COMMIT_WAIT_SECONDS = 30
"""How long a suspended run waits for Spark to commit its last micro-batch before it stops."""

KEPT_MICRO_BATCHES = 100
"""How many of its latest micro-batches a run's figures keep one by one; those before are summed up."""


class Assertions(Protocol):
    """What a run tells the job's assertion sinks (the client's ``JobAssertions``)."""

    def listItems(self, collected: dict) -> dict[str, list]: ...

    def receive(self, collected: dict) -> None: ...

    def checkTimeouts(self) -> None: ...

    def complete(self) -> None: ...


@attrs.frozen
class StreamTarget:
    """What a stream job's run runs: its ``dag`` (as this run claims its files sinks' directories)
    and ``physical`` plan on ``engine``, under ``jobName``, cancelled through ``control``."""

    engine: Engine
    dag: DAG
    physical: PhysicalPlan
    jobName: str
    control: JobControl
    processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE


class RunFigures:
    """A run's figures as its micro-batches end: items per vertex, every micro-batch (the latest
    ``KEPT_MICRO_BATCHES`` one by one), the last snapshot; read from any thread."""

    def __init__(self, sourceNames: list[str]) -> None:
        self._sourceNames = sourceNames
        self._startedAt = time.perf_counter()
        self._lock = threading.Lock()
        self._counts: Counter = Counter()
        self._microBatches: list[MicroBatchMetrics] = []
        self._earlier = MicroBatchSummary()
        self._lastSnapshot: SnapshotMetrics | None = None

    def add(self, batchId: int, seconds: float, counts: Counter, snapshot: SnapshotMetrics | None) -> None:
        """Count micro-batch ``batchId``, which ran ``seconds`` with ``counts``."""
        read = sum(counts["itemsOut", name] for name in self._sourceNames)
        with self._lock:
            for key, count in counts.items():  # a vertex's processors are one run's, not their sum
                self._counts[key] = count if key[0] == "processors" else self._counts[key] + count
            self._microBatches.append(MicroBatchMetrics(batchId, seconds, read))
            if len(self._microBatches) > KEPT_MICRO_BATCHES:
                self._earlier = self._earlier.including(self._microBatches.pop(0))
            self._lastSnapshot = snapshot or self._lastSnapshot

    def metrics(self, target: StreamTarget, states: dict) -> JobMetrics:
        """Return the run's figures so far, its processors' watermarks those of ``states``."""
        with self._lock:
            return JobMetrics.of(
                target.jobName, time.perf_counter() - self._startedAt, target.dag, self._counts,
                target.physical.shuffledEdges(), vertexWatermarks(states), tuple(self._microBatches),
                self._lastSnapshot, self._earlier, processorWatermarks(states),
            )


class MicroBatchLoop:
    """Runs ``target``'s DAG once per micro-batch from the checkpoint it is opened on, one
    micro-batch at a time; ``deliver`` gets the list sinks' items of each. A checkpoint it
    ``keeps`` (a processing guarantee) gets each micro-batch's snapshot before Spark commits it;
    a temporary one goes with the run. The outputs of the vertices no stream reaches are its
    cache, closed as the run ends; ``homes`` is the job's."""

    def __init__(
        self, target: StreamTarget, outputs: dict, deliver: Callable[[dict], None],
        sourceNames: list[str], homes: Cache,
    ) -> None:
        self._target, self._outputs, self._deliver = target, outputs, deliver
        self._caches = StreamCaches(Cache(), homes)
        self._staticVertices = staticVertices(target.dag)
        self._figures = RunFigures(sourceNames)
        self._checkpoint: StreamCheckpoint | None = None
        self._keeps = False
        self._states: dict = {}
        self._lastBatch = -1
        self._running = threading.Lock()
        """Held while a micro-batch runs, and by whatever must not interleave with one."""
        self._closed = False
        """Whether the run stops: no micro-batch starts any more."""
        self._over = False
        self.failure: BaseException | None = None
        """What failed a micro-batch the query offered, which fails the job."""

    @property
    def opened(self) -> bool:
        """Return whether the loop has its checkpoint and the states it starts from."""
        return self._checkpoint is not None

    @property
    def closed(self) -> bool:
        """Return whether the loop refuses new micro-batches (the run stops)."""
        return self._closed

    @property
    def over(self) -> bool:
        """Return whether the run has stopped, for good or for a request."""
        return self._over

    @property
    def lastBatch(self) -> int:
        """Return the id of the last micro-batch run (-1 before the first)."""
        return self._lastBatch

    def open(self, checkpoint: StreamCheckpoint, keeps: bool, initialSnapshot: JobStateSnapshot | None) -> None:
        """Start from ``checkpoint`` (seeded from ``initialSnapshot`` while it has no committed
        micro-batch): after its last committed micro-batch, with the states saved there, warning
        of those of vertices the job no longer has, which it drops. One it ``keeps`` records the
        outputs' directories, claimed by now (see ``StreamCheckpoint.openRun``)."""
        target = self._target
        claimed = [output.directory for output in self._outputs.values()] if keeps else None
        start = checkpoint.openRun(target.jobName, initialSnapshot, claimed)
        warnDroppedStates(target.jobName, start.states, target.dag)
        self._checkpoint, self._keeps, self._states = checkpoint, keeps, start.states
        self._lastBatch = _orDefault(start.lastCommittedBatch, -1)

    def run(self, rows, batchId: int, final: bool = False) -> None:
        """Run the DAG over micro-batch ``batchId`` (its files named after it, so a micro-batch
        run again after a restart writes the same files again); save the states it ends with."""
        target = self._target
        named = self._lastBatch + 1 if final else batchId
        for output in self._outputs.values():
            output.startMicroBatch(named)
        started = time.perf_counter()
        outcome = target.engine.runMicroBatch(
            target.dag, target.physical, target.jobName, target.control,
            MicroBatch(
                batchId, rows, self._states, self._checkpoint.stateStore(batchId), self._outputs, final,
                self._staticVertices, target.processingGuarantee,
            ),
            self._caches,
        )
        snapshot = None
        if not final and self._keeps:
            snapshot = self._checkpoint.saveStates(batchId, outcome.states)
        if not final:
            self._checkpoint.removeStateFiles(keeping=referencedFiles(outcome.states) | referencedFiles(self._states))
            self._states = outcome.states  # the final run completes its processors: they save nothing
        for output in self._outputs.values():
            output.keepMicroBatch()
        self._lastBatch = max(self._lastBatch, batchId)
        self._figures.add(batchId, time.perf_counter() - started, outcome.counts, snapshot)
        self._deliver(outcome.lists)

    @contextlib.contextmanager
    def alone(self):
        """Hold the loop: a micro-batch in progress ends first, and none starts within the block."""
        with self._running:
            yield

    def onMicroBatch(self, rows, batchId: int) -> None:
        """Run micro-batch ``batchId`` the query offers, the loop held (see ``alone``); once the
        loop closed, refuse it uncommitted: Spark runs it again when the job goes on. A failure
        is kept (``failure``), to fail the job with, and ends the query."""
        with self._running:
            if self._closed:
                raise JobError(f"Job '{self._target.jobName}' is suspended: micro-batch {batchId} waits for its resume")
            try:
                self.run(rows, batchId)
            except BaseException as error:
                self.failure = self.failure or error
                self._removeFailedStateFiles()
                raise

    def close(self) -> None:
        """Refuse new micro-batches, once the one in progress ended, whole."""
        with self._running:
            self._closed = True

    def _removeFailedStateFiles(self) -> None:
        """Remove the state files a failed micro-batch's tasks wrote, once they ended (on a full
        disk, its space goes back now): a restart goes on from those of the last committed
        micro-batch, which stay, with those of the last micro-batch run. A temporary checkpoint
        goes whole with the job."""
        if not self._keeps:
            return
        self._target.engine.awaitTasksEnded(self._target.control)
        with contextlib.suppress(JobError, OSError):  # what is left stays; the micro-batch's failure is the job's
            committed = self._checkpoint.restoredStates()
            self._checkpoint.removeStateFiles(keeping=referencedFiles(self._states) | referencedFiles(committed))

    def awaitCommitted(self) -> None:
        """Wait until Spark committed the last micro-batch run (it does once the batch's function
        returned): a run stopped before that would run the batch again, its list items twice."""
        deadline = time.monotonic() + COMMIT_WAIT_SECONDS
        while self._lastBatch >= 0 and _orDefault(self._checkpoint.lastCommittedBatch(), -1) < self._lastBatch:
            if time.monotonic() > deadline:
                return
            time.sleep(POLL_SECONDS)

    def exportSnapshot(self, name: str, sourceCount: int, lifecycle: Lifecycle, cancelling: bool) -> JobStateSnapshot:
        """Export the state after the last micro-batch (committed first) as snapshot ``name``;
        ``cancelling``: then cancel the job, no micro-batch running after the export."""
        target = self._target
        with self._running:
            if lifecycle.phase.ended or not self.opened:
                raise SnapshotError(f"Job '{target.jobName}' has no snapshot to export: it is no longer running")
            if cancelling:
                self._closed = True
            self.awaitCommitted()
            states = self._states
            snapshot = self._checkpoint.exportTo(
                newSnapshot(name, target.jobName, states, self._lastBatch, target.dag, sourceCount), states, target.dag
            )
            if cancelling:
                target.control.cancel()
            return snapshot

    def end(self, stopped: Callable[[], None], checkpoint: StreamCheckpoint | None = None) -> None:
        """End the run, no micro-batch running: release its cache, tell ``stopped()``, and remove
        ``checkpoint`` if given (the run's, when nothing is to go on from it)."""
        self._caches.staticOutputs.close()
        with self._running:
            self._over = True
            stopped()
            if checkpoint is not None:
                checkpoint.remove()

    def discardCheckpoint(self) -> None:
        """Remove the checkpoint a suspended run kept: the job was cancelled, as in Jet for good."""
        with self._running:
            if self._checkpoint is not None and self._keeps:
                self._checkpoint.remove()

    def metrics(self) -> JobMetrics:
        """Return the run's figures so far: items per vertex and stage, each vertex's watermark
        and late events, every micro-batch run."""
        return self._figures.metrics(self._target, self._states)


def warnDroppedStates(jobName: str, states: dict, dag: DAG) -> None:
    """Warn of the vertices whose state a restart drops: saved under a name the job no longer has
    (a stage renamed starts empty)."""
    names = {vertex.name for vertex in dag}
    dropped = sorted(
        name for name, byIndex in states.items()
        if name not in names and any(state.files for state in byIndex.values())
    )
    if dropped:
        warnings.warn(
            f"Job '{jobName}' goes on from its checkpoint without the state of {', '.join(map(repr, dropped))}: this "
            "job has no vertex of that name, so a stage renamed from it starts empty; name it as before (setName) "
            "to keep its state",
            stacklevel=2,
        )


def _orDefault(value: int | None, default: int) -> int:
    return default if value is None else value
