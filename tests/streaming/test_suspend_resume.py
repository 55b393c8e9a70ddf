"""Jet's job lifecycle on a stream job with a processing guarantee: suspend() stops it after its
last snapshot, keeping its checkpoint; resume() and restart() go on from there, its states as
they were; cancel() ends it for good, its checkpoint removed."""

import concurrent.futures
import os
import pathlib
import time

import pytest

from sparkjet import AggregateOperations, JobConfig, JobError, Pipeline, ProcessingGuarantee, Sinks, Sources
from sparkjet.planner import JobStatus
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

pytestmark = pytest.mark.spark


def word(line: str) -> str:
    return line


def test_a_suspended_job_goes_on_from_its_snapshot_when_resumed_or_restarted(jet, tmp_path):
    watched, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    watched.mkdir()
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
      .groupingKey(word).rollingAggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("running-counts")))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(checkpoint))
    job = jet.newJob(p, config)
    counts = jet.getList("running-counts")
    try:
        dropFile(watched, "a.txt", ["ant", "bee", "ant"])
        eventually(lambda: len(counts) == 3)
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        dropFile(watched, "b.txt", ["ant"])
        job.resume()
        eventually(lambda: ("ant", 3) in counts)
        assert job.getStatus() is JobStatus.RUNNING
        job.restart()
        dropFile(watched, "c.txt", ["bee", "ant"])
        eventually(lambda: {("bee", 2), ("ant", 4)} <= set(counts))
        assert sorted(counts) == [("ant", 1), ("ant", 2), ("ant", 3), ("ant", 4), ("bee", 1), ("bee", 2)]
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    eventually(lambda: not checkpoint.exists())


def test_a_lifecycle_call_in_the_wrong_status_is_a_job_error_naming_the_status(jet, tmp_path):
    """Issue 25, point 7: Jet throws IllegalStateException where sparkjet did nothing silently."""
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list("lifecycle"))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = jet.newJob(p, config.setCheckpointLocation(str(tmp_path / "checkpoint")))
    try:
        with pytest.raises(JobError, match=r"cannot resume\(\) it, job status is RUNNING: it is not suspended"):
            job.resume()
        job.suspend()
        for call in (job.suspend, job.restart):
            with pytest.raises(JobError, match=r"job status is SUSPENDED: resume\(\) it first"):
                call()
        job.resume()
        dropFile(watched, "a.txt", ["after the resume"])
        eventually(lambda: jet.getList("lifecycle") == ["after the resume"])
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    for call in (job.suspend, job.resume, job.restart):
        with pytest.raises(JobError, match=r"job status is FAILED: the job has ended"):
            call()


def test_a_cancel_that_lands_as_the_run_stops_for_a_suspension_still_ends_the_job_cancelled(
    jet, tmp_path, monkeypatch
):
    """The CI failure of stop 30: a cancel that came after the run had stopped for a suspension
    (its run returned) let ``join()`` return as if the job had completed."""
    from sparkjet.coredag.runtime.stream.stream_run import StreamRun

    stopping = StreamRun.run

    def cancelledAsItStops(run: StreamRun):
        metrics = stopping(run)
        if run.suspended:
            job.cancel()
        return metrics

    monkeypatch.setattr(StreamRun, "run", cancelledAsItStops)
    watched, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list("cancelled-as-it-stops"))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = jet.newJob(p, config.setCheckpointLocation(str(checkpoint)))
    dropFile(watched, "a.txt", ["ant"])
    eventually(lambda: jet.getList("cancelled-as-it-stops") == ["ant"])
    job.suspend()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert job.getStatus() is JobStatus.FAILED
    assert not checkpoint.exists(), "a cancelled job keeps no checkpoint"


def heldUntilReleased(gate: str):
    """Return a map function that, on the line 'held', notes that its micro-batch runs (the file
    ``entered``) and waits there until the file ``released`` appears."""

    def held(line: str) -> str:
        if line == "held":
            pathlib.Path(gate, "entered").touch()
            while not os.path.exists(os.path.join(gate, "released")):
                time.sleep(0.05)
        return line

    return held


def test_a_job_suspended_while_a_micro_batch_runs_is_running_until_its_run_stopped(jet, tmp_path):
    """Issue 35, point 3: getStatus() said SUSPENDED as soon as suspend() was asked, while the
    micro-batch in progress still ran; as Jet's, the job is SUSPENDED once its run has stopped."""
    watched, gate = tmp_path / "in", tmp_path / "gate"
    watched.mkdir()
    gate.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().map(heldUntilReleased(str(gate))).writeTo(
        Sinks.list("held")
    )
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = jet.newJob(p, config.setCheckpointLocation(str(tmp_path / "checkpoint")))
    try:
        dropFile(watched, "a.txt", ["held", "next"])
        eventually(lambda: (gate / "entered").exists())
        job.suspend()
        assert job.getStatus() is JobStatus.RUNNING, "its micro-batch still runs"
        (gate / "released").touch()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        assert sorted(jet.getList("held")) == ["held", "next"], "the micro-batch in progress ended before the run stopped"
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert job.getStatus() is JobStatus.FAILED
