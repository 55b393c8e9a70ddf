"""A SourceBuilder stream source across a job's restarts (issue 25, point 3): with Jet's
createSnapshotFn and restoreSnapshotFn, a job suspended and resumed, or restarted, goes on from
the source's snapshot saved with the last file it fed, so every item reaches the job once; and
Spark removes each fed file once the micro-batch that read it is committed (issue 25, point 10)."""

import os
import threading
from collections import Counter

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, SourceBuilder
from sparkjet.coredag.processors.built_stream_source import FED_FILE, SNAPSHOT_FILE
from sparkjet.planner import JobStatus
from tests.streaming.test_stream_jobs import eventually

pytestmark = pytest.mark.spark

RELEASED = {"upTo": 0}
"""How far the numbers source may count: the test lets it go on a step at a time."""
RELEASE = threading.Lock()


class Numbers:
    """A source's state: the next number to add."""

    def __init__(self, context):
        self.next = 0


def addReleased(state: Numbers, buffer) -> None:
    """Add up to 50 numbers a call, none past what the test released."""
    with RELEASE:
        upTo = RELEASED["upTo"]
    for number in range(state.next, min(state.next + 50, upTo)):
        buffer.add(number)
    state.next = max(state.next, min(state.next + 50, upTo))


def snapshotOf(state: Numbers) -> int:
    return state.next


def restoreFrom(state: Numbers, snapshots: list) -> None:
    state.next = snapshots[0]


def release(upTo: int) -> None:
    with RELEASE:
        RELEASED["upTo"] = upTo


def numbersJob(jet, checkpoint, listName: str):
    release(0)
    source = (SourceBuilder.stream("numbers", Numbers).fillBufferFn(addReleased)
              .createSnapshotFn(snapshotOf).restoreSnapshotFn(restoreFrom).build())
    p = Pipeline.create()
    p.readFrom(source).withoutTimestamps().writeTo(Sinks.list(listName))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(checkpoint))
    return jet.newJob(p, config)


def test_a_suspended_resumed_and_restarted_job_gets_every_item_of_a_built_source_once(jet, tmp_path):
    job = numbersJob(jet, tmp_path / "checkpoint", "numbers-once")
    numbers = jet.getList("numbers-once")
    try:
        release(700)
        eventually(lambda: len(numbers) >= 700)
        release(1000)  # fed files may wait for the next micro-batch when the job stops
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        job.resume()
        eventually(lambda: len(numbers) >= 1000)
        release(1400)
        eventually(lambda: len(numbers) >= 1200)
        job.restart()
        release(2000)
        eventually(lambda: 1999 in numbers)
        assert Counter(numbers) == Counter(range(2000)), "each number once: none lost, none fed twice"
    finally:
        job.cancel()


def fedFileNumbers(directory) -> list[int]:
    """Return the numbers of the files fed into ``directory`` that are still there."""
    return [int(match[1]) for name in os.listdir(directory) if (match := FED_FILE.fullmatch(name))]


def snapshotNumbers(directory) -> list[int]:
    """Return the numbers of the fed files whose snapshots are in ``directory``."""
    return [int(match[1]) for name in os.listdir(directory) if (match := SNAPSHOT_FILE.fullmatch(name))]


def test_spark_removes_the_files_a_built_source_fed_once_their_micro_batches_are_committed(jet, tmp_path):
    """Spark's file source removes a micro-batch's files when it starts the next micro-batch
    with new input (its cleanSource), so the directory keeps the files of the last ones only."""
    job = numbersJob(jet, tmp_path / "checkpoint", "numbers-removed")
    numbers, fed = jet.getList("numbers-removed"), tmp_path / "checkpoint" / "source-0"
    lastFed = {}
    try:
        for step in range(1, 7):
            release(step * 100)
            eventually(lambda: len(numbers) >= step * 100)
            lastFed[step] = max(snapshotNumbers(fed))
        eventually(lambda: all(number > lastFed[5] for number in fedFileNumbers(fed)))
        assert len(snapshotNumbers(fed)) <= 2, "the last snapshot saved, and the one before while the next is fed"
        assert Counter(numbers) == Counter(range(600))
    finally:
        job.cancel()
