"""One run of a stream job: its Core DAG run once per micro-batch of a Spark Structured
Streaming query, each processor starting from the state it saved at the end of the previous
micro-batch, until the stream ends, the job is cancelled, or it stops for a suspension."""

import contextlib
import enum
import functools
import os
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.errors import JobError, StageName, UserFunctionError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics, MicroBatchMetrics, MicroBatchSummary, SnapshotMetrics
from sparkjet.coredag.runtime.engine import Engine, JobControl, MicroBatch
from sparkjet.coredag.runtime.files import makeDirectories
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.processor_state import processorWatermarks, vertexWatermarks
from sparkjet.coredag.runtime.state_store import referencedFiles
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint, temporaryCheckpoint
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot, SnapshotError, newSnapshot
from sparkjet.coredag.runtime.stream.stream_dag import needsHeartbeat, staticVertices, streamSources, unpeeked
from sparkjet.coredag.runtime.stream.suspension import Suspension

TRIGGER_MILLIS = 1000
"""How often a micro-batch starts while there is new input, unless ``SPARKJET_TRIGGER_MILLIS`` says."""

TRIGGER_VARIABLE = "SPARKJET_TRIGGER_MILLIS"

POLL_SECONDS = 0.25
"""How often the job's thread looks whether the query ended or the job was cancelled."""

COMMIT_WAIT_SECONDS = 30
"""How long a suspended run waits for Spark to commit its last micro-batch before it stops."""

KEPT_MICRO_BATCHES = 100
"""How many of its latest micro-batches a run's figures keep one by one; those before are summed up."""

HEARTBEAT_SOURCE = "__heartbeat__"
"""The source name of the rows that make Spark run a micro-batch every trigger without new input."""


def triggerMillis() -> int:
    """Return how often a micro-batch starts: ``$SPARKJET_TRIGGER_MILLIS`` (the tests shorten it),
    else ``TRIGGER_MILLIS``."""
    configured = os.environ.get(TRIGGER_VARIABLE, str(TRIGGER_MILLIS))
    if not configured.isdigit() or int(configured) == 0:
        msg = f"{TRIGGER_VARIABLE} must be a whole number of milliseconds above 0, got {configured!r}"
        raise ValueError(msg)
    return int(configured)


class RunState(enum.Enum):
    """Where a run is: starting (a snapshot export waits), streaming, stopping for a suspension
    (no new micro-batch), suspended with its checkpoint kept, or ended for good (completed,
    failed or cancelled: nothing to export)."""

    STARTING = "starting"
    STREAMING = "streaming"
    STOPPING = "stopping"
    SUSPENDED = "suspended"
    ENDED = "ended"


class Assertions(Protocol):
    """What a run tells the job's assertion sinks (the client's ``JobAssertions``)."""

    def listItems(self, collected: dict) -> dict[str, list]: ...

    def receive(self, collected: dict) -> None: ...

    def checkTimeouts(self) -> None: ...

    def complete(self) -> None: ...


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


def withItemOrigin(error: BaseException, sources: list) -> BaseException:
    """Return ``error`` naming where its item came from, where a stream source can tell (a
    watched directory: the file and line a timestamp function failed on)."""
    if not isinstance(error, UserFunctionError):
        return error
    where = next((found for source in sources if (found := source.lineOf(error.itemRepr))), None)
    if where is None:
        return error
    stage = StageName(error.stageName, error.definedAt)
    return UserFunctionError(stage, f"{error.itemRepr} ({where})", error.__cause__, error.traceback, error.hint)


