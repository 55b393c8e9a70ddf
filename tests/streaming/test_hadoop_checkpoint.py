"""A stream job's checkpoint at a Hadoop URL (issue 16, point 1): Spark's query checkpoint, the
processors' states and the claimed outputs go through Hadoop's FileSystem in the driver's JVM,
so a ``file://`` URL shows Hadoop's own checksum files beside them; suspend, resume, exported
snapshots and the removal at the end work there as on a local path."""

import concurrent.futures
import os

import pytest

from sparkjet import JobConfig, ProcessingGuarantee
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, HadoopCheckpointStorage, checkpointStorage
from sparkjet.planner import JobStatus
from tests.streaming.test_exported_snapshots import runningCounts
from tests.streaming.test_stream_jobs import dropFile, eventually

pytestmark = pytest.mark.spark


def exactlyOnceAt(location: str) -> JobConfig:
    return JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(location)


def test_a_job_keeps_its_checkpoint_at_a_file_url_through_hadoop_and_removes_it_when_cancelled(
    jet, tmp_path, monkeypatch
):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    watched, checkpoint = tmp_path / "in", tmp_path / "cp"
    watched.mkdir()
    job = jet.newJob(runningCounts(watched, "hadoop-counts"), exactlyOnceAt("file://" + str(checkpoint)))
    counts = jet.getList("hadoop-counts")
    try:
        dropFile(watched, "a.txt", ["ant", "bee", "ant"])
        eventually(lambda: len(counts) == 3)
        job.suspend()
        eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
        states = sorted(name for name in os.listdir(checkpoint / "snapshot-records") if not name.startswith("."))
        assert states and all(name.startswith("batch-") and name.endswith(".pickle") for name in states)
        assert {f".{name}.crc" for name in states} <= set(os.listdir(checkpoint / "snapshot-records")), "written by Hadoop"
        assert (checkpoint / "claimed-outputs.json").exists() and (checkpoint / ".claimed-outputs.json.crc").exists()
        eventually(lambda: "0" in os.listdir(checkpoint / "query" / "commits"))  # Spark's, once the batch returned
        dropFile(watched, "b.txt", ["ant"])
        job.resume()
        eventually(lambda: ("ant", 3) in counts)
        exported = job.exportSnapshot("from-hadoop")
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    eventually(lambda: not checkpoint.exists())
    assert sorted(counts) == [("ant", 1), ("ant", 2), ("ant", 3), ("bee", 1)]
    assert os.listdir(os.path.join(exported.directory, "query", "commits"))

    elsewhere = tmp_path / "cp2"
    later = jet.newJob(
        runningCounts(watched, "hadoop-later"),
        exactlyOnceAt("file://" + str(elsewhere)).setInitialSnapshotName("from-hadoop"),
    )
    try:
        dropFile(watched, "c.txt", ["ant"])
        eventually(lambda: ("ant", 4) in jet.getList("hadoop-later"))
        assert jet.getList("hadoop-later") == [("ant", 4)], "a.txt and b.txt are not read again"
        assert (elsewhere / "query" / ".metadata.crc").exists()
    finally:
        later.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        later.join()
    eventually(lambda: not elsewhere.exists())


def test_a_checkpoint_at_a_scheme_hadoop_does_not_know_is_refused_naming_it_when_the_job_is_submitted(
    jet, tmp_path
):
    watched = tmp_path / "in"
    watched.mkdir()
    config = exactlyOnceAt("nosuchfs://nowhere/cp").setName("unknown-scheme")
    with pytest.raises(CheckpointError) as raised:
        jet.newJob(runningCounts(watched, "never"), config)
    assert str(raised.value).startswith(
        "Job 'unknown-scheme': cannot keep its checkpoint in 'nosuchfs://nowhere/cp': "
        "org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme \"nosuchfs\""
    )


def test_a_write_a_crash_left_aside_is_read_there_and_moved_into_place_by_the_next(spark, tmp_path):
    checkpoint = tmp_path / "cp"
    storage = checkpointStorage("file://" + str(checkpoint), "Job 'j'")
    assert isinstance(storage, HadoopCheckpointStorage)
    storage.write("claimed-outputs.json", b'["a"]')
    storage.write("claimed-outputs.json", b'["a", "b"]')
    assert storage.read("claimed-outputs.json") == b'["a", "b"]'
    for name in ("claimed-outputs.json", ".claimed-outputs.json.crc"):  # killed after the delete, before the rename
        os.rename(checkpoint / name, checkpoint / name.replace(".json", ".json.writing"))
    assert storage.read("claimed-outputs.json") == b'["a", "b"]'
    storage.write("claimed-outputs.json", b'["c"]')
    assert storage.read("claimed-outputs.json") == b'["c"]' and storage.names() == ["claimed-outputs.json"]
    storage.copyOut("claimed-outputs.json", str(tmp_path / "copied.json"))
    storage.copyIn(str(tmp_path / "copied.json"), "query/copied.json")
    assert (checkpoint / "query" / "copied.json").read_bytes() == b'["c"]'
    assert not (tmp_path / ".copied.json.crc").exists(), "copied out without Hadoop's checksums"
    for name in ("claimed-outputs.json", "query"):
        storage.removeTree(name)
    storage.removeIfEmpty()
    assert not checkpoint.exists()


def test_a_copy_out_of_a_hadoop_checkpoint_leaves_out_the_files_spark_is_still_writing(spark, tmp_path):
    commits = tmp_path / "cp" / "query" / "commits"
    commits.mkdir(parents=True)
    for name in ("0", ".0.crc", ".1.3f2a.tmp", "..1.3f2a.tmp.crc"):
        (commits / name).write_text("v1")
    storage = HadoopCheckpointStorage((tmp_path / "cp").as_uri(), spark.sparkContext)
    storage.open("Job 'copy'")
    storage.copyOut("query", str(tmp_path / "copy"))
    assert sorted(os.listdir(tmp_path / "copy" / "commits")) == ["0"]  # Hadoop's file system lists no checksum
