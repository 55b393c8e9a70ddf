"""One run of a stream job: its Core DAG run once per micro-batch of a Spark Structured
Streaming query, each processor starting from the state it saved at the end of the previous
micro-batch, until the stream ends, the job is cancelled, or it stops for a suspension."""

import functools
import os
from collections.abc import Callable

from sparkjet.coredag.errors import JobError, StageName, UserFunctionError
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.runtime.cache import Cache
from sparkjet.coredag.runtime.files import makeDirectories
from sparkjet.coredag.runtime.lifecycle import JobPhase, Lifecycle
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint, temporaryCheckpoint
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot
from sparkjet.coredag.runtime.stream.micro_batch_loop import Assertions, MicroBatchLoop, StreamTarget
from sparkjet.coredag.runtime.stream.stream_dag import needsHeartbeat, streamSources, unpeeked

TRIGGER_MILLIS = 1000
"""How often a micro-batch starts while there is new input, unless ``SPARKJET_TRIGGER_MILLIS`` says."""

TRIGGER_VARIABLE = "SPARKJET_TRIGGER_MILLIS"

POLL_SECONDS = 0.25
"""How often the job's thread looks whether the query ended or the job was cancelled."""

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
    """Drives one run of a stream job: the Spark Structured Streaming query that reads its
    stream sources and hands each micro-batch to its ``MicroBatchLoop``, until its stream ends,
    the job is cancelled, or its ``lifecycle`` asks it to stop; ``publish`` gets the list sinks'
    items of each micro-batch as soon as it is done, ``assertions`` its assertion sinks'.

    With a ``checkpoint`` (a processing guarantee), the job starts from the snapshot of Spark's last
    committed micro-batch there and saves one after each micro-batch before Spark commits it;
    without one, the job's files live in a temporary directory (docs/internals/stream-state.md)."""

    def __init__(
        self, target: StreamTarget, lifecycle: Lifecycle, publish: Callable[[dict[str, list]], None],
        assertions: Assertions, homes: Cache, checkpoint: StreamCheckpoint | None = None,
        initialSnapshot: JobStateSnapshot | None = None,
    ) -> None:
        self._target, self._lifecycle, self._assertions = target, lifecycle, assertions
        self._checkpoint, self._initialSnapshot = checkpoint, initialSnapshot
        self._outputs = target.engine.outputDirectories(target.dag)
        sourceVertices = streamSources(target.dag)
        self._sources = [vertex.processorSupplier for vertex in sourceVertices]
        self._finite = all(target.physical.vertex(vertex.name).capabilities.finite for vertex in sourceVertices)
        self._trigger = {"availableNow": True} if self._finite else {"processingTime": f"{triggerMillis()} milliseconds"}
        """When Spark starts a micro-batch: at once while a finite stream has input, else every trigger interval."""

        def deliver(lists: dict) -> None:
            publish(assertions.listItems(lists))
            assertions.receive(lists)

        self._loop = MicroBatchLoop(target, self._outputs, deliver, [vertex.name for vertex in sourceVertices], homes)

    def run(self) -> JobMetrics:
        """Run the job to its end; return its figures over every micro-batch. A files sink's
        directory is claimed first; a failed job removes it if no micro-batch wrote to it."""
        target, loop = self._target, self._loop
        checkpoint = self._checkpoint or temporaryCheckpoint(target.jobName)
        feeders, ended = [], False
        try:
            for feeder in self._open(checkpoint):
                feeder.start()
                feeders.append(feeder)  # stopped below, whatever fails after it started
            query = target.engine.startQuery(
                self._rows(checkpoint), loop.onMicroBatch, checkpoint.queryLocation, target.jobName, self._trigger
            )
            self._lifecycle.started()
            self._awaitEnd(query, feeders)
            if self.suspended:
                return self.metrics()
            if self._finite:
                with loop.alone():
                    loop.run(None, -1, final=True)
                self._assertions.complete()
            ended = True
        except BaseException:
            with loop.alone():  # a micro-batch still running ends first, committed or rolled back
                for output in self._outputs.values():
                    output.abort()
            ended = target.control.cancelled  # cancelled: terminal, as in Jet; failed: kept to go on from
            raise
        finally:
            for feeder in feeders:
                feeder.stop()
            suspended = self.suspended
            loop.end(
                lambda: self._lifecycle.runStopped(suspended),
                checkpoint if ended or self._checkpoint is None else None,
            )
        return self.metrics()

    def exportSnapshot(self, name: str, cancelling: bool = False) -> JobStateSnapshot:
        """Export the state after the last micro-batch (committed first) as snapshot ``name``;
        ``cancelling``: then cancel the job, no micro-batch running after the export. A job
        that has not started its stream yet is waited for."""
        lifecycle = self._lifecycle
        lifecycle.awaitUntil(lambda: self._loop.opened and lifecycle.phase is not JobPhase.STARTING or self._loop.over)
        return self._loop.exportSnapshot(name, len(self._sources), self._lifecycle, cancelling)

    @property
    def suspended(self) -> bool:
        """Return whether the run stopped, or is stopping, for a suspension or a restart."""
        return self._loop.closed and not self._target.control.cancelled

    def claimedOutputs(self) -> set[str]:
        """Return the output directories this run claimed (a resumed run goes on writing there)."""
        return {output.directory for output in self._outputs.values()}

    def discardCheckpoint(self) -> None:
        """Remove the checkpoint a suspended run kept: the job was cancelled, as in Jet for good,
        and has no snapshot to export any more."""
        self._loop.discardCheckpoint()

    def metrics(self) -> JobMetrics:
        """Return the job's figures so far: items per vertex and stage, each vertex's watermark
        and late events, every micro-batch run."""
        return self._loop.metrics()

    def _open(self, checkpoint: StreamCheckpoint) -> list:
        """Claim the files sinks' directories, open the loop on ``checkpoint``; return the
        driver's threads, not started, that feed the sources built from user functions."""
        for output in self._outputs.values():
            output.claimOnce()
        self._loop.open(checkpoint, self._checkpoint is not None, self._initialSnapshot)
        for number in range(len(self._sources)):
            makeDirectories(checkpoint.sourceDirectory(number))
        return [
            feeder
            for number, source in enumerate(self._sources)
            if (feeder := source.feeder(self._target.jobName, checkpoint.sourceDirectory(number))) is not None
        ]

    def _rows(self, checkpoint: StreamCheckpoint):
        """Return the rows of every stream source (and the heartbeat's, where the job needs one)."""
        spark = self._target.engine.spark
        frames = [
            source.streamingRows(spark, checkpoint.sourceDirectory(number))
            for number, source in enumerate(self._sources)
        ]
        if not self._finite and needsHeartbeat(self._target.dag, self._target.physical):
            frames.append(self._heartbeat())
        return functools.reduce(lambda left, right: left.unionByName(right), frames)

    def _heartbeat(self):
        """Return a row a second, read by no source: Spark runs no micro-batch without new
        offsets, and these give it some, so watermarks and early results move on without input."""
        rate = self._target.engine.spark.readStream.format("rate").option("rowsPerSecond", 1).load()
        return rate.selectExpr(
            f"'{HEARTBEAT_SOURCE}' AS source", "CAST(NULL AS STRING) AS text",
            "CAST(NULL AS BIGINT) AS eventTime", "CAST(NULL AS BIGINT) AS sequence",
        )

    def _awaitEnd(self, query, feeders: list) -> None:
        """Wait until the query ends (or stop it once the job is cancelled, an eventual
        assertion timed out or a source's function failed); raise what failed it."""
        control, failure = self._target.control, None
        try:
            while query.isActive and not control.cancelled and failure is None:
                if self._lifecycle.phase.stopsRun:
                    self._loop.close()  # the micro-batch in progress ends first, whole
                    self._loop.awaitCommitted()
                    break
                self._awaitQuery(query)
                self._assertions.checkTimeouts()
                failure = self._loop.failure or next((feeder.failure for feeder in feeders if feeder.failure), None)
        finally:
            query.stop()
        if control.cancelled:
            raise control.cancellation()
        failure = failure or self._loop.failure
        if failure is not None:
            raise withItemOrigin(failure, [unpeeked(vertex) for vertex in streamSources(self._target.dag)])

    def _awaitQuery(self, query) -> None:
        """Wait a moment for the query to end; a failure of its own (not of a micro-batch) fails the job."""
        try:
            query.awaitTermination(POLL_SECONDS)
        except Exception as error:
            if self._loop.failure is None and not self._target.control.cancelled:
                raise JobError(f"Job '{self._target.jobName}': its streaming query failed: {error}") from error


