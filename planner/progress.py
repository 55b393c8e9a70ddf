"""One line of progress on a terminal while jobs run: each running sparkjet job's stage and
tasks; a stream job's micro-batches, items read and watermark.

Each sparkjet job runs its Spark jobs under the Spark job group named after it, so the status
tracker of the active SparkContext says which stages are the job's and how far their tasks are.
A stream job's figures come from its metrics, which it keeps while it runs.
"""

import contextlib
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TextIO

from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.runtime.execution import StageInfo, runningStages
from sparkjet.planner.jet import JobStatus

INTERVAL = 0.5
"""Seconds between two looks at the status tracker."""

CLEAR_LINE = "\r\x1b[K"
"""Back to the start of the line, and erase it."""

DAY_MILLIS = 86_400_000
"""A watermark further behind the clock than this is not a wall-clock time: its lag is not shown."""


def progressText(jobName: str, stageIds: Sequence[int], running: Sequence[StageInfo]) -> str:
    """Return ``job-1: stage 3/5 · tasks 12/16`` for a job whose ``running`` stages are among its
    ``stageIds``: the stage is the last running one's position; the tasks are the running ones'."""
    position = sum(1 for stageId in stageIds if stageId <= max(info.stageId for info in running))
    completed = sum(info.numCompletedTasks for info in running)
    tasks = sum(info.numTasks for info in running)
    failed = sum(info.numFailedTasks for info in running)
    text = f"{jobName}: stage {position}/{len(stageIds)} · tasks {completed}/{tasks}"
    return text + (f" · {failed} failed" if failed else "")


def streamProgressText(metrics: JobMetrics, nowMillis: int) -> str:
    """Return ``job-1: 12 micro-batches · 401 items read · watermark 97,000 · 1.2 s behind the
    clock`` for a stream job: the watermark every vertex has reached (how far it lags behind the
    wall clock where its event times are the clock's, less than a day behind)."""
    batches = len(metrics.microBatches)
    read = sum(batch.itemsRead for batch in metrics.microBatches)
    noun = "micro-batch" if batches == 1 else "micro-batches"
    text = f"{metrics.jobName}: {batches:,} {noun} · {read:,} items read"
    watermarks = [vertex.watermark for vertex in metrics.vertices if vertex.watermark is not None]
    if watermarks:
        watermark = min(watermarks)
        text += f" · watermark {watermark:,}"
        if 0 <= nowMillis - watermark < DAY_MILLIS:
            text += f" · {(nowMillis - watermark) / 1000:.1f} s behind the clock"
    if metrics.lastSnapshot is not None:
        text += f" · snapshot {metrics.lastSnapshot.snapshotId}"
    return text


def jobProgress(jobName: str, jobGroup: str) -> str:
    """Return the progress of the sparkjet job ``jobName`` (its Spark jobs in ``jobGroup``), or
    '' when none of its stages runs."""
    stageIds, running = runningStages(jobGroup)
    return progressText(jobName, stageIds, running) if running else ""


class ProgressLine:
    """The line on ``stream`` showing the progress of ``jobs`` (objects with a ``name`` and a
    ``sparkJobGroup``)."""

    def __init__(self, jobs: Sequence, stream: TextIO) -> None:
        self._jobs = jobs
        self._stream = stream
        self._shown = ""

    def poll(self) -> None:
        """Look at the active SparkContext's status tracker once; rewrite the line if it changed."""
        running = [job for job in list(self._jobs) if job.sparkJobGroup is not None]
        progress = [
            streamProgressText(job.metrics(), wallClockMillis()) if job.isStream and job.getStatus() is JobStatus.RUNNING
            else jobProgress(job.name, job.sparkJobGroup)
            for job in running
        ]
        self._show(" | ".join(text for text in progress if text))

    def pollUntil(self, stopped: threading.Event, interval: float) -> None:
        """Poll every ``interval`` seconds until ``stopped`` is set."""
        while not stopped.wait(interval):
            self.poll()

    def clear(self) -> None:
        """Erase the line, if anything is shown."""
        self._show("")

    def _show(self, text: str) -> None:
        if text != self._shown:
            self._stream.write(CLEAR_LINE + text)
            self._stream.flush()
            self._shown = text


@contextlib.contextmanager
def showingProgress(
    jobs: Sequence, stream: TextIO | None = None, interval: float = INTERVAL
) -> Iterator[None]:
    """While the block runs, show the progress of ``jobs`` on ``stream`` (stderr by default) if
    it is a terminal, polling every ``interval`` seconds in a thread; erase the line at the end."""
    stream = sys.stderr if stream is None else stream
    if not stream.isatty():
        yield
        return
    line, stopped = ProgressLine(jobs, stream), threading.Event()
    poller = threading.Thread(
        target=line.pollUntil, args=(stopped, interval), name="sparkjet-progress", daemon=True
    )
    poller.start()
    try:
        yield
    finally:
        stopped.set()
        poller.join()
        line.clear()
