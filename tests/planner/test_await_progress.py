"""Waiting for progress, not for a wall time: a job that keeps moving is waited for however long
it takes, one that stops moving for the stall limit is given up on, saying what was awaited."""

import runpy

import attrs
import pytest

from sparkjet.coredag.model.metrics import JobMetrics, MicroBatchMetrics
from sparkjet.planner.jet import JobStatus
from sparkjet.planner.progress import Stalled, awaitProgress, progressMark
from tests.conftest import PROJECT


@attrs.define
class SlowStream:
    """A stream job, without Spark, that runs one micro-batch of ``perBatch`` items each time
    it is looked at, ``batches`` in all, then runs on without moving."""

    batches: int
    perBatch: int = 10
    ran: list = attrs.field(factory=list)
    status: JobStatus = JobStatus.RUNNING
    sparkJobGroup = None
    isStream = True

    def getStatus(self) -> JobStatus:
        return self.status

    def metrics(self) -> JobMetrics:
        if len(self.ran) < self.batches:
            self.ran.append(MicroBatchMetrics(len(self.ran), 0.5, self.perBatch))
        return JobMetrics("slow", 1.0, (), (), tuple(self.ran))

    def itemsRead(self) -> int:
        return sum(batch.itemsRead for batch in self.ran)

    def join(self) -> None:
        raise RuntimeError("the job failed")


def test_a_job_that_keeps_moving_is_waited_for_longer_than_the_stall_limit():
    job = SlowStream(batches=30)
    awaitProgress([job], lambda: job.itemsRead() >= 300, 0.2, lambda: "read")
    assert len(job.ran) == 30, "about 3 s of polls, each seeing a micro-batch more"


def test_a_job_that_stops_moving_is_given_up_on_saying_what_was_awaited():
    job = SlowStream(batches=2)
    with pytest.raises(Stalled, match=r"^Nothing moved for 0.3 s: the job read 20 of 100 items$"):
        awaitProgress([job], lambda: job.itemsRead() >= 100, 0.3, lambda: f"read {job.itemsRead()} of 100 items")


def test_a_failed_job_raises_its_error_at_once():
    job = SlowStream(batches=0, status=JobStatus.FAILED)
    with pytest.raises(RuntimeError, match="the job failed"):
        awaitProgress([job], lambda: False, 600, lambda: "anything")


def test_the_mark_of_a_stream_job_moves_with_its_micro_batches():
    job = SlowStream(batches=2)
    assert progressMark(job) != progressMark(job)
    assert progressMark(job) == progressMark(job) == (JobStatus.RUNNING, 2, 20, 0, [])


def test_tutorial_07_waits_for_a_slow_stream_while_it_moves_and_names_what_it_lacks():
    tutorial = runpy.run_path(str(PROJECT / "tutorials" / "07_windowed_word_count_over_a_stream.py"))
    moving = SlowStream(batches=30)
    tutorial["awaitRead"](moving, 300, 0.2)
    assert moving.itemsRead() == 300
    with pytest.raises(Stalled, match=r"^Nothing moved for 0.2 s: the job read 20 of 100 lines$"):
        tutorial["awaitRead"](SlowStream(batches=2), 100, 0.2)
