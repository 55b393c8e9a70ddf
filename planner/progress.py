"""Live progress while jobs run: each running job's stage, tasks and elapsed time; a stream
job's micro-batches, items read and watermark. One line on stderr on a terminal, a line of HTML
in a notebook (NotebookProgress; IPython is imported only inside a running kernel), nothing
elsewhere or with ``SPARKJET_PROGRESS=0``; how it finds a job's stages: docs/internals/client.md."""

import contextlib
import html
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Protocol, TextIO

from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.model.metrics import JobMetrics, counted
from sparkjet.coredag.runtime.engine import StageInfo, runningStages
from sparkjet.planner.job_status import JobStatus

INTERVAL = 0.5
"""Seconds between two looks at the status tracker."""

CLEAR_LINE = "\r\x1b[K"
"""Back to the start of the line, and erase it."""

DAY_MILLIS = 86_400_000
"""A watermark further behind the clock than this is not a wall-clock time: its lag is not shown."""

PROGRESS_VARIABLE = "SPARKJET_PROGRESS"
"""The environment variable that turns progress off when it is 0 (or off, false, no)."""

_OFF = frozenset({"0", "off", "false", "no"})


def progressWanted() -> bool:
    """Return whether progress is to be shown: unless ``SPARKJET_PROGRESS`` says 0 (or off)."""
    return os.environ.get(PROGRESS_VARIABLE, "").strip().lower() not in _OFF


def progressText(jobName: str, stageIds: Sequence[int], running: Sequence[StageInfo]) -> str:
    """Return ``job-1: stage 3/5 · tasks 12/16 · 2 running`` for a job whose ``running`` stages
    are among its ``stageIds``: the stage is the last running one's position; the tasks are the
    running ones'; once every task left runs, ``waiting for 2 tasks``."""
    position = sum(1 for stageId in stageIds if stageId <= max(info.stageId for info in running))
    completed = sum(info.numCompletedTasks for info in running)
    active = sum(info.numActiveTasks for info in running)
    tasks = sum(info.numTasks for info in running)
    failed = sum(info.numFailedTasks for info in running)
    text = f"{jobName}: stage {position}/{len(stageIds)} · tasks {completed}/{tasks}"
    if active:
        text += f" · waiting for {counted(active, 'task')}" if completed + active >= tasks else f" · {active} running"
    return text + (f" · {failed} failed" if failed else "")


def streamProgressText(metrics: JobMetrics, nowMillis: int) -> str:
    """Return ``job-1: 12 micro-batches · 401 items read · watermark 97,000 · 1.2 s behind the
    clock`` for a stream job: the watermark every vertex has reached (how far it lags behind the
    wall clock where its event times are the clock's, less than a day behind)."""
    batches = metrics.microBatchCount
    read = metrics.itemsReadInMicroBatches
    noun = "micro-batch" if batches == 1 else "micro-batches"
    text = f"{metrics.jobName}: {batches:,} {noun} · {counted(read, 'item')} read"
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
    """Return the progress of the running sparkjet job ``jobName`` (its Spark jobs in
    ``jobGroup``): its running stage and tasks, else that it starts or how many stages it ran."""
    stageIds, running = runningStages(jobGroup)
    if running:
        return progressText(jobName, stageIds, running)
    return f"{jobName}: {counted(len(stageIds), 'stage')} done" if stageIds else f"{jobName}: starting"


def jobText(job) -> str:
    """Return the progress of ``job`` (a Job) if it runs or is suspended, else ''."""
    status = job.getStatus()
    if job.sparkJobGroup is None or status not in (JobStatus.RUNNING, JobStatus.SUSPENDED):
        return ""
    if status is JobStatus.SUSPENDED:
        return f"{job.name}: suspended"
    if job.isStream:
        return streamProgressText(job.metrics(), wallClockMillis())
    read = job.itemsRead()
    return jobProgress(job.name, job.sparkJobGroup) + (f" · {counted(read, 'item')} read" if read else "")


def progressMark(job) -> tuple:
    """Return what changes whenever ``job`` (a Job) moves on: its status, a stream job's
    micro-batches and items read, how many Spark stages its Spark jobs started, and the tasks
    running and done in those that run."""
    stageIds, running = runningStages(job.sparkJobGroup) if job.sparkJobGroup is not None else ([], [])
    tasks = [(info.numActiveTasks, info.numCompletedTasks) for info in running]
    figures = job.metrics() if job.isStream and job.getStatus() is JobStatus.RUNNING else None
    streamed = (figures.microBatchCount, figures.itemsReadInMicroBatches) if figures is not None else ()
    return job.getStatus(), *streamed, len(stageIds), tasks


