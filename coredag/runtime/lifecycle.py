"""A stream job's lifecycle: one phase, moved only along its transitions (Jet's ``JobStatus``
and the termination requests of its ``MasterJobContext``), with the Condition its waiters wait on.
``Job.getStatus()`` shows the phase, never ahead of the run: a job asked to suspend stays
RUNNING until its run has stopped, as Jet's does until its execution has terminated."""

import enum
import threading
from collections.abc import Callable

from sparkjet.coredag.errors import JobError


class JobPhase(enum.Enum):
    """Where a stream job is. Jet's statuses, and the three requests Jet's coordinator keeps
    beside RUNNING until the execution stops (``requestTermination``): suspending, restarting,
    shutting down (Jet's member shutdown, which leaves a job NOT_RUNNING)."""

    STARTING = "starting"
    """A run opens its checkpoint and starts its query (Jet's STARTING; shown RUNNING, as sparkjet
    always showed a submitted job)."""
    RUNNING = "running"
    SUSPENDING = "suspending"
    """Asked to suspend: the micro-batch in progress ends and is committed, then the run stops."""
    RESTARTING = "restarting"
    """Asked to restart, or resumed: the run stops (if it runs) and a new one starts."""
    SHUTTING_DOWN = "shutting down"
    """``Jet.shutdown()`` stops the run as a suspension does and ends the job, its checkpoint kept."""
    SUSPENDED = "suspended"
    COMPLETING = "completing"
    """The job ends: cancelled, failed, or its finite stream ended (Jet's COMPLETING; shown RUNNING)."""
    NOT_RUNNING = "not running"
    """Stopped by ``Jet.shutdown()``: submitted again, it goes on from its checkpoint."""
    FAILED = "failed"
    COMPLETED = "completed"

    @property
    def status(self) -> str:
        """Return the name of the ``JobStatus`` that ``Job.getStatus()`` shows for this phase."""
        return _SHOWN.get(self, "RUNNING")

    @property
    def stopsRun(self) -> bool:
        """Return whether the current run is to stop for a request (suspend, restart, shutdown)."""
        return self in (JobPhase.SUSPENDING, JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN)

    @property
    def ended(self) -> bool:
        """Return whether the job ends or has ended for good, keeping nothing to export."""
        return self in (JobPhase.COMPLETING, JobPhase.FAILED, JobPhase.COMPLETED)


_SHOWN = {
    JobPhase.SUSPENDED: "SUSPENDED",
    JobPhase.NOT_RUNNING: "NOT_RUNNING",
    JobPhase.FAILED: "FAILED",
    JobPhase.COMPLETED: "COMPLETED",
}

_ENDING = {JobPhase.COMPLETING, JobPhase.FAILED}
_TRANSITIONS: dict[JobPhase, set[JobPhase]] = {
    JobPhase.STARTING: {JobPhase.RUNNING, JobPhase.SUSPENDING, JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN} | _ENDING,
    JobPhase.RUNNING: {JobPhase.SUSPENDING, JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN} | _ENDING,
    JobPhase.SUSPENDING: {JobPhase.SUSPENDED, JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN} | _ENDING,
    JobPhase.RESTARTING: {JobPhase.STARTING, JobPhase.SUSPENDING, JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN} | _ENDING,
    JobPhase.SUSPENDED: {JobPhase.RESTARTING, JobPhase.SHUTTING_DOWN} | _ENDING,
    JobPhase.SHUTTING_DOWN: {JobPhase.NOT_RUNNING, JobPhase.COMPLETED} | _ENDING,
    JobPhase.COMPLETING: {JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.NOT_RUNNING},
    JobPhase.NOT_RUNNING: set(),
    JobPhase.FAILED: set(),
    JobPhase.COMPLETED: set(),
}
"""The phases each phase may move to; any other move is a ``LifecycleError``."""

CALLS = {
    "suspend": ("Cannot SUSPEND_GRACEFUL", JobPhase.SUSPENDING),
    "restart": ("Cannot RESTART_GRACEFUL", JobPhase.RESTARTING),
    "resume": ("cannot resume() it", JobPhase.RESTARTING),
}
"""Per lifecycle call, how its error begins (as Jet's IllegalStateException, which names the
termination mode it asked for; resume asks for none) and the phase it asks for."""

