"""Exported snapshots of jobs reading sources sparkjet feeds (issue 34, point 4): a SourceBuilder
source and TestSources.finiteStream write their files in the checkpoint, and Spark's log of what
its file source read names them by absolute path. A job started from the snapshot at another
checkpoint location, a remote one included, reads each item the old job did not, once."""

import concurrent.futures
import os
from collections import Counter

import pytest

from sparkjet import JobConfig, Pipeline, Sinks, SourceBuilder, TestSources
from sparkjet.coredag.runtime.stream.exported_snapshot import movedSourceLog
from sparkjet.planner import JobStatus
from tests.conftest import eventually
from tests.streaming.test_exported_snapshots import stateDirectory  # a fixture
from tests.streaming.test_remote_checkpoint import exactlyOnceAt, ftpRoot  # and ftpRoot a fixture
from tests.streaming.test_source_builder_restarts import Numbers, addReleased, release, restoreFrom, snapshotOf

TOTAL = 2000


def numbersJob(jet, listName: str, config: JobConfig):
    """Start a job writing the numbers a built source with snapshot functions adds to list ``listName``."""
    source = (SourceBuilder.stream("numbers", Numbers).fillBufferFn(addReleased)
              .createSnapshotFn(snapshotOf).restoreSnapshotFn(restoreFrom).build())
    p = Pipeline.create()
    p.readFrom(source).withoutTimestamps().writeTo(Sinks.list(listName))
    return jet.newJob(p, config)


def cancelledWithSnapshot(job, name: str):
    """Cancel ``job`` exporting snapshot ``name``; return the snapshot once the job ended."""
    try:
        snapshot = job.cancelAndExportSnapshot(name)
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    return snapshot


def numbersFromSnapshot(jet, oldLocation: str, newLocation: str) -> tuple[list, list]:
    """Run a numbers job at ``oldLocation`` until it read some numbers and is fed more, cancel it
    exporting a snapshot, start one from the snapshot at ``newLocation`` and let it read up to
    TOTAL; return the numbers each wrote."""
    release(0)
    old = numbersJob(jet, "fed-old", exactlyOnceAt(oldLocation))
    oldNumbers = jet.getList("fed-old")
    release(400)
    eventually(lambda: len(oldNumbers) >= 400)
    release(1200)  # fed, and being fed, as the snapshot is exported
    eventually(lambda: len(oldNumbers) > 400)
    snapshot = cancelledWithSnapshot(old, "fed")
    new = numbersJob(jet, "fed-new", exactlyOnceAt(newLocation).setInitialSnapshotName(snapshot.name()))
    newNumbers = jet.getList("fed-new")
    try:
        release(TOTAL)
        eventually(lambda: TOTAL - 1 in newNumbers or new.getStatus() is JobStatus.FAILED)
    finally:
        new.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        new.join()  # a failed job raises its failure here
    return list(oldNumbers), list(newNumbers)


@pytest.mark.spark
def test_a_job_started_from_a_snapshot_of_a_built_source_reads_each_item_the_old_one_did_not_once(
    jet, tmp_path, stateDirectory
):
    old, new = str(tmp_path / "old-checkpoint"), str(tmp_path / "new-checkpoint")
    oldNumbers, newNumbers = numbersFromSnapshot(jet, old, new)
    assert Counter(oldNumbers + newNumbers) == Counter(range(TOTAL)), "each number once: none lost, none read twice"
    assert min(newNumbers) == len(oldNumbers), "the new job goes on where the old one was cancelled"


@pytest.mark.spark
@pytest.mark.parametrize("oldAtFtp", [False, True], ids=["exported-from-a-local-path", "exported-from-ftp"])
def test_a_job_at_a_remote_checkpoint_started_from_a_snapshot_of_a_built_source_reads_each_item_once(
    jet, tmp_path, stateDirectory, ftpRoot, oldAtFtp
):
    """Exported from a local checkpoint, the snapshot holds Hadoop's checksums of Spark's logs,
    which Hadoop checks as it copies them to the URL: a rewritten log's is removed."""
    _, url = ftpRoot
    old = f"{url}/old-checkpoint" if oldAtFtp else str(tmp_path / "old-checkpoint")
    oldNumbers, newNumbers = numbersFromSnapshot(jet, old, f"{url}/new-checkpoint")
    assert Counter(oldNumbers + newNumbers) == Counter(range(TOTAL)), "each number once: none lost, none read twice"
    assert min(newNumbers) == len(oldNumbers), "the new job goes on where the old one was cancelled"


