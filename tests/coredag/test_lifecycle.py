"""A stream job's lifecycle (issue 35, point 3): one phase, moved only along its transitions,
whose waiters wait on its Condition."""

import threading

import pytest

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.runtime.lifecycle import JobPhase, Lifecycle, LifecycleError


def test_a_suspension_shows_running_until_the_run_stopped_then_suspended():
    lifecycle = Lifecycle("counts")
    lifecycle.started()
    lifecycle.ask("suspend")
    assert (lifecycle.phase, lifecycle.phase.status) == (JobPhase.SUSPENDING, "RUNNING")
    with pytest.raises(JobError, match=r"Cannot SUSPEND_GRACEFUL, job status is SUSPENDED: resume\(\) it first"):
        lifecycle.ask("suspend")
    lifecycle.runStopped(forRequest=True)
    assert lifecycle.phase.status == "SUSPENDED"


def test_a_move_the_lifecycle_does_not_lead_to_raises():
    lifecycle = Lifecycle("counts")
    lifecycle.end(JobPhase.COMPLETED)
    with pytest.raises(LifecycleError, match=r"Job 'counts' cannot go from COMPLETED to FAILED"):
        lifecycle.end(JobPhase.FAILED)


def test_a_suspended_job_waits_on_the_lifecycle_until_resumed_or_cancelled():
    for wake, goesOn in ((lambda lifecycle: lifecycle.ask("resume"), True), (Lifecycle.cancelled, False)):
        lifecycle = Lifecycle("counts")
        lifecycle.ask("suspend")
        lifecycle.runStopped(forRequest=True)
        answers: list[bool] = []
        waiter = threading.Thread(target=lambda: answers.append(lifecycle.awaitGoOn()))
        waiter.start()
        wake(lifecycle)
        waiter.join()
        assert answers == [goesOn]
        assert lifecycle.phase is (JobPhase.STARTING if goesOn else JobPhase.COMPLETING)
