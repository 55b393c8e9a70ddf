"""Ctrl-C while sparkjet jobs run: it cancels them first, then does what it did before."""

import atexit
import os
import signal
import sys
import threading

from sparkjet.coredag.errors import Interrupted, isUserCode

CTRL_C_MESSAGE = "interrupted (Ctrl-C)"
"""What Ctrl-C did when it stopped no job: sparkjet's own work, as a one-line message."""


class InterruptCancelsJobs:
    """The SIGINT handler of a process running sparkjet jobs: it cancels every running job
    (each a ``JobControl``), then calls the handler it replaced; in place of Python's default
    it raises Interrupted naming the jobs. So Ctrl-C at any moment stops the jobs' Spark jobs
    and their outputs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set = set()
        self._previous = None
        self._previousHook = sys.excepthook
        self._endedByInterrupt = False

    def install(self) -> None:
        """Become the SIGINT handler, from the main thread, where Python runs them; leave a
        handler that ignores SIGINT, or one that is not Python's, as it is. A script that
        Ctrl-C ends prints one line for it (see ``_printInterrupted``) and ends as Python ends
        on a KeyboardInterrupt (see ``_exitAsInterrupted``)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if sys.excepthook != self._printInterrupted:
            self._previousHook, sys.excepthook = sys.excepthook, self._printInterrupted
            atexit.register(self._exitAsInterrupted)
        current = signal.getsignal(signal.SIGINT)
        if current == self._handle or not callable(current):
            return
        self._previous = current
        signal.signal(signal.SIGINT, self._handle)

    def _printInterrupted(self, kind, error, traceback) -> None:
        """Print an uncaught Interrupted as one line (none if it was said when Ctrl-C came, see
        ``saidAlready``), every other exception as before."""
        if not issubclass(kind, Interrupted):
            self._previousHook(kind, error, traceback)
            return
        self._endedByInterrupt = True
        if not saidAlready(error):
            print(f"sparkjet: {error}", file=sys.stderr)

    def _exitAsInterrupted(self) -> None:
        """At the exit of a script an uncaught Interrupted ended, once the exit's other work
        (waiting for the jobs' threads, stopping the JVM) is done: end by SIGINT, as Python ends
        on an uncaught KeyboardInterrupt (a shell's status 130), not with status 1. It runs after
        the exit functions registered later, PySpark's among them."""
        if not self._endedByInterrupt:
            return
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)

    def add(self, control) -> None:
        """Count ``control``'s job as running."""
        with self._lock:
            self._running.add(control)

    def discard(self, control) -> None:
        """Count ``control``'s job as ended."""
        with self._lock:
            self._running.discard(control)

    def _handle(self, signum, frame) -> None:
        with self._lock:
            running = list(self._running)
        for control in running:
            control.cancel()
        previous = self._previous or signal.default_int_handler
        if running and previous is signal.default_int_handler:
            raise Interrupted(cancelledMessage(sorted(control.jobName for control in running)))
        if previous is signal.default_int_handler and runsSparkjet(frame):
            raise Interrupted(CTRL_C_MESSAGE)
        previous(signum, frame)


def runsSparkjet(frame) -> bool:
    """Whether ``frame``, where Ctrl-C came, runs sparkjet's code (planning, starting a job or a
    session, importing PySpark for it), or what sparkjet called: there Ctrl-C ends the script
    with one line, not a traceback through sparkjet; in the user's own code, as Python does."""
    while frame is not None and not isUserCode(frame):
        if (frame.f_globals.get("__name__") or "").startswith("sparkjet."):
            return True
        frame = frame.f_back
    return False


def saidAlready(error: BaseException) -> bool:
    """Whether ``error`` was said on stderr when Ctrl-C came (``acknowledged``), so that printing
    it again would repeat it: the start of a session says at once that it will stop."""
    return bool(getattr(error, "acknowledged", False))


def cancelledMessage(jobNames: list[str]) -> str:
    """Return what Ctrl-C did: ``Job 'job-1' was cancelled: interrupted (Ctrl-C)``."""
    if len(jobNames) == 1:
        return f"Job '{jobNames[0]}' was cancelled: {CTRL_C_MESSAGE}"
    return f"Jobs {', '.join(repr(name) for name in jobNames)} were cancelled: {CTRL_C_MESSAGE}"


interruptCancelsJobs = InterruptCancelsJobs()
"""This process's SIGINT handler while sparkjet jobs run."""