@pytest.mark.spark
def test_a_job_exporting_a_snapshot_of_a_built_source_goes_on_whole_beside_the_job_started_from_it(
    jet, tmp_path, stateDirectory
):
    """The new job reads and removes the files in its own checkpoint, never the old job's."""
    release(0)
    old = numbersJob(jet, "going-on", exactlyOnceAt(str(tmp_path / "old-checkpoint")))
    oldNumbers = jet.getList("going-on")
    try:
        release(400)
        eventually(lambda: len(oldNumbers) >= 400)
        release(1200)
        before = len(oldNumbers)
        snapshot = old.exportSnapshot("going-on")
        after = len(oldNumbers)
        fromSnapshot = exactlyOnceAt(str(tmp_path / "new-checkpoint")).setInitialSnapshotName(snapshot.name())
        new = numbersJob(jet, "started", fromSnapshot)
        newNumbers = jet.getList("started")
        try:
            release(TOTAL)
            eventually(lambda: {TOTAL - 1} <= set(oldNumbers) & set(newNumbers) or JobStatus.FAILED in (
                old.getStatus(), new.getStatus()))
        finally:
            new.cancel()
    finally:
        old.cancel()
    for job in (old, new):
        with pytest.raises(concurrent.futures.CancelledError):
            job.join()
    assert Counter(oldNumbers) == Counter(range(TOTAL)), "the old job reads each number once, its files its own"
    first = min(newNumbers)
    assert before <= first <= after and Counter(newNumbers) == Counter(range(first, TOTAL))


EVENTS = [(number, number) for number in range(60)]
COMPACT_INTERVAL = "spark.sql.streaming.fileSource.log.compactInterval"


def finiteJob(jet, listName: str, config: JobConfig):
    """Start a job writing the items of a finite stream, 2 a micro-batch, to list ``listName``."""
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=2)).withoutTimestamps().writeTo(Sinks.list(listName))
    return jet.newJob(p, config)


@pytest.fixture
def compactedSourceLogs(spark):
    """Have Spark's file sources compact their logs every third micro-batch (``2.compact`` holds
    batches 0 to 2) where they do every tenth."""
    spark.conf.set(COMPACT_INTERVAL, "3")
    yield
    spark.conf.unset(COMPACT_INTERVAL)


@pytest.mark.spark
def test_a_job_started_from_a_snapshot_of_a_finite_stream_reads_the_rest_of_it_once(
    jet, tmp_path, stateDirectory, compactedSourceLogs
):
    old = finiteJob(jet, "finite-old", exactlyOnceAt(str(tmp_path / "old-checkpoint")))
    eventually(lambda: len(jet.getList("finite-old")) >= 10)
    snapshot = cancelledWithSnapshot(old, "finite")
    assert "2.compact" in os.listdir(os.path.join(snapshot.directory, "query", "sources", "0"))
    new = finiteJob(jet, "finite-new", exactlyOnceAt(str(tmp_path / "new-checkpoint")).setInitialSnapshotName("finite"))
    new.join()
    assert new.getStatus() is JobStatus.COMPLETED
    oldItems, newItems = jet.getList("finite-old"), jet.getList("finite-new")
    assert Counter(oldItems + newItems) == Counter(item for _, item in EVENTS), "each item once, none read twice"
    assert snapshot.batchId >= 1 and newItems[0] == len(oldItems)


def test_a_source_log_names_the_files_of_a_moved_directory_in_its_new_url_and_no_other_file():
    old, new = "file:/old/cp/source-0", "file:/state/fed-sources/ftp%253A%252F%252Fhost%252Fcp/source-0"
    log = "\n".join([
        "v1",
        '{"path":"file:/old/cp/source-0/events-000000003.txt","timestamp":1764633600000,"batchId":9}',
        '{"path":"file:/old/cp/source-0/sub/events-000000004.txt","timestamp":1764633600001,"batchId":9}',
        '{"path":"file:/watched/a%20b.txt","timestamp":1764633600002,"batchId":9}',
    ])
    assert movedSourceLog(log, {old: new}).split("\n") == [
        "v1",
        f'{{"path":"{new}/events-000000003.txt","timestamp":1764633600000,"batchId":9}}',
        '{"path":"file:/old/cp/source-0/sub/events-000000004.txt","timestamp":1764633600001,"batchId":9}',
        '{"path":"file:/watched/a%20b.txt","timestamp":1764633600002,"batchId":9}',
    ]
    rate = 'v1\n{"startTimeMs":1764633600000}'
    assert movedSourceLog(rate, {old: new}) == rate, "another source's log stays as it is"