class Stalled(TimeoutError):
    """Nothing moved for a long while: no item arrived and no job moved on."""


def awaitProgress(jobs: Sequence, done, stallSeconds: float, waitingFor: str, clock=time.monotonic) -> None:
    """Wait until ``done()`` is true, however long ``jobs`` (Jobs) take while they move on; a
    job that fails raises its error. Raise Stalled, saying what was awaited (``waitingFor``, a
    callable returning text such as 'read 0 of 100 lines'), once no job moved on (see
    progressMark) for ``stallSeconds``."""
    marks, moved = None, clock()
    while not done():
        for job in jobs:
            if job.getStatus() in (JobStatus.FAILED, JobStatus.COMPLETED):
                job.join()  # raises what failed the job
        now = [progressMark(job) for job in jobs]
        if now != marks:
            marks, moved = now, clock()
        elif clock() - moved > stallSeconds:
            raise Stalled(f"Nothing moved for {stallSeconds:g} s: the job {waitingFor()}")
        time.sleep(0.1)


def elapsedText(seconds: float) -> str:
    """Return ``12 s``, or ``3 min 05 s`` from a minute on."""
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"


class JobsProgress:
    """What to say of the progress of ``jobs`` (Jobs; a list that may grow meanwhile): each
    running job's text and how long it has been watched, which ticks on while it waits."""

    def __init__(self, jobs: Sequence, clock=time.monotonic) -> None:
        self._jobs = jobs
        self._clock = clock
        self._since = dict.fromkeys(list(jobs), clock())

    def text(self) -> str:
        """Return each running job's progress and elapsed time, ``' | '`` between jobs."""
        texts = []
        for job in list(self._jobs):
            text = jobText(job)
            if text:
                texts.append(f"{text} · {elapsedText(self._clock() - self._sinceOf(job))}")
        return " | ".join(texts)

    def endedText(self, interrupted: bool = False) -> str:
        """Return how each job that ran ended: ``job-1: COMPLETED after 3 s``; one still running
        when the wait was ``interrupted`` is being cancelled."""
        texts = []
        for job in [job for job in list(self._jobs) if job.sparkJobGroup is not None]:
            status = job.getStatus()
            said = "being cancelled" if interrupted and status is JobStatus.RUNNING else status.value
            texts.append(f"{job.name}: {said} after {elapsedText(self._clock() - self._sinceOf(job))}")
        return " | ".join(texts)

    def _sinceOf(self, job) -> float:
        return self._since.setdefault(job, self._clock())


class ProgressView(Protocol):
    """Where progress shows (a terminal's line, a notebook's output), from entering it to its exit."""

    def poll(self) -> None:
        """Look at the jobs once; show what changed."""

    def __enter__(self) -> "ProgressView":
        """Start showing."""

    def __exit__(self, kind, error, traceback) -> None:
        """Stop showing; ``kind`` is that of the error that ended the wait, if any."""


class ProgressLine:
    """The line on the terminal ``stream`` showing the progress of ``jobs``. What the program
    writes through ``writeAbove`` meanwhile erases the line first; the line shows again only
    once that output ended its line, so the two never share one. Entered, it makes the standard
    streams write through it (see passThrough) when ``stream`` is ``sys.stderr``."""

    def __init__(self, jobs: Sequence, stream: TextIO) -> None:
        self._progress = JobsProgress(jobs)
        self._stream = stream
        self._shown = ""
        self._atLineStart = True
        self._lock = threading.RLock()
        self._restore = _nothing

    def poll(self) -> None:
        """Look at the active SparkContext's status tracker once; rewrite the line if it changed."""
        self.show(self._progress.text())

    def clear(self) -> None:
        """Erase the line, if anything is shown."""
        self.show("")

    def show(self, text: str) -> None:
        """Show ``text`` in place of the line, cut to the terminal's width (a line that wrapped
        could not be erased whole), unless other output is mid-line."""
        with self._lock:
            text = shortened(text, terminalWidth(self._stream)) if self._atLineStart else ""
            if text != self._shown:
                self._stream.write(CLEAR_LINE + text)
                self._stream.flush()
                self._shown = text

    def writeAbove(self, stream: TextIO, text: str) -> int:
        """Write ``text`` to ``stream`` (one showing on the same terminal), the line erased first."""
        with self._lock:
            if text:
                self.clear()
                self._atLineStart = text.endswith("\n")
            written = stream.write(text)
            if text and self._atLineStart:
                stream.flush()
            return written

    def __enter__(self) -> "ProgressLine":
        if self._stream is sys.stderr:
            self._restore = passThrough(self)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self._restore()
        self.clear()


def _nothing() -> None:
    pass


