"""Stream jobs on Spark Structured Streaming: a finite test stream runs to its end, a watched
directory's new files are read while the job runs until it is cancelled, and a user error
fails the job with the stage-named error a batch job gives."""

import concurrent.futures
import os
import re

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, TestSources, UserFunctionError
from sparkjet.planner import JobStatus
from tests.conftest import eventually

pytestmark = pytest.mark.spark


def dropFile(directory, name: str, lines: list[str]) -> None:
    """Write a file beside the watched directory, then move it in at once, as Spark asks."""
    staged = directory.parent / f".{name}.staged"
    staged.write_text("".join(line + "\n" for line in lines))
    os.rename(staged, directory / name)


def test_a_finite_stream_without_timestamps_runs_to_its_end(jet):
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(7)]
    upper = p.readFrom(TestSources.finiteStream(events, itemsPerBatch=3)).withoutTimestamps().map(str.upper)
    upper.writeTo(Sinks.list("finite-upper"))
    upper.writeTo(Sinks.logger())
    job = jet.newJob(p)
    job.join()
    assert sorted(jet.getList("finite-upper")) == sorted(f"ITEM-{number}" for number in range(7))
    assert job.getStatus() is JobStatus.COMPLETED
    assert job.metrics().vertex("map").itemsIn == 7
    assert job.metrics().vertex("loggerSink").itemsIn == 7


def test_a_watched_directory_is_read_while_the_job_runs_until_it_is_cancelled(jet, tmp_path):
    watched = tmp_path / "incoming"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list("watched-lines"))
    job = jet.newJob(p)
    dropFile(watched, "a.txt", ["one", "two"])
    eventually(lambda: len(jet.getList("watched-lines")) == 2)
    assert job.getStatus() is JobStatus.RUNNING
    dropFile(watched, "b.txt", ["three"])
    eventually(lambda: len(jet.getList("watched-lines")) == 3)
    job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert sorted(jet.getList("watched-lines")) == ["one", "three", "two"]
    assert job.getStatus() is JobStatus.FAILED
    assert sorted(os.listdir(watched)) == ["a.txt", "b.txt"]


def failsOnThree(item: str) -> str:
    if item.endswith("3"):
        raise ValueError("three is right out")
    return item


def test_a_user_error_fails_a_stream_job_naming_the_stage(jet):
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(5)]
    p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withoutTimestamps().map(failsOnThree).writeTo(Sinks.noop())
    job = jet.newJob(p)
    with pytest.raises(UserFunctionError, match=r"Stage 'map' \(defined at test_stream_jobs.py:\d+\) failed on item 'item-3'"):
        job.join()
    assert job.getStatus() is JobStatus.FAILED


def committedLines(directory) -> dict[str, list[str]]:
    """Return the lines of each visible file (not checksums) of ``directory``."""
    names = sorted(name for name in os.listdir(directory) if not name.startswith("."))
    return {name: (directory / name).read_text().splitlines() for name in names}


def test_a_files_sink_gets_the_part_files_of_each_micro_batch(jet, tmp_path):
    out = tmp_path / "out"
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(7)]
    p.readFrom(TestSources.finiteStream(events, itemsPerBatch=3)).withoutTimestamps().writeTo(Sinks.files(str(out)))
    jet.newJob(p).join()
    visible = [name for name in os.listdir(out) if not name.startswith(".")]
    assert visible and all(re.fullmatch(r"part-\d{5}-\d{5}", name) for name in visible), visible
    assert not [name for name in os.listdir(out) if name.startswith(".sparkjet-staging")]
    lines = committedLines(out)
    assert sorted(line for name in visible for line in lines[name]) == sorted(item for _, item in events)
    batches = {name.split("-")[1] for name in visible}
    assert len(batches) == 3, "one micro-batch per three items, each in files of its own"


def failsOn(number: int):
    def failing(item: str) -> str:
        if item == f"item-{number}":
            raise ValueError(f"{number} is right out")
        return item

    return failing


def test_a_failed_stream_job_keeps_the_micro_batches_it_committed_and_nothing_partial(jet, tmp_path):
    out = tmp_path / "out"
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(6)]
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withoutTimestamps()
      .map(failsOn(3)).writeTo(Sinks.files(str(out))))
    with pytest.raises(UserFunctionError):
        jet.newJob(p).join()
    assert sorted(line for lines in committedLines(out).values() for line in lines) == ["item-0", "item-1"]
    assert all(name.startswith("part-00000-") or name.startswith(".part-00000-") for name in os.listdir(out))


def test_a_stream_job_failing_before_it_wrote_removes_the_directory_it_made(jet, tmp_path):
    out = tmp_path / "made" / "out"
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(4)]
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withoutTimestamps()
      .map(failsOn(0)).writeTo(Sinks.files(str(out))))
    with pytest.raises(UserFunctionError):
        jet.newJob(p).join()
    assert os.listdir(tmp_path) == []


def test_an_exactly_once_job_reports_its_last_snapshot_and_removes_its_checkpoint_when_done(jet, tmp_path):
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(6)]
    p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withoutTimestamps().writeTo(Sinks.list("snapshotted"))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(tmp_path / "ckpt"))
    job = jet.newJob(p, config)
    job.join()
    snapshot = job.metrics().lastSnapshot
    assert snapshot is not None and snapshot.snapshotId == 2
    assert snapshot.bytes == 0, "a job of stateless stages saves no entries: its tasks write no state file"
    assert "Last snapshot 2 at " in job.metrics().format()
    assert not (tmp_path / "ckpt").exists()
    assert sorted(jet.getList("snapshotted")) == sorted(item for _, item in events)
