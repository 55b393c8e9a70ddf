"""Job control: the driver's hold on a running job (cancel it, watch its Spark jobs for a task
failed by the job's own error) and what its failure means to its user."""

import concurrent.futures
import contextlib
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from py4j.protocol import Py4JError
from pyspark import SparkContext
from pyspark.status import SparkStageInfo, StatusTracker

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.runtime.transport import TRANSPORTED, restoreError, summarizeFailure
from sparkjet.coredag.runtime.worker_failure import CrashedTask

StageInfo = SparkStageInfo
"""What Spark's status tracker says of a stage: its id, its tasks, how many are done, failed."""


class SparkStageVertices(Protocol):
    """What names the vertices a crashed Spark stage ran (the RDD builder of the job)."""

    def verticesOfSparkStage(self, stageId: int) -> list:
        """Return the stage names of the vertices that Spark stage ``stageId`` runs."""


def runningStages(jobGroup: str) -> tuple[list[int], list[StageInfo]]:
    """Return the ids of the Spark stages the sparkjet job of Spark job group ``jobGroup`` has
    so far and the infos of those running; nothing when no SparkContext is active (or it stops
    meanwhile)."""
    # PySpark's own SparkSession.getActiveSession reads the same class attribute; with no context
    # (None) or one still starting there is no _jsc yet, and a stopped one's is None.
    try:
        javaContext = SparkContext._active_spark_context._jsc
    except AttributeError:
        return [], []
    if javaContext is None:
        return [], []
    tracker = StatusTracker(javaContext.statusTracker())
    try:
        stageIds = sorted(_stageIdsOf(tracker, jobGroup))
        active = set(tracker.getActiveStageIds()).intersection(stageIds)
        return stageIds, [info for info in map(tracker.getStageInfo, active) if info is not None]
    except Py4JError:
        return [], []


POLL_SECONDS = 0.1
"""How often a failed job looks whether its last tasks ended."""

WATCH_PAUSES = (0.1, 0.2, 0.4, 0.8, 1.0)
"""The pauses between the driver's looks at a running job's Spark jobs, for a task failed
with the job's own error; the last repeats. Each look is a few calls into the JVM, which
competes with the Python workers for the CPUs, so a long job is looked at once a second."""

ENDING_SECONDS = 10.0
"""How long a failed job waits for its last tasks to end before it removes their output."""


