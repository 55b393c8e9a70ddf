"""Jet's job lifecycle (issue 27, point 6), ported from Jet's SuspendResumeTest and AssertionsTest:
a job without a processing guarantee can be suspended and resumes from the start of its sources,
a suspended job refuses suspend() and restart() with Jet's texts, and an eventual assertion's
timeout counts from when its sink starts, not from the job's submission."""

import concurrent.futures

import pytest

from sparkjet import (
    AssertionCompletedException,
    Assertions,
    AssertionSinks,
    JobError,
    Pipeline,
    Sinks,
    Sources,
    TestSources,
    plan,
)
from sparkjet.planner import JobStatus
from sparkjet.planner.assertions import JobAssertions
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile


def watchedJob(jet, tmp_path, listName: str):
    """Start a job without a guarantee copying the lines of a watched directory into list ``listName``."""
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list(listName))
    return jet.newJob(p), watched


@pytest.mark.spark
def test_a_job_without_a_guarantee_is_suspended_and_resumes_from_the_start_of_its_sources(jet, tmp_path):
    """SuspendResumeTest.when_suspendAndResume_then_jobResumes, on a job without a guarantee as
    Jet's is: resumed, it reads its source again from the start, as Jet documents."""
    job, watched = watchedJob(jet, tmp_path, "resumed-from-the-start")
    lines = jet.getList("resumed-from-the-start")
    try:
        dropFile(watched, "a.txt", ["ant", "bee"])
        eventually(lambda: sorted(lines) == ["ant", "bee"])
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        job.resume()
        assert job.getStatus() is JobStatus.RUNNING
        eventually(lambda: sorted(lines) == ["ant", "ant", "bee", "bee"])
        dropFile(watched, "b.txt", ["cat"])
        eventually(lambda: "cat" in lines)
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert sorted(lines) == ["ant", "ant", "bee", "bee", "cat"]


@pytest.mark.spark
def test_a_suspended_job_refuses_suspend_and_restart_with_jets_texts_and_cancels(jet, tmp_path):
    """SuspendResumeTest.when_suspendSuspendedJob_then_fail, when_restartSuspendedJob_then_fail
    and when_cancelSuspendedJob_then_jobCancels; a join waits while the job is suspended
    (when_suspendAndThenJoin_then_joinBlocks)."""
    job, _ = watchedJob(jet, tmp_path, "suspended-twice")
    try:
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        with pytest.raises(JobError, match=r"^Job '.+': Cannot SUSPEND_GRACEFUL, job status is SUSPENDED: resume\(\) it first$"):
            job.suspend()
        with pytest.raises(JobError, match=r"^Job '.+': Cannot RESTART_GRACEFUL, job status is SUSPENDED: resume\(\) it first$"):
            job.restart()
        joining = concurrent.futures.ThreadPoolExecutor(1).submit(job.join)
        assert not joining.done()
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        joining.result()
    assert job.getStatus() is JobStatus.FAILED
    with pytest.raises(JobError, match=r"Cannot SUSPEND_GRACEFUL, job status is FAILED: the job has ended"):
        job.suspend()


@pytest.mark.spark
def test_a_job_without_a_guarantee_and_a_files_sink_is_not_started_over(jet, tmp_path):
    """Started over, its micro-batches would be numbered from 0 again, their files written over
    those its first run committed: sparkjet refuses where Jet's file sink would append."""
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.files(str(tmp_path / "out")))
    job = jet.newJob(p)
    try:
        for call in (job.suspend, job.restart):
            with pytest.raises(JobError, match=r"cannot (suspend|restart)\(\) it: without a processing guarantee it "
                               r"starts over .+ files sink\(s\) 'filesSink\(.+out\)' would write over"):
                call()
        assert job.getStatus() is JobStatus.RUNNING
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()


def test_a_batch_job_cannot_be_suspended(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).writeTo(Sinks.noop())
    job = jet.newJob(p)
    with pytest.raises(JobError, match=r"suspend\(\) is for stream jobs: a batch job runs to its end in one go"):
        job.suspend()
    job.join()


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_an_eventual_assertions_timeout_counts_from_when_its_sink_starts():
    """AssertionSinks.java takes the start when the sink processor is created: the seconds Spark
    and the query take to start before it do not count."""
    sink = AssertionSinks.assertCollectedEventually(5, containsOne)
    p = Pipeline.create()
    p.readFrom(TestSources.itemStream(1, zero)).withoutTimestamps().writeTo(sink)
    clock = Clock()
    assertions = JobAssertions(plan(p).dag, clock)
    clock.now = 100.0  # submitted at 0, the stream running at 100
    assertions.checkTimeouts()
    assertions.receive({sink.check: [0]})
    clock.now = 105.0
    assertions.checkTimeouts()
    clock.now = 105.5
    with pytest.raises(AssertionError, match=r"did not pass within 5 s: did not receive item '1'"):
        assertions.checkTimeouts()


def zero(timestamp, sequence):
    return 0


def containsZero(items):
    assert 0 in items, "did not receive item '0'"


def containsOne(items):
    assert 1 in items, "did not receive item '1'"


@pytest.mark.spark
def test_assert_collected_eventually_ends_the_job_once_it_passes(jet):
    """AssertionsTest.test_assertCollectedEventually, and its not_terminal variant: the stage goes
    on to a list sink, which got the items (Jet's timeout of 5 s is 600 here: it ends the job as
    soon as it passes, and the first micro-batch on a loaded machine may take minutes)."""
    p = Pipeline.create()
    (p.readFrom(TestSources.itemStream(1, zero)).withoutTimestamps()
      .apply(Assertions.assertCollectedEventually(600, containsZero))
      .writeTo(Sinks.list("not-terminal")))
    with pytest.raises(AssertionCompletedException, match="Assertion passed successfully"):
        jet.newJob(p).join()
    assert 0 in jet.getList("not-terminal")
