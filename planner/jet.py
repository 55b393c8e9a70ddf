"""The client's side of a job: Jet plans a pipeline and runs its Core DAG on Spark."""

import concurrent.futures
import contextlib
import contextvars
import functools
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs

from sparkjet.coredag.api.capabilities import readsStream
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.errors import Interrupted, JobError, SessionError, SparkjetError, StoppedByShutdown
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.runtime.stream.state_directory import snapshotName
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.planner.interrupts import cancelledMessage, interruptCancelsJobs
from sparkjet.planner.job_config import JobConfig
from sparkjet.planner.job_status import JobStatus
from sparkjet.planner.notebook import jobHtml
from sparkjet.planner.planning import Plan, planOf

if TYPE_CHECKING:  # sparkjet.coredag.runtime.engine imports pyspark, which planning never needs
    from sparkjet.coredag.runtime.engine import Engine, JobControl
    from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
    from sparkjet.planner.assertions import JobAssertions
    from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot
    from sparkjet.coredag.runtime.stream.stream_job import StreamJob


MASTER_VARIABLE = "SPARKJET_MASTER"
"""The environment variable naming the Spark master a Jet() without one uses (default local[*])."""

WAIT_SLICE_SECONDS = 0.25
"""How long ``join()`` waits at a time: Ctrl-C is seen within it."""

GRACEFUL_SHUTDOWN_MAX_WAIT_SECONDS = 60.0
"""How long ``Jet.shutdown()`` waits for its stream jobs to stop after their micro-batch in
progress before it cancels that micro-batch's Spark jobs (Hazelcast's
``hazelcast.graceful.shutdown.max.wait``, 600 s there, which covers moving partitions too)."""

CANCELLED_STOP_SECONDS = 60.0
"""How long ``Jet.shutdown()`` then waits for a stream job whose Spark jobs it cancelled to stop,
its outputs cleaned up, before it goes on without it."""

@attrs.frozen
class _JobWatch:
    jobs: list
    runs: bool


_jobWatch: contextvars.ContextVar[_JobWatch | None] = contextvars.ContextVar("jobWatch", default=None)


@contextlib.contextmanager
def watchingJobs(runs: bool) -> "Iterator[list[Job]]":
    """Within the block, every ``newJob`` is recorded in the list yielded; it runs only if
    ``runs`` (otherwise it is planned and checked, not run)."""
    watch = _JobWatch([], runs)
    token = _jobWatch.set(watch)
    try:
        yield watch.jobs
    finally:
        _jobWatch.reset(token)


class OnlyPlanned(JobError):
    """A script run by ``sparkjet plan`` asked a job for what only running it gives."""


