"""Stream jobs on Spark Structured Streaming: a finite test stream runs to its end, a watched
directory's new files are read while the job runs until it is cancelled, and a user error
fails the job with the stage-named error a batch job gives."""

import concurrent.futures
import os
import time

import pytest

from sparkjet import Pipeline, Sinks, Sources, TestSources, UserFunctionError
from sparkjet.planner import JobStatus

pytestmark = pytest.mark.spark

WAIT_SECONDS = 60


def eventually(condition, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.2)


def dropFile(directory, name: str, lines: list[str]) -> None:
    """Write a file beside the watched directory, then move it in at once, as Spark asks."""
    staged = directory.parent / f".{name}.staged"
    staged.write_text("".join(line + "\n" for line in lines))
    os.rename(staged, directory / name)


def test_a_finite_stream_without_timestamps_runs_to_its_end(jet):
    p = Pipeline.create()
    events = [(number, f"item-{number}") for number in range(7)]
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=3)).withoutTimestamps()
      .map(str.upper).writeTo(Sinks.list("finite-upper")))
    job = jet.newJob(p)
    job.join()
    assert sorted(jet.getList("finite-upper")) == sorted(f"ITEM-{number}" for number in range(7))
    assert job.getStatus() is JobStatus.COMPLETED
    assert job.metrics().vertex("map").itemsIn == 7


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