class JobControl:
    """The driver's hold on a running job: ``cancel()`` stops its Spark jobs, and so does a
    task failed by the job's own error (a user function's, say), which no retry can mend."""

    def __init__(self, jobName: str) -> None:
        self.jobName = jobName
        self.group = f"sparkjet-{jobName}-{uuid.uuid4().hex[:12]}"
        """The Spark job group of this job's Spark jobs: its own, whatever other jobs are named."""
        self.cancelled = False
        """Whether ``cancel()`` was called: the one flag of a cancel, which the watcher and the
        runs read (a stream job's lifecycle hears of it through ``whenCancelled``)."""
        self.failure: Exception | None = None
        self.counts = None
        """The accumulator of the current run's item counts, as its finished tasks report them."""
        self._woken = threading.Event()
        self._listeners: list[Callable[[], None]] = []

    def countsSoFar(self) -> Mapping:
        """Return the current run's item counts as its finished tasks reported them so far
        (none before it started)."""
        return self.counts.value if self.counts is not None else {}

    def cancel(self) -> None:
        """Ask the job to stop: the watcher cancels its Spark jobs at once."""
        self.cancelled = True
        self._woken.set()
        for listener in list(self._listeners):
            listener()

    def whenCancelled(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` when ``cancel()`` is called (by the job's user, Ctrl-C or a
        cancelling snapshot export)."""
        self._listeners.append(listener)

    @contextlib.contextmanager
    def watching(self, sc: SparkContext) -> Iterator[None]:
        """Look at the job's Spark jobs after each of ``WATCH_PAUSES``, and when ``cancel()``
        is called, while the block runs them."""
        stopped = threading.Event()
        watcher = threading.Thread(
            target=self._watch, args=(sc, stopped), name=f"sparkjet-watch-{self.jobName}", daemon=True
        )
        watcher.start()
        try:
            yield
        finally:
            stopped.set()
            self._woken.set()
            watcher.join()

    def awaitTasksEnded(self, sc: SparkContext) -> None:
        """Wait, ``ENDING_SECONDS`` at most, until no task of the job runs: a task being
        cancelled could otherwise write output after the job removed it."""
        deadline = time.monotonic() + ENDING_SECONDS
        tracker = sc.statusTracker()
        stages = _stageIdsOf(tracker, self.group)
        while any(info.numActiveTasks for info in map(tracker.getStageInfo, stages) if info is not None):
            if time.monotonic() > deadline:
                return
            time.sleep(POLL_SECONDS)

    def cancellation(self) -> concurrent.futures.CancelledError:
        """Return what ``join()`` raises for the cancelled job, as Jet's raises a
        CancellationException."""
        return concurrent.futures.CancelledError(f"Job '{self.jobName}' was cancelled")

    def failureOf(self, error: Exception, stages: SparkStageVertices | None = None) -> Exception:
        """Return what the job's ``error`` means to its user: a cancellation, the job error a
        task failed with, or ``error`` made readable (naming, through ``stages``, the vertices
        of a Spark stage whose Python worker died)."""
        if self.cancelled:
            return self.cancellation()
        return _driverError(error, self.jobName, stages) if self.failure is None else self.failure

    def _watch(self, sc: SparkContext, stopped: threading.Event) -> None:
        tracker = sc.statusTracker()
        pauses = itertools.chain(WATCH_PAUSES, itertools.repeat(WATCH_PAUSES[-1]))
        stopping = False
        while True:
            self._woken.wait(POLL_SECONDS if stopping else next(pauses))
            self._woken.clear()
            if stopped.is_set():
                return
            if self.failure is None:
                self.failure = _jobErrorOfFailedTask(sc, tracker, self.group)
            stopping = self.cancelled or self.failure is not None
            if stopping and _runsSparkJobs(tracker, self.group):
                sc.cancelJobGroup(self.group)


def _runsSparkJobs(tracker: StatusTracker, jobGroup: str) -> bool:
    """Whether a Spark job of ``jobGroup`` runs (cancelling an idle group logs a warning)."""
    return not set(tracker.getJobIdsForGroup(jobGroup)).isdisjoint(tracker.getActiveJobsIds())


def _stageIdsOf(tracker: StatusTracker, jobGroup: str) -> set[int]:
    """Return the stages of the Spark jobs of ``jobGroup`` the status tracker knows."""
    jobs = [tracker.getJobInfo(sparkJob) for sparkJob in tracker.getJobIdsForGroup(jobGroup)]
    return {stageId for job in jobs if job is not None for stageId in job.stageIds}


def _jobErrorOfFailedTask(sc: SparkContext, tracker: StatusTracker, jobGroup: str) -> Exception | None:
    """Return the job error a worker raised in a failed task of ``jobGroup``'s running stages,
    if any; a task that failed otherwise (its Python worker died, say) is left to its retries."""
    active = set(tracker.getActiveStageIds())
    running = active & _stageIdsOf(tracker, jobGroup) if active else set()
    failing = [info for info in map(tracker.getStageInfo, running) if info and info.numFailedTasks]
    errors = (restoreError(message) for stage in failing for message in _failedTaskMessages(sc, stage))
    return next((error for error in errors if error is not None), None)


def _failedTaskMessages(sc: SparkContext, stage: SparkStageInfo) -> list[str]:
    """Return the error messages of the failed tasks of ``stage``'s current attempt, from the
    status store of Spark's own UI (PySpark's status tracker only counts them)."""
    v1 = sc._jvm.org.apache.spark.status.api.v1
    tasks = sc._jsc.sc().statusStore().taskList(
        stage.stageId, stage.currentAttemptId, 0, stage.numFailedTasks,
        v1.TaskSorting.ID, [v1.TaskStatus.FAILED],
    )
    messages = (tasks.apply(index).errorMessage() for index in range(tasks.size()))
    return [message.get() for message in messages if message.isDefined()]



def _driverError(error: Exception, jobName: str, stages: SparkStageVertices | None = None) -> Exception:
    """Return ``error`` as the job's user sees it: sparkjet's own errors (a worker's, or the
    driver's, such as an OutputError of a directory that appeared meanwhile) as they are."""
    if isinstance(error, TRANSPORTED):
        return error
    restored = restoreError(str(error)) or _workerCrashError(str(error), jobName, stages)
    if restored is not None:
        return restored
    return JobError(f"Job '{jobName}' failed: {summarizeFailure(str(error))}")


def _workerCrashError(text: str, jobName: str, stages: SparkStageVertices | None) -> JobError | None:
    """Return the error of a job whose task's Python worker died in every attempt, naming the
    vertices that the Spark stage of that task ran, if ``text`` (Spark's failure) says so."""
    crashed = CrashedTask.parse(text)
    if crashed is None:
        return None
    return crashed.error(jobName, [] if stages is None else stages.verticesOfSparkStage(crashed.stage))