class Job:
    """A submitted job; ``join()`` waits for it and raises its error, if any. ``plan`` is the
    Plan it runs, made once when it was submitted, so its picture and report show what ran
    whatever happens to the pipeline later."""

    def __init__(
        self, name: str, plan: Plan, future: concurrent.futures.Future,
        control: "JobControl | None" = None, liveMetrics: Callable[[], JobMetrics] | None = None,
        stream: "StreamJob | None" = None,
    ) -> None:
        self.name = name
        self.plan = plan
        self._future = future
        self._control = control
        self._liveMetrics = liveMetrics
        self._stream = stream

    def getName(self) -> str:
        """Return the job's name."""
        return self.name

    @property
    def isStream(self) -> bool:
        """Return whether the job reads a stream (its metrics grow while it runs)."""
        return self._liveMetrics is not None

    @property
    def sparkJobGroup(self) -> str | None:
        """Return the Spark job group of the job's Spark jobs (None if it was only planned)."""
        return None if self._control is None else self._control.group

    def getStatus(self) -> JobStatus:
        """Return the job's status now: RUNNING until it completes (a stream job: until it is
        cancelled or its finite stream ends, SUSPENDED once its run stopped for ``suspend()``),
        then COMPLETED or FAILED; NOT_RUNNING if only planned, or if ``Jet.shutdown()`` stopped it
        (a stream job goes on when submitted again)."""
        if self._stream is not None:
            return JobStatus[self._stream.lifecycle.phase.status]
        if not self._future.done():
            return JobStatus.RUNNING
        if not self._future.cancelled() and isinstance(self._future.exception(), StoppedByShutdown):
            return JobStatus.NOT_RUNNING
        if self._future.cancelled() or self._future.exception() is not None:
            return JobStatus.FAILED
        return JobStatus.NOT_RUNNING if self._control is None else JobStatus.COMPLETED

    def join(self) -> None:
        """Wait until the job completes; raise the error that failed it (CancelledError if
        ``cancel()`` stopped it, Interrupted if Ctrl-C did, StoppedByShutdown if ``Jet.shutdown()``
        stopped the stream job, naming where it goes on from). While it waits, the job's progress
        shows on a terminal's stderr or in a notebook (see planner/progress.py)."""
        if self._future.done():
            self._result()
            return
        from sparkjet.planner.progress import showingProgress  # imports pyspark, which planning never needs

        with showingProgress([self]):
            self._result()

    def _repr_html_(self) -> str:
        """Return the notebook's display of the job: its status and figures, its plan's picture
        (see planner/notebook.py)."""
        return jobHtml(self)

    def _result(self) -> JobMetrics | None:
        """Return the job's metrics once it completes. sparkjet's own errors say what and where
        in their message (and chain the user's frames), so they are raised from here without
        the frames of the thread that ran the job. Ctrl-C while it waits cancels the job and,
        once the job has removed its output, raises Interrupted."""
        try:
            return self._awaited()
        except SparkjetError as error:
            raise error.with_traceback(None)
        except KeyboardInterrupt:
            self.cancel()
            concurrent.futures.wait([self._future])
            raise Interrupted(cancelledMessage([self.name])) from None

    def _awaited(self) -> JobMetrics | None:
        """Return the job's result; wait in slices, so Python runs a SIGINT handler within one
        (a wait without a timeout sees a signal only if it reaches this very thread)."""
        while True:
            try:
                return self._future.result(timeout=WAIT_SLICE_SECONDS)
            except TimeoutError:
                continue

    def cancel(self) -> None:
        """Stop the job, as Jet's ``Job.cancel()`` does: its Spark jobs are cancelled at once
        (their Python workers end within seconds), its files sinks leave no output and
        ``join()`` raises CancelledError. A job that already completed ignores it."""
        if self._control is not None:
            self._control.cancel()

    def suspend(self) -> None:
        """Stop the running stream job after the snapshot of its last micro-batch is saved,
        keeping its checkpoint; ``resume()`` goes on from there (Jet's ``Job.suspend()``). A job
        without a processing guarantee keeps nothing: resumed, it starts again from the start of
        its sources, empty, as Jet's does (refused where a files sink would write over its files)."""
        stream = self._streamFor("suspend")
        stream.lifecycle.ask("suspend", lambda: stream.checkStartingOver(self.name, "suspend"))

    def resume(self) -> None:
        """Go on with a suspended stream job from its last snapshot (Jet's ``Job.resume()``)."""
        self._streamFor("resume").lifecycle.ask("resume")

    def restart(self) -> None:
        """Stop the running stream job and go on at once from its last snapshot (Jet's
        ``Job.restart()``); without a guarantee, from the start of its sources, as ``suspend``."""
        stream = self._streamFor("restart")
        stream.lifecycle.ask("restart", lambda: stream.checkStartingOver(self.name, "restart"))

    def itemsRead(self) -> int:
        """Return how many items the job's sources have read so far: a batch job's as its
        finished tasks reported them, a stream job's over its micro-batches."""
        if self.isStream:
            return self.metrics().itemsReadInMicroBatches
        counts = self._control.countsSoFar() if self._control is not None else {}
        dag = self.plan.dag
        return sum(counts.get(("itemsOut", v.name), 0) for v in dag.vertices() if not dag.getInboundEdges(v.name))

    def exportSnapshot(self, name: str) -> "JobStateSnapshot":
        """Export the stream job's state after its last micro-batch as snapshot ``name`` (one
        of that name is replaced), and go on running; ``JobConfig.setInitialSnapshotName(name)``
        starts a new job from it (Jet's ``Job.exportSnapshot``). A suspended job exports the
        snapshot it stopped at. A name that cannot name a directory is a JobError, the job untouched."""
        return self._streamOf("exportSnapshot").exportSnapshot(snapshotName(name, f"Job '{self.name}': exportSnapshot"))

    def cancelAndExportSnapshot(self, name: str) -> "JobStateSnapshot":
        """Export the stream job's state as snapshot ``name``, then cancel it, no micro-batch
        running in between (Jet's ``Job.cancelAndExportSnapshot``); a name that cannot name a
        directory is a JobError, the job going on."""
        name = snapshotName(name, f"Job '{self.name}': cancelAndExportSnapshot")
        return self._streamOf("cancelAndExportSnapshot").exportSnapshot(name, cancelling=True)

    def _streamOf(self, method: str) -> "StreamJob":
        if self._stream is None:
            raise JobError(f"Job '{self.name}': {method}() is for stream jobs; a batch job has no snapshot")
        return self._stream

    def _streamFor(self, method: str) -> "StreamJob":
        """Return the stream job whose lifecycle ``method`` asks a move of (its ``Lifecycle.ask``
        refuses one the job's status does not allow, with Jet's IllegalStateException text)."""
        if self._stream is None:
            raise JobError(
                f"Job '{self.name}': {method}() is for stream jobs: a batch job runs to its end in one go "
                "(cancel() stops it)"
            )
        return self._stream

    def metrics(self) -> JobMetrics:
        """Return what the job did: items in and out per vertex and per fused stage, busy time
        per vertex, items and bytes through each edge. A batch job's once it completes (this
        waits); a stream job's so far, whenever asked (its micro-batches, each vertex's
        watermark and late events too), as Jet's ``Job.getMetrics()``."""
        if self._liveMetrics is not None:
            return self._liveMetrics()
        metrics = self._result()
        if metrics is None:
            raise OnlyPlanned(f"Job '{self.name}' was only planned (sparkjet plan): it has no metrics")
        return metrics

    def getMetrics(self) -> JobMetrics:
        """Return the job's figures, Jet's name for ``metrics()``: ``get(MetricNames.X)`` gives
        them as Jet's measurements, tagged by vertex (and processor, ordinal)."""
        return self.metrics()

    def renderSvg(self, path: str) -> tuple[str, str | None]:
        """Draw the job's plan annotated with its metrics (see ``metrics``) into ``path``.

        Returns the path written and, without graphviz's ``dot``, a note (see writePlanSvg)."""
        from sparkjet.planner.render import writePlanSvg

        return writePlanSvg(self.plan, path, self.metrics())

    def renderHtml(self, path: str) -> str:
        """Write the job's report page (the plan with its figures, see ``metrics``, the tables
        of figures, the explanation) into ``path``; return the path."""
        from sparkjet.planner.report import writeReport

        return writeReport(self.plan, path, self.metrics())


