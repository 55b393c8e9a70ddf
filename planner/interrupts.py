"""Ctrl-C while sparkjet jobs run: it cancels them first, then does what it did before."""

import concurrent.futures
import signal
import threading


class Interrupted(concurrent.futures.CancelledError, KeyboardInterrupt):
    """Ctrl-C interrupted ``join()``: the job was cancelled and left no output. A CancelledError
    (caught as such in a notebook) and a KeyboardInterrupt (a script ends as Python's do)."""


class InterruptCancelsJobs:
    """The SIGINT handler of a process running sparkjet jobs: it cancels every running job
    (each a ``JobControl``), then calls the handler it replaced (which raises KeyboardInterrupt
    by default), so Ctrl-C at any moment stops the jobs' Spark jobs and their outputs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set = set()
        self._previous = None

    def install(self) -> None:
        """Become the SIGINT handler, from the main thread, where Python runs them; leave a
        handler that ignores SIGINT, or one that is not Python's, as it is."""
        if threading.current_thread() is not threading.main_thread():
            return
        current = signal.getsignal(signal.SIGINT)
        if current == self._handle or not callable(current):
            return
        self._previous = current
        signal.signal(signal.SIGINT, self._handle)

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
        previous(signum, frame)


interruptCancelsJobs = InterruptCancelsJobs()
"""This process's SIGINT handler while sparkjet jobs run."""