def terminalWidth(stream: TextIO, default: int = 80) -> int:
    """Return the width of the terminal ``stream`` writes to (``default`` if it does not say)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or default
    except (AttributeError, OSError, ValueError):
        return default


def shortened(text: str, width: int) -> str:
    """Return ``text`` cut to less than ``width`` characters, ending with an ellipsis if cut."""
    return text if len(text) < width else text[: max(width - 2, 0)] + "\u2026"


class _PassingThrough:
    """A standard stream while a progress line shows: writes go through ``line.writeAbove``,
    everything else to the stream."""

    def __init__(self, stream: TextIO, line: ProgressLine) -> None:
        self.stream = stream
        self._line = line

    def write(self, text: str) -> int:
        """Write ``text``, the progress line erased first."""
        return self._line.writeAbove(self.stream, text)

    def writelines(self, lines) -> None:
        """Write each of ``lines``."""
        for text in lines:
            self.write(text)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def passThrough(line: ProgressLine):
    """Make ``sys.stderr`` and, if it is a terminal, ``sys.stdout`` write through ``line``;
    return the function that puts each back, unless the program replaced it meanwhile."""
    names = ["stderr"] + (["stdout"] if sys.stdout is not None and sys.stdout.isatty() else [])
    passing = {name: _PassingThrough(getattr(sys, name), line) for name in names}
    for name, stream in passing.items():
        setattr(sys, name, stream)

    def restore() -> None:
        for name, stream in passing.items():
            if getattr(sys, name) is stream:
                setattr(sys, name, stream.stream)

    return restore


_shown: dict[int, Sequence] = {}
"""The job lists that ``showingProgress`` blocks show now, by their id."""


def alreadyShown(jobs: Sequence) -> bool:
    """Return whether ``jobs`` are some, each in a list a ``showingProgress`` block shows now."""
    watched = [job for shown in list(_shown.values()) for job in list(shown)]
    return bool(jobs) and all(any(job is other for other in watched) for job in jobs)


def progressView(jobs: Sequence, stream: TextIO) -> ProgressView | None:
    """Return where to show the progress of ``jobs``: a line on ``stream`` if it is a terminal;
    in a notebook, when ``stream`` is its stderr, the cell's output; None elsewhere, when
    progress is off, or when another block shows them already."""
    if not progressWanted() or alreadyShown(jobs):
        return None
    if stream.isatty():
        return ProgressLine(jobs, stream)
    return NotebookProgress(jobs) if stream is sys.stderr and inNotebook() else None


@contextlib.contextmanager
def showingProgress(
    jobs: Sequence, stream: TextIO | None = None, interval: float = INTERVAL
) -> Iterator[None]:
    """While the block runs, show the progress of ``jobs`` where progressView says (``stream``
    is stderr by default), polling every ``interval`` seconds in a thread; erase it at the end."""
    view = progressView(jobs, sys.stderr if stream is None else stream)
    if view is None:
        yield
        return
    stopped = threading.Event()
    poller = threading.Thread(target=_pollUntil, args=(view, stopped, interval), name="sparkjet-progress", daemon=True)
    with view:
        _shown[id(jobs)] = jobs
        poller.start()
        try:
            yield
        finally:
            stopped.set()
            poller.join()
            del _shown[id(jobs)]


def _pollUntil(view: ProgressView, stopped: threading.Event, interval: float) -> None:
    """Poll ``view`` every ``interval`` seconds until ``stopped`` is set."""
    while not stopped.wait(interval):
        view.poll()


def inNotebook() -> bool:
    """Return whether a notebook's kernel (IPython's, with a frontend showing HTML) runs this code."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


class NotebookProgress:
    """A line of HTML in the output of the notebook cell waiting for ``jobs``, updated in place
    with their progress (see JobsProgress) and, at the end, how they ended."""

    def __init__(self, jobs: Sequence) -> None:
        self._progress = JobsProgress(jobs)
        self._handle = None

    def poll(self) -> None:
        """Show the jobs' progress now."""
        self._show(self._progress.text())

    def __enter__(self) -> "NotebookProgress":
        from IPython.display import display

        self._handle = display(progressBundle(""), raw=True, display_id=True)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self._show(self._progress.endedText(interrupted=kind is not None and issubclass(kind, KeyboardInterrupt)))

    def _show(self, text: str) -> None:
        self._handle.update(progressBundle(text), raw=True)


def progressBundle(text: str) -> dict[str, str]:
    """Return the progress line as the notebook shows it: HTML, and text elsewhere."""
    return {"text/html": f'<div class="sparkjet-progress" style="font-family: monospace">{html.escape(text)}</div>', "text/plain": text}