class Jet:
    """Runs jobs on Spark: an embedded local session by default, or a given one, master or
    Spark Connect server.

    Args:
        spark: a SparkSession of yours to run on, classic or Spark Connect (not with ``master``
            or ``remote``).
        master: a master URL (``local[4]``, ``spark://host:7077``) for the session Jet starts;
            by default spark-submit's, else ``local[*]``.
        remote: a Spark Connect URL (``sc://host:15002``, or ``local[2]`` for a server started
            in this process) for the Connect session Jet starts; by default PySpark's
            ``SPARK_REMOTE``, or the master's server where ``spark.api.mode`` is ``connect``.
        ui: whether a session Jet starts shows Spark's web UI (default: yes, unless
            ``SPARKJET_UI=0``)."""

    _jobNumbers = itertools.count(1)

    def __init__(self, spark=None, master: str | None = None, ui: bool | None = None, remote: str | None = None) -> None:
        if spark is not None and master is not None:
            raise ValueError("Jet: pass either spark (a SparkSession) or master (a URL), not both")
        if remote is not None and (spark is not None or master is not None):
            raise ValueError(
                "Jet: pass remote (a Spark Connect URL) alone: not with spark (a SparkSession of yours), "
                "nor with master (the server's master is its own; remote='local[2]' starts one on local[2])"
            )
        if spark is not None and ui is not None:
            raise ValueError(
                "Jet: pass either spark (a SparkSession) or ui, not both: ui is for a session Jet starts, "
                "a given one keeps its own UI (spark.ui.enabled)"
            )
        self._spark = spark
        self._sharesSpark = False
        self._master = master or os.environ.get(MASTER_VARIABLE) or None
        self._remote = remote
        self._ui = ui
        self._lists: dict[str, list] = {}
        self._dataFrames: dict[str, object] = {}
        self._running: set[str] = set()
        self._jobs: list[Job] = []
        """The jobs this client started and that had not ended when the last one started."""
        self._lock = threading.Lock()
        self._executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="sparkjet-job")

    def spark(self):
        """Return the SparkSession jobs run on: the one given, else the process's session
        (spark-submit's, the active one, or one started now, a Spark Connect one where asked),
        taken again if it was stopped."""
        from sparkjet.coredag.runtime.session import isStopped, readyForSparkjet, sharedSessions

        with self._lock:
            if self._spark is not None and isStopped(self._spark):
                if not self._sharesSpark:
                    raise SessionError(
                        "The SparkSession given to Jet(spark=...) was stopped: give a running one, "
                        "or make Jet() without it to have one started"
                    )
                sharedSessions.release(self._spark)
                self._spark, self._sharesSpark = None, False
            if self._spark is None:
                self._spark = sharedSessions.take(self._master, self._ui, self._remote)
                self._sharesSpark = True
            return readyForSparkjet(self._spark)

    def newJob(self, work: Plan | Pipeline | DAG, config: JobConfig | None = None, name: str | None = None) -> Job:
        """Plan ``work`` once, check its inputs and outputs, and start it.

        Args:
            work: a Pipeline, a plan of one, or a Core DAG (taken as built).
            config: Jet's ``JobConfig``: the job's name, a stream job's processing guarantee,
                checkpoint and initial snapshot.
            name: the job's name, where ``config`` gives none.

        Returns:
            The running ``Job``; ``join()`` waits for it."""
        planned = planOf(work).validate()
        config = config or JobConfig()
        jobName = name or config.getName() or f"job-{next(Jet._jobNumbers)}"
        watch = _jobWatch.get()
        if watch is not None and not watch.runs:
            watch.jobs.append(Job(jobName, planned, _completed()))
            return watch.jobs[-1]
        job = self._start(jobName, planned, config)
        if watch is not None:
            watch.jobs.append(job)
        return job

    def _start(self, jobName: str, planned: Plan, config: JobConfig) -> Job:
        """Take ``jobName`` (a job refused for it touches nothing), check the inputs and outputs
        of ``planned``, fix its physical plan on the session and start running it in a thread (a
        stream job with a guarantee from its checkpoint, which it holds until it ends)."""
        from sparkjet.planner.assertions import JobAssertions

        engine = self._engine()
        control = self._register(jobName, engine)
        stream = None
        try:
            if readsStream(planned.dag):
                from sparkjet.coredag.runtime.stream.stream_job import preparedStreamJob

                stream = preparedStreamJob(
                    engine, jobName, planned.dag, config, control, self._publishLists, JobAssertions
                )
                planned = attrs.evolve(planned, dag=stream.start.dag, physical=stream.physical)
                running = self._executor.submit(self._finally, stream.run, jobName, control)
                return self._started(Job(jobName, planned, running, control, stream.metrics, stream))
            if config.getInitialSnapshotName() is not None:
                raise JobError(
                    f"Job '{jobName}': setInitialSnapshotName('{config.getInitialSnapshotName()}') is for stream "
                    "jobs; this one reads no stream, so it has no state to start from"
                )
            dag = preflightDag(planned.dag)
            physical = engine.physicalPlan(dag)
            batch = functools.partial(self._runBatch, engine, dag, physical, jobName, control, JobAssertions(dag))
            running = self._executor.submit(self._finally, batch, jobName, control)
            return self._started(Job(jobName, attrs.evolve(planned, physical=physical), running, control))
        except BaseException:
            if stream is not None:  # ready, but its thread never started: its checkpoint is let go
                stream.start.release()
            self._unregister(jobName, control)
            raise

    def _engine(self) -> "Engine":
        """Return the engine jobs run on, on the session ``spark()`` gives, Ctrl-C cancelling
        the running jobs from now on (see planner/interrupts.py)."""
        interruptCancelsJobs.install()  # before pyspark is imported: a Ctrl-C then is one line too
        from sparkjet.coredag.runtime.engine import engineOf

        return engineOf(self.spark())

    def _started(self, job: Job) -> Job:
        """Note ``job`` among the jobs ``shutdown()`` ends or waits for."""
        with self._lock:
            self._jobs = [started for started in self._jobs if not started._future.done()] + [job]
        return job

    def _finally(self, run: Callable[[], JobMetrics], jobName: str, control: "JobControl") -> JobMetrics:
        """Run a job to its end, then note it no longer runs."""
        try:
            return run()
        finally:
            self._unregister(jobName, control)

    def _runBatch(
        self, engine: "Engine", dag: DAG, physical: "PhysicalPlan", jobName: str, control: "JobControl",
        assertions: "JobAssertions",
    ) -> JobMetrics:
        """Run a batch job's ``dag`` on ``engine`` as ``physical`` says; keep the lists and
        DataFrames its sinks made, run its assertions."""
        outcome = engine.runBatch(dag, physical, jobName, control)
        self._publishLists(assertions.listItems(outcome.lists))
        assertions.receive(outcome.lists)
        assertions.complete()
        with self._lock:
            self._dataFrames.update(outcome.dataFrames)
        return outcome.metrics

    def _publishLists(self, lists: dict[str, list]) -> None:
        """Append the items a job's list sinks collected to the lists of ``getList``."""
        with self._lock:
            for listName, items in lists.items():
                self._lists.setdefault(listName, []).extend(items)

    def _register(self, jobName: str, engine: "Engine") -> "JobControl":
        """Note ``jobName`` as running and return its job's new control on ``engine``, cancelled
        by Ctrl-C; refuse it if a running job of this client has it, as Jet does."""
        control = engine.jobControl(jobName)
        with self._lock:
            if jobName in self._running:
                raise JobError(
                    f"A job named '{jobName}' is already running: give the new job another "
                    "name, or join() the running one first"
                )
            self._running.add(jobName)
        interruptCancelsJobs.add(control)
        return control

    def _unregister(self, jobName: str, control: "JobControl") -> None:
        with self._lock:
            self._running.discard(jobName)
        interruptCancelsJobs.discard(control)

    def getJobStateSnapshot(self, name: str) -> "JobStateSnapshot":
        """Return the snapshot exported under ``name`` (Jet's ``getJobStateSnapshot``)."""
        from sparkjet.coredag.runtime.stream.checkpoint import loadSnapshot

        return loadSnapshot(name)

    def getList(self, name: str) -> list:
        """Return the list that jobs' ``Sinks.list(name)`` appended to (empty if none did)."""
        with self._lock:
            return self._lists.setdefault(name, [])

    def getDataFrame(self, name: str):
        """Return the DataFrame that ``Sinks.dataframe(name)`` of the last job to finish made."""
        with self._lock:
            if name not in self._dataFrames:
                raise KeyError(
                    f"No finished job wrote a DataFrame named '{name}': write it with "
                    f"Sinks.dataframe('{name}') and join() the job first"
                )
            return self._dataFrames[name]

    def shutdown(self, maxWaitSeconds: float = GRACEFUL_SHUTDOWN_MAX_WAIT_SECONDS) -> None:
        """Stop the running stream jobs as Jet's graceful member shutdown does (see
        ``_stopStreamJobs``) and wait for the batch jobs; then stop the Spark session if sparkjet
        started it and no other Jet client uses it. A micro-batch still running after
        ``maxWaitSeconds`` has its Spark jobs cancelled: shutdown never waits forever for a stream."""
        from sparkjet.coredag.runtime.session import sharedSessions

        with self._lock:
            jobs = list(self._jobs)
        stuck = self._stopStreamJobs([job for job in jobs if job._stream is not None], maxWaitSeconds)
        if stuck:  # the batch jobs are waited for all the same
            concurrent.futures.wait([job._future for job in jobs if job._stream is None])
        self._executor.shutdown(wait=not stuck)
        with self._lock:
            if self._sharesSpark:
                sharedSessions.release(self._spark)
            self._spark, self._sharesSpark = None, False

    def _stopStreamJobs(self, streams: list[Job], maxWaitSeconds: float) -> list[Job]:
        """Stop ``streams`` after their micro-batch in progress, its states saved and committed,
        and end them, keeping their checkpoints; cancel the Spark jobs of a micro-batch that has not
        ended after ``maxWaitSeconds``; say on stderr how each stopped. Return those that did not
        stop even then (the session stops under them)."""
        running = [job for job in streams if not job._future.done()]
        for job in running:
            job._stream.shutDown()
        _, late = concurrent.futures.wait([job._future for job in running], timeout=maxWaitSeconds)
        for job in running:
            if job._future in late:
                job._stream.cancelMicroBatch(maxWaitSeconds)
        _, late = concurrent.futures.wait(late, timeout=CANCELLED_STOP_SECONDS)
        for job in running:
            if job._future in late:
                print(
                    f"sparkjet: Job '{job.name}' did not stop within {CANCELLED_STOP_SECONDS:g} s of its Spark jobs' "
                    "cancel: Jet.shutdown() goes on without it",
                    file=sys.stderr,
                )
            elif isinstance(job._future.exception(), StoppedByShutdown):
                print(f"sparkjet: {job._future.exception()}", file=sys.stderr)
        return [job for job in running if job._future in late]

    def __enter__(self) -> "Jet":
        """Return this client, to ``shutdown()`` at the end of a ``with`` block."""
        return self

    def __exit__(self, *raised) -> None:
        self.shutdown()


def _completed() -> concurrent.futures.Future:
    future: concurrent.futures.Future = concurrent.futures.Future()
    future.set_result(None)
    return future