FIXES = {
    "SUSPENDED": "resume() it first",
    "RUNNING": "it is not suspended",
    "NOT_RUNNING": "Jet.shutdown() stopped it; submit it again with the same name to go on",
}
"""What to do instead, by the status a lifecycle call found the job in."""


class LifecycleError(JobError):
    """A job was asked to move where its phase does not lead."""


class Lifecycle:
    """The phase of stream job ``jobName``, shared by the client's calls and the job's thread;
    every move goes through ``_move``, which checks it and wakes the waiters."""

    def __init__(self, jobName: str) -> None:
        self.jobName = jobName
        self._phase = JobPhase.STARTING
        self._changed = threading.Condition()

    @property
    def phase(self) -> JobPhase:
        """Return where the job is now."""
        return self._phase

    def ask(self, method: str, refusal: Callable[[], None] = lambda: None) -> None:
        """Ask for ``method`` (suspend, restart, resume) as Jet's ``Job`` does: a job not in the
        status the call needs is a JobError with Jet's text and the fix; ``refusal()`` may refuse
        it then. A job shutting down or ending ignores it, as Jet's terminating job does."""
        opening, wanted = CALLS[method]
        with self._changed:
            status = "SUSPENDED" if self._phase is JobPhase.SUSPENDING else self._phase.status
            required = "SUSPENDED" if method == "resume" else "RUNNING"
            if status != required:
                fix = FIXES.get(status, "the job has ended (a cancelled job has FAILED, as in Jet)")
                raise JobError(f"Job '{self.jobName}': {opening}, job status is {status}: {fix}")
            refusal()
            if self._phase not in (JobPhase.SHUTTING_DOWN, JobPhase.COMPLETING):
                self._move(wanted)

    def shutDown(self) -> None:
        """Ask the run to stop after its snapshot and the job to end (a suspended job ends at once)."""
        with self._changed:
            if JobPhase.SHUTTING_DOWN in _TRANSITIONS[self._phase]:
                self._move(JobPhase.SHUTTING_DOWN)

    def cancelled(self) -> None:
        """Note that the job was cancelled: it ends (its run stops, a suspended job at once)."""
        with self._changed:
            if JobPhase.COMPLETING in _TRANSITIONS[self._phase]:
                self._move(JobPhase.COMPLETING)

    def started(self) -> None:
        """Note that the run streams (unless a request came while it started)."""
        with self._changed:
            if self._phase is JobPhase.STARTING:
                self._move(JobPhase.RUNNING)
            self._changed.notify_all()

    def runStopped(self, forRequest: bool) -> None:
        """Note that the run stopped: for the request it was asked (a suspension ends SUSPENDED;
        a restart or a shutdown goes on in the job's thread), or for good (the job ends)."""
        with self._changed:
            if forRequest and self._phase is JobPhase.SUSPENDING:
                self._move(JobPhase.SUSPENDED)
            elif not forRequest and self._phase is not JobPhase.SHUTTING_DOWN and not self._phase.ended:
                self._move(JobPhase.COMPLETING)
            self._changed.notify_all()

    def awaitGoOn(self) -> bool:
        """Wait while suspended; return True to start the next run (resumed or restarting), False
        once the job ends (cancelled, or shutting down)."""
        with self._changed:
            self._changed.wait_for(lambda: self._phase is not JobPhase.SUSPENDED)
            if self._phase is not JobPhase.RESTARTING:
                return False
            self._move(JobPhase.STARTING)
            return True

    def awaitUntil(self, condition: Callable[[], bool]) -> None:
        """Wait until ``condition()`` holds; it is looked at again at each move and each run's
        start and stop."""
        with self._changed:
            self._changed.wait_for(condition)

    def end(self, phase: JobPhase) -> None:
        """End the job in ``phase`` (COMPLETED, FAILED or NOT_RUNNING), through COMPLETING where
        it ends for good."""
        with self._changed:
            if phase is JobPhase.COMPLETED and self._phase is not JobPhase.SHUTTING_DOWN:
                self._move(JobPhase.COMPLETING)
            self._move(phase)

    def _move(self, phase: JobPhase) -> None:
        if phase is not self._phase and phase not in _TRANSITIONS[self._phase]:
            raise LifecycleError(
                f"Job '{self.jobName}' cannot go from {self._phase.name} to {phase.name}: its lifecycle leads "
                f"from there only to {', '.join(sorted(p.name for p in _TRANSITIONS[self._phase])) or 'nowhere'}"
            )
        self._phase = phase
        self._changed.notify_all()
