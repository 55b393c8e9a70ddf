"""One line of progress on a terminal while jobs run: each running sparkjet job's stage and tasks.

Each sparkjet job runs its Spark jobs under the Spark job group named after it, so the status
tracker of the active SparkContext says which stages are the job's and how far their tasks are.
"""

import contextlib
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TextIO

from sparkjet.coredag.runtime.execution import StageInfo, runningStages

INTERVAL = 0.5
"""Seconds between two looks at the status tracker."""

CLEAR_LINE = "\r\x1b[K"
"""Back to the start of the line, and erase it."""


def progressText(jobName: str, stageIds: Sequence[int], running: Sequence[StageInfo]) -> str:
    """Return ``job-1: stage 3/5 · tasks 12/16`` for a job whose ``running`` stages are among its
    ``stageIds``: the stage is the last running one's position; the tasks are the running ones'."""
    position = sum(1 for stageId in stageIds if stageId <= max(info.stageId for info in running))
    completed = sum(info.numCompletedTasks for info in running)
    tasks = sum(info.numTasks for info in running)
    failed = sum(info.numFailedTasks for info in running)
    text = f"{jobName}: stage {position}/{len(stageIds)} · tasks {completed}/{tasks}"
    return text + (f" · {failed} failed" if failed else "")


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
        progress = [jobProgress(job.name, job.sparkJobGroup) for job in running]
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