class StreamRun:
    """Runs a stream job's ``dag`` on a streaming query until its stream ends or the job is
    cancelled; ``publish`` gets the list sinks' items of each micro-batch as soon as it is done,
    ``assertions`` its assertion sinks'.

    With a ``checkpoint`` (a processing guarantee), the job starts from the snapshot of Spark's last
    committed micro-batch there and saves one after each micro-batch before Spark commits it;
    without one, the job's files live in a temporary directory (docs/internals/stream-state.md)."""

    def __init__(
        self, engine: Engine, dag: DAG, physical: PhysicalPlan, jobName: str, control: JobControl,
        publish: Callable[[dict[str, list]], None], assertions: Assertions,
        checkpoint: StreamCheckpoint | None = None, suspension: Suspension | None = None,
        initialSnapshot: JobStateSnapshot | None = None,
        processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE, homes: dict | None = None,
    ) -> None:
        self._engine, self._dag, self._physical = engine, dag, physical
        self._homes = {} if homes is None else homes
        """The home RDD of each vertex fed by a shuffle (see ``RddBuilder``): the job's, kept across its runs."""
        self._suspension = suspension or Suspension()
        self._microBatchRunning = threading.Lock()
        self._runState = RunState.STARTING
        self._runStateChanged = threading.Condition()
        self._jobName, self._control, self._publish = jobName, control, publish
        self._assertions, self._keptCheckpoint = assertions, checkpoint
        self._initialSnapshot, self._guarantee = initialSnapshot, processingGuarantee
        self._checkpoint: StreamCheckpoint | None = None
        self._lastBatch = -1
        self._lastSnapshot: SnapshotMetrics | None = None
        self._startedAt = time.perf_counter()
        self._lock = threading.Lock()
        self._microBatches: list[MicroBatchMetrics] = []
        self._earlierMicroBatches = MicroBatchSummary()
        self._processorStates: dict = {}
        self._outputs = engine.outputDirectories(dag)
        self._staticVertices, self._staticOutputs = staticVertices(dag), {}
        self._counts: Counter = Counter()
        self._failure: BaseException | None = None
        sourceVertices = streamSources(dag)
        self._sources = [vertex.processorSupplier for vertex in sourceVertices]
        self._sourceNames = [vertex.name for vertex in sourceVertices]
        self._finite = all(physical.vertex(name).capabilities.finite for name in self._sourceNames)

    def run(self) -> JobMetrics:
        """Run the job to its end; return its figures over every micro-batch. A files sink's
        directory is claimed first; a failed job removes it if no micro-batch wrote to it."""
        checkpoint = self._keptCheckpoint or temporaryCheckpoint(self._jobName)
        self._checkpoint, feeders, ended = checkpoint, [], False
        try:
            checkpoint.open(self._jobName)
            if self._initialSnapshot is not None and checkpoint.lastCommittedBatch() is None:
                checkpoint.seedFrom(self._initialSnapshot, self._jobName, self._engine.fileSourceUrl)
            self._processorStates = checkpoint.restoredStates()
            warnDroppedStates(self._jobName, self._processorStates, self._dag)
            self._lastBatch = _orDefault(checkpoint.lastCommittedBatch(), -1)
            for output in self._outputs.values():
                output.claimOnce()
            if self._keptCheckpoint is not None:
                checkpoint.recordClaims([output.directory for output in self._outputs.values()])
            feeders = self._startFeeders(checkpoint)
            query = self._startQuery(checkpoint)
            self._enter(RunState.STREAMING)
            self._awaitEnd(query, feeders)
            if self.suspended:
                return self.metrics()
            if self._finite:
                self._runMicroBatch(None, -1, final=True)
                self._assertions.complete()
            ended = True
        except BaseException:
            with self._microBatchRunning:  # a micro-batch still running ends first, committed or rolled back
                for output in self._outputs.values():
                    output.abort()
            ended = self._control.cancelled  # cancelled: terminal, as in Jet; failed: kept to go on from
            raise
        finally:
            for feeder in feeders:
                feeder.stop()
            self._engine.forgetKept(self._staticOutputs)
            with self._microBatchRunning:
                self._enter(RunState.SUSPENDED if self.suspended else RunState.ENDED)
                if ended or self._keptCheckpoint is None:
                    checkpoint.remove()
        return self.metrics()

    def exportSnapshot(self, name: str, cancelling: bool = False) -> JobStateSnapshot:
        """Export the state after the last micro-batch (committed first) as snapshot ``name``;
        ``cancelling``: then cancel the job, no micro-batch running after the export. A job
        that has not started its stream yet is waited for."""
        with self._runStateChanged:
            self._runStateChanged.wait_for(lambda: self._runState is not RunState.STARTING)
        with self._microBatchRunning:
            if self._runState is RunState.ENDED:
                raise SnapshotError(f"Job '{self._jobName}' has no snapshot to export: it is no longer running")
            if cancelling and self._runState is RunState.STREAMING:
                self._enter(RunState.STOPPING)
            self._awaitCommitted(self._lastBatch)
            states, batchId = self._processorStates, self._lastBatch
            snapshot = self._checkpoint.exportTo(
                newSnapshot(name, self._jobName, states, batchId, self._dag, len(self._sources)), states, self._dag,
                self._engine.fileSourceUrl,
            )
            if cancelling:
                self._control.cancel()
            return snapshot

    @property
    def suspended(self) -> bool:
        """Return whether the run stopped, or is stopping, for a suspension or a restart."""
        return self._runState in (RunState.STOPPING, RunState.SUSPENDED) and not self._control.cancelled

    def _enter(self, state: RunState) -> None:
        """Move the run to ``state`` and wake whoever waits for a change."""
        with self._runStateChanged:
            self._runState = state
            self._runStateChanged.notify_all()

    def claimedOutputs(self) -> set[str]:
        """Return the output directories this run claimed (a resumed run goes on writing there)."""
        return {output.directory for output in self._outputs.values()}

    def discardCheckpoint(self) -> None:
        """Remove the checkpoint a suspended run kept: the job was cancelled, as in Jet for good,
        and has no snapshot to export any more."""
        with self._microBatchRunning:
            self._enter(RunState.ENDED)
            if self._keptCheckpoint is not None:
                self._keptCheckpoint.remove()

    def metrics(self) -> JobMetrics:
        """Return the job's figures so far: items per vertex and stage, each vertex's watermark
        and late events, every micro-batch run."""
        with self._lock:
            return JobMetrics.of(
                self._jobName, time.perf_counter() - self._startedAt, self._dag, self._counts,
                self._physical.shuffledEdges(), vertexWatermarks(self._processorStates), tuple(self._microBatches),
                self._lastSnapshot, self._earlierMicroBatches, processorWatermarks(self._processorStates),
            )

    def _startFeeders(self, checkpoint: StreamCheckpoint) -> list:
        """Start the driver's threads feeding the sources built from user functions."""
        for number in range(len(self._sources)):
            makeDirectories(checkpoint.sourceDirectory(number))
        feeders = [
            feeder
            for number, source in enumerate(self._sources)
            if (feeder := source.feeder(self._jobName, checkpoint.sourceDirectory(number))) is not None
        ]
        for feeder in feeders:
            feeder.start()
        return feeders

    def _startQuery(self, checkpoint: StreamCheckpoint):
        """Start the query reading every stream source, a micro-batch at a time."""
        frames = [
            source.streamingRows(self._engine.spark, checkpoint.sourceDirectory(number))
            for number, source in enumerate(self._sources)
        ]
        if not self._finite and needsHeartbeat(self._dag, self._physical):
            frames.append(self._heartbeat())
        rows = functools.reduce(lambda left, right: left.unionByName(right), frames)
        writer = rows.writeStream.foreachBatch(self._onMicroBatch).option(
            "checkpointLocation", checkpoint.queryLocation
        ).queryName(self._jobName)
        trigger = {"availableNow": True} if self._finite else {"processingTime": f"{triggerMillis()} milliseconds"}
        return writer.trigger(**trigger).start()

    def _heartbeat(self):
        """Return a row a second, read by no source: Spark runs no micro-batch without new
        offsets, and these give it some, so watermarks and early results move on without input."""
        rate = self._engine.spark.readStream.format("rate").option("rowsPerSecond", 1).load()
        return rate.selectExpr(
            f"'{HEARTBEAT_SOURCE}' AS source", "CAST(NULL AS STRING) AS text",
            "CAST(NULL AS BIGINT) AS eventTime", "CAST(NULL AS BIGINT) AS sequence",
        )

    def _onMicroBatch(self, rows, batchId: int) -> None:
        """Run the DAG over one micro-batch; a failure is kept, to fail the job with it, and ends
        the query. Once the run stops for a suspension, a micro-batch is refused uncommitted
        (Spark runs it again when the job goes on)."""
        with self._microBatchRunning:
            if self._runState is not RunState.STREAMING:
                raise JobError(f"Job '{self._jobName}' is suspended: micro-batch {batchId} waits for its resume")
            try:
                self._runMicroBatch(rows, batchId)
            except BaseException as error:
                sources = [unpeeked(vertex) for vertex in streamSources(self._dag)]
                self._failure = self._failure or withItemOrigin(error, sources)
                self._removeFailedStateFiles()
                raise

    def _removeFailedStateFiles(self) -> None:
        """Remove the state files the failed micro-batch's tasks wrote, once they ended (on a full
        disk, its space goes back now): a restart goes on from those of the last committed
        micro-batch, which stay, with those of the last micro-batch run. A temporary checkpoint
        goes whole with the job."""
        if self._keptCheckpoint is None:
            return
        self._engine.awaitTasksEnded(self._control)
        with contextlib.suppress(JobError, OSError):  # what is left stays; the micro-batch's failure is the job's
            committed = self._keptCheckpoint.restoredStates()
            self._keptCheckpoint.removeStateFiles(keeping=referencedFiles(self._processorStates) | referencedFiles(committed))

    def _runMicroBatch(self, rows, batchId: int, final: bool = False) -> None:
        """Run the DAG over micro-batch ``batchId`` (its files named after it, so a micro-batch
        run again after a restart writes the same files again); save the states it ends with."""
        named = self._lastBatch + 1 if final else batchId
        for output in self._outputs.values():
            output.startMicroBatch(named)
        started = time.perf_counter()
        outcome = self._engine.runMicroBatch(
            self._dag, self._physical, self._jobName, self._control,
            MicroBatch(
                batchId, rows, self._processorStates, self._checkpoint.stateStore(batchId), self._outputs, final,
                self._staticVertices, self._staticOutputs, self._guarantee, self._homes,
            ),
        )
        snapshot = None
        if not final and self._keptCheckpoint is not None:
            snapshot = self._keptCheckpoint.saveStates(batchId, outcome.states)
        if not final:
            kept = referencedFiles(outcome.states) | referencedFiles(self._processorStates)
            self._checkpoint.removeStateFiles(keeping=kept)
        for output in self._outputs.values():
            output.keepMicroBatch()
        self._lastBatch = max(self._lastBatch, batchId)
        read = sum(outcome.counts["itemsOut", name] for name in self._sourceNames)
        with self._lock:
            if not final:  # the final run completes its processors: they save nothing
                self._processorStates = outcome.states
            for key, count in outcome.counts.items():  # a vertex's processors are one run's, not their sum
                self._counts[key] = count if key[0] == "processors" else self._counts[key] + count
            self._microBatches.append(MicroBatchMetrics(batchId, time.perf_counter() - started, read))
            if len(self._microBatches) > KEPT_MICRO_BATCHES:
                self._earlierMicroBatches = self._earlierMicroBatches.including(self._microBatches.pop(0))
            self._lastSnapshot = snapshot or self._lastSnapshot
        self._publish(self._assertions.listItems(outcome.lists))
        self._assertions.receive(outcome.lists)

    def _awaitEnd(self, query, feeders: list) -> None:
        """Wait until the query ends (or stop it once the job is cancelled, an eventual
        assertion timed out or a source's function failed); raise what failed it."""
        try:
            while query.isActive and not self._control.cancelled and self._failure is None:
                if self._suspension.stopsRun():
                    with self._microBatchRunning:  # the micro-batch in progress ends first, whole
                        self._enter(RunState.STOPPING)
                    self._awaitCommitted(self._lastBatch)
                    break
                self._awaitQuery(query)
                self._assertions.checkTimeouts()
                self._failure = self._failure or next((feeder.failure for feeder in feeders if feeder.failure), None)
        finally:
            query.stop()
        if self._control.cancelled:
            raise self._control.cancellation()
        if self._failure is not None:
            raise self._failure

    def _awaitCommitted(self, batchId: int) -> None:
        """Wait until Spark committed micro-batch ``batchId`` (it does once the batch's function
        returned): a run stopped before that would run the batch again, its list items twice."""
        deadline = time.monotonic() + COMMIT_WAIT_SECONDS
        while batchId >= 0 and _orDefault(self._checkpoint.lastCommittedBatch(), -1) < batchId:
            if time.monotonic() > deadline:
                return
            time.sleep(POLL_SECONDS / 5)

    def _awaitQuery(self, query) -> None:
        """Wait a moment for the query to end; a failure of its own (not of a micro-batch) fails the job."""
        try:
            query.awaitTermination(POLL_SECONDS)
        except Exception as error:
            if self._failure is None and not self._control.cancelled:
                raise JobError(f"Job '{self._jobName}': its streaming query failed: {error}") from error


def _orDefault(value: int | None, default: int) -> int:
    return default if value is None else value


