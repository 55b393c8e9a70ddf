"""A stream job on the driver: checked and prepared before it runs (what it starts from), then
run a ``StreamRun`` at a time: one until the job ends, a new one after each resume or restart."""

import warnings
from collections.abc import Callable

import attrs

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.processors.sources import isHadoopUrl
from sparkjet.coredag.runtime.execution import JobControl
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot, checkCompatible, loadSnapshot
from sparkjet.coredag.runtime.stream.stream_dag import checkReplayable, checkStreamSinks, resumingOutputs, streamSources
from sparkjet.coredag.runtime.stream.stream_run import Assertions, StreamRun
from sparkjet.coredag.runtime.stream.suspension import Suspension


@attrs.frozen
class StreamStart:
    """What a stream job starts from: its ``dag`` (files sinks going on in the directories its
    earlier runs claimed), its ``checkpoint`` (None without a processing guarantee) and the
    exported snapshot it starts from, if any."""

    dag: DAG
    checkpoint: StreamCheckpoint | None
    initialSnapshot: JobStateSnapshot | None


def streamStart(
    jobName: str, dag: DAG, checkpointLocation: str | None, initialSnapshotName: str | None,
    startSession: Callable[[], object],
) -> StreamStart:
    """Check stream job ``jobName`` before it runs and find what it starts from: the exported
    snapshot ``initialSnapshotName`` and, with a guarantee, its checkpoint at
    ``checkpointLocation`` (a Hadoop URL is reached through the session ``startSession`` starts)."""
    checkStreamSinks(dag)
    claimed: set[str] = set()
    initial = None
    if initialSnapshotName is not None:
        initial = startingSnapshot(initialSnapshotName, jobName, dag)
        claimed = StreamCheckpoint(initial.directory).claimedOutputs()
    checkpoint = None
    if checkpointLocation is not None:
        checkReplayable(dag, jobName)
        checkpoint = StreamCheckpoint(checkpointLocation)
        if isHadoopUrl(checkpoint.location):
            startSession()
        claimed |= checkpoint.open(jobName).claimedOutputs()
    return StreamStart(resumingOutputs(dag, claimed), checkpoint, initial)


def startingSnapshot(name: str, jobName: str, dag: DAG) -> JobStateSnapshot:
    """Return the exported snapshot ``name`` job ``jobName`` starts from, checked to fit its
    ``dag``; the state of vertices it no longer has is dropped with a warning."""
    snapshot = loadSnapshot(name)
    dropped = checkCompatible(snapshot, jobName, dag, len(streamSources(dag)))
    if dropped:
        warnings.warn(
            f"Job '{jobName}' starts from snapshot '{name}' without the state of {', '.join(map(repr, dropped))}: "
            "this job has no vertex of that name",
            stacklevel=4,
        )
    return snapshot


class StreamJob:
    """A stream job's runs: one until the job ends, a new one after each resume or restart,
    from the checkpoint the last one kept (without a guarantee, from the start, as in Jet)."""

    def __init__(
        self, spark, start: StreamStart, physical: PhysicalPlan, jobName: str, control: JobControl,
        publish: Callable[[dict[str, list]], None], assertions: Assertions,
    ) -> None:
        self.suspension = Suspension()
        self._control = control

        def newRun(claimed: set[str]) -> StreamRun:
            return StreamRun(
                spark, resumingOutputs(start.dag, claimed), physical, jobName, control, publish, assertions,
                start.checkpoint, self.suspension, start.initialSnapshot,
            )

        self._newRun = newRun
        self._current = newRun(set())

    def run(self) -> JobMetrics:
        """Run until the job ends; between a suspension and a resume, wait."""
        while True:
            metrics = self._current.run()
            if not self._current.suspended:
                return metrics
            if not self.suspension.awaitGoOn(lambda: self._control.cancelled):
                self._current.discardCheckpoint()
                raise self._control.cancellation()
            self._current = self._newRun(self._current.claimedOutputs())

    def metrics(self) -> JobMetrics:
        """Return the current run's figures."""
        return self._current.metrics()

    def exportSnapshot(self, name: str, cancelling: bool = False) -> JobStateSnapshot:
        """Export the current run's state as snapshot ``name`` (see ``StreamRun.exportSnapshot``)."""
        return self._current.exportSnapshot(name, cancelling)
