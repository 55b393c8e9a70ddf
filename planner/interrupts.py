"""Ctrl-C while sparkjet jobs run: it cancels them first, then does what it did before."""

import signal
import sys
import threading

from sparkjet.coredag.errors import Interrupted


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

    def install(self) -> None:
        """Become the SIGINT handler, from the main thread, where Python runs them; leave a
        handler that ignores SIGINT, or one that is not Python's, as it is. A script that
        Ctrl-C ends prints one line for it (see ``_printInterrupted``)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if sys.excepthook != self._printInterrupted:
            self._previousHook, sys.excepthook = sys.excepthook, self._printInterrupted
        current = signal.getsignal(signal.SIGINT)
        if current == self._handle or not callable(current):
            return
        self._previous = current
        signal.signal(signal.SIGINT, self._handle)

    def _printInterrupted(self, kind, error, traceback) -> None:
        """Print an uncaught Interrupted as one line, every other exception as before."""
        if issubclass(kind, Interrupted):
            print(f"sparkjet: {error}", file=sys.stderr)
        else:
            self._previousHook(kind, error, traceback)

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
        previous(signum, frame)


def cancelledMessage(jobNames: list[str]) -> str:
    """Return what Ctrl-C did: ``Job 'job-1' was cancelled: interrupted (Ctrl-C)``."""
    if len(jobNames) == 1:
        return f"Job '{jobNames[0]}' was cancelled: interrupted (Ctrl-C)"
    return f"Jobs {', '.join(repr(name) for name in jobNames)} were cancelled: interrupted (Ctrl-C)"


interruptCancelsJobs = InterruptCancelsJobs()
"""This process's SIGINT handler while sparkjet jobs run."""
