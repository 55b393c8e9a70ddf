"""Exported snapshots (issue 16, point 5), as Jet's ``Job.exportSnapshot``,
``cancelAndExportSnapshot`` and ``JobConfig.setInitialSnapshotName``: a new version of a
pipeline starts from an old one's state where the state fits, and says why not where it does not."""

import concurrent.futures

import pytest

from sparkjet import (
    AggregateOperations,
    JobConfig,
    JobError,
    Pipeline,
    ProcessingGuarantee,
    Sinks,
    SnapshotError,
    Sources,
    WindowDefinition,
)
from sparkjet.planner import JobStatus, plan
from sparkjet.coredag.runtime.stream.checkpoint import loadSnapshot
from sparkjet.coredag.runtime.stream.exported_snapshot import JobStateSnapshot, checkCompatible
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile


def word(line: str) -> str:
    return line


def runningCounts(watched, listName: str, after=None) -> Pipeline:
    """Count each word's lines so far (a rolling aggregate); ``after`` maps the counts, as a new version may."""
    p = Pipeline.create()
    counts = (p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
              .groupingKey(word).rollingAggregate(AggregateOperations.counting()))
    (counts.map(after) if after else counts).writeTo(Sinks.list(listName))
    return p


def shouted(entry: tuple) -> tuple:
    return entry[0].upper(), entry[1]


@pytest.fixture
def stateDirectory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.mark.spark
def test_a_new_version_goes_on_from_the_snapshot_its_old_version_was_cancelled_with(jet, tmp_path, stateDirectory):
    watched = tmp_path / "in"
    watched.mkdir()
    old = jet.newJob(runningCounts(watched, "v1"), JobConfig().setName("counting-v1"))
    try:
        dropFile(watched, "a.txt", ["ant", "bee", "ant"])
        eventually(lambda: len(jet.getList("v1")) == 3)
        snapshot = old.cancelAndExportSnapshot("counts")
    finally:
        old.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        old.join()
    assert (snapshot.name(), snapshot.jobName()) == ("counts", "counting-v1") and snapshot.payloadSize() > 0
    assert jet.getJobStateSnapshot("counts") == snapshot

    new = jet.newJob(runningCounts(watched, "v2", after=shouted), JobConfig().setInitialSnapshotName("counts"))
    try:
        dropFile(watched, "b.txt", ["ant", "cat"])
        eventually(lambda: len(jet.getList("v2")) == 2)
        assert sorted(jet.getList("v2")) == [("ANT", 3), ("CAT", 1)], "a.txt is not read again; ant goes on at 3"
    finally:
        new.cancel()
    snapshot.destroy()
    with pytest.raises(SnapshotError, match="No snapshot was exported under the name 'counts'"):
        jet.getJobStateSnapshot("counts")


@pytest.mark.spark
def test_a_job_exporting_a_snapshot_goes_on_running_and_a_suspended_one_exports_where_it_stopped(
    jet, tmp_path, stateDirectory
):
    watched, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    watched.mkdir()
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(checkpoint))
    job = jet.newJob(runningCounts(watched, "exporting"), config)
    counts = jet.getList("exporting")
    try:
        dropFile(watched, "a.txt", ["ant"])
        eventually(lambda: len(counts) == 1)
        running = job.exportSnapshot("while-running")
        dropFile(watched, "b.txt", ["ant"])
        eventually(lambda: ("ant", 2) in counts)
        assert job.getStatus() is JobStatus.RUNNING
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        suspended = job.exportSnapshot("while-suspended")
        assert suspended.batchId > running.batchId
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    with pytest.raises(SnapshotError, match="no longer running"):
        job.exportSnapshot("too-late")
    later = jet.newJob(runningCounts(watched, "from-suspended"), JobConfig().setInitialSnapshotName("while-suspended"))
    try:
        dropFile(watched, "c.txt", ["ant"])
        eventually(lambda: ("ant", 3) in jet.getList("from-suspended"))
        assert jet.getList("from-suspended") == [("ant", 3)]
    finally:
        later.cancel()


def snapshotOf(p: Pipeline, kinds: dict, sourceCount: int = 1) -> JobStateSnapshot:
    return JobStateSnapshot("old", "old-job", 0, 3, 10, kinds, sourceCount, "/nowhere")


def test_a_vertex_running_another_processor_under_the_same_name_cannot_take_its_state(tmp_path):
    p = runningCounts(tmp_path, "x")
    windowed = Pipeline.create()
    (windowed.readFrom(Sources.fileWatcher(str(tmp_path))).withIngestionTimestamps()
       .window(WindowDefinition.tumbling(10)).aggregate(AggregateOperations.counting()).setName("rolling-aggregate")
       .writeTo(Sinks.list("x")))
    snapshot = snapshotOf(p, {"rolling-aggregate": "TransformStatefulP[zero, increment, add, sub]"})
    assert checkCompatible(snapshot, "new", plan(p).dag, 1) == []
    with pytest.raises(SnapshotError, match=(
        r"Job 'new' cannot start from snapshot 'old' \(of job 'old-job'\): vertex 'rolling-aggregate' ran a "
        r"TransformStatefulP\[zero, increment, add, sub\] there and runs a SlidingWindowP\[.*\] here, so its state "
        r"does not fit; rename the stage"
    )):
        checkCompatible(snapshot, "new", plan(windowed).dag, 1)


def test_other_stream_sources_cannot_go_on_from_where_the_old_ones_were_read(tmp_path):
    p = runningCounts(tmp_path, "x")
    with pytest.raises(SnapshotError, match=r"that job read 2 stream source\(s\), this one reads 1"):
        checkCompatible(snapshotOf(p, {}, sourceCount=2), "new", plan(p).dag, 1)


def test_the_state_of_a_vertex_the_new_version_no_longer_has_is_dropped(tmp_path):
    p = runningCounts(tmp_path, "x")
    assert checkCompatible(snapshotOf(p, {"gone": "TransformStatefulP"}), "new", plan(p).dag, 1) == ["gone"]


def test_a_missing_snapshot_says_where_it_was_looked_for(stateDirectory):
    with pytest.raises(SnapshotError, match=r"No snapshot was exported under the name 'nope' \(looked in .*state"):
        loadSnapshot("nope")


@pytest.mark.spark
def test_a_batch_job_has_no_snapshot_to_start_from_or_export(jet, tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    p = Pipeline.create()
    p.readFrom(Sources.files(str(tmp_path))).writeTo(Sinks.list("batch-lines"))
    with pytest.raises(JobError, match=r"setInitialSnapshotName\('old'\) is for stream jobs"):
        jet.newJob(p, JobConfig().setInitialSnapshotName("old"))
    job = jet.newJob(p)
    job.join()
    with pytest.raises(JobError, match=r"exportSnapshot\(\) is for stream jobs"):
        job.exportSnapshot("x")
