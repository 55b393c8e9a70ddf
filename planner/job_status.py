"""Where a job is in its life."""

import enum


class JobStatus(enum.Enum):
    """Where a job is in its life, as Jet's ``JobStatus`` names it (a cancelled job has FAILED;
    a stream job ``Jet.shutdown()`` stopped is NOT_RUNNING, as a Jet job whose execution its
    member's shutdown interrupted, until it is started again). A stream job's status shows the
    phase of its lifecycle (``coredag/runtime/lifecycle.py``): Jet's STARTING and COMPLETING show
    as RUNNING, and a job asked to suspend is RUNNING until its run has stopped, as Jet's."""

    NOT_RUNNING = "NOT_RUNNING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    FAILED = "FAILED"
    COMPLETED = "COMPLETED"
