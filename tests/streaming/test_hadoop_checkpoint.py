"""A stream job's checkpoint at a Hadoop URL (issue 16, point 1): Spark's query checkpoint, the
processors' states and the claimed outputs go through Hadoop's FileSystem in the driver's JVM,
so a ``file://`` URL shows Hadoop's own checksum files beside them; suspend, resume, exported
snapshots and the removal at the end work there as on a local path. On a Spark Connect client
(issue 36) the server writes the query checkpoint through Hadoop and the client its own files
through fsspec (``UrlCheckpointStorage``), reading Hadoop's as Hadoop does."""

import concurrent.futures
import os

import pytest

from sparkjet import JobConfig, ProcessingGuarantee
from pyspark.sql.utils import is_remote

from sparkjet.coredag.runtime.checkpoint_storage import (
    CheckpointError,
    HadoopCheckpointStorage,
    UnreadableFile,
    UrlCheckpointStorage,
    checkpointStorage,
)
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
        checksums = {f".{name}.crc" for name in states} | {".claimed-outputs.json.crc"}
        beside = set(os.listdir(checkpoint / "snapshot-records")) | set(os.listdir(checkpoint))
        assert (checksums <= beside) is not is_remote(), "written by Hadoop, or by fsspec on Connect"
        assert (checkpoint / "claimed-outputs.json").exists()
        eventually(lambda: "0" in os.listdir(checkpoint / "query" / "commits"))  # Spark's, once the batch returned
        assert (checkpoint / "query" / "commits" / ".0.crc").exists(), "Spark's query checkpoint is written by Hadoop"
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
        assert (elsewhere / "query" / "metadata").exists()
        assert (elsewhere / "query" / ".metadata.crc").exists() is not is_remote(), "its new id written by Hadoop, or fsspec"
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
    said = (
        "a Spark Connect client reaches it through fsspec, which says: Protocol not known: nosuchfs. Install the "
        "library of 'nosuchfs://' file systems where the client runs"
        if is_remote()
        else 'org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme "nosuchfs"'
    )
    assert str(raised.value).startswith(f"Job 'unknown-scheme': cannot keep its checkpoint in 'nosuchfs://nowhere/cp': {said}")


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


@pytest.mark.parametrize("reached", ["through Hadoop", "through fsspec"])
def test_a_copy_out_of_a_url_checkpoint_leaves_out_the_files_spark_is_still_writing(request, tmp_path, reached):
    commits = tmp_path / "cp" / "query" / "commits"
    commits.mkdir(parents=True)
    for name in ("0", ".1.3f2a.tmp"):
        (commits / name).write_text("v1")
    if reached == "through Hadoop":
        storage = HadoopCheckpointStorage((tmp_path / "cp").as_uri(), request.getfixturevalue("spark").sparkContext)
    else:
        storage = UrlCheckpointStorage((tmp_path / "cp").as_uri())
    storage.open("Job 'copy'")
    storage.copyOut("query", str(tmp_path / "copy"))
    assert sorted(os.listdir(tmp_path / "copy" / "commits")) == ["0"]  # nor a checksum
    assert (tmp_path / "copy" / "commits" / "0").read_text() == "v1"


def test_fsspec_reads_what_hadoop_wrote_as_hadoop_does_and_leaves_no_stale_checksum(spark, tmp_path):
    """What the Spark server writes through Hadoop, a Spark Connect client reads through fsspec:
    the same names (no checksum), the same bytes, and a file changed behind its checksum
    unreadable to both; a file the client rewrites or removes takes its checksum with it."""
    location = (tmp_path / "cp").as_uri()
    hadoop, fsspec = HadoopCheckpointStorage(location, spark.sparkContext), UrlCheckpointStorage(location)
    hadoop.open("Job 'h'")
    fsspec.open("Job 'f'")
    data = bytes(range(256)) * 5  # three of Hadoop's 512-byte chunks
    hadoop.write("query/commits/0", data)
    hadoop.write("query/metadata", b'{"id": "a"}')
    assert (tmp_path / "cp" / "query" / "commits" / ".0.crc").exists()
    assert sorted(fsspec.names("query")) == sorted(hadoop.names("query")) == ["commits", "metadata"]
    assert fsspec.names("query/commits") == ["0"] and fsspec.read("query/commits/0") == data
    (tmp_path / "cp" / "query" / "commits" / "0").write_bytes(data[:-1] + b"\0")
    for storage in (hadoop, fsspec):
        with pytest.raises(UnreadableFile, match="Checksum error"):
            storage.read("query/commits/0")
    fsspec.write("query/metadata", b'{"id": "b"}')
    assert hadoop.read("query/metadata") == b'{"id": "b"}', "its stale checksum went with the old file"
    fsspec.remove("query/commits/0")
    assert not os.listdir(tmp_path / "cp" / "query" / "commits")


def test_a_url_checkpoint_through_fsspec_takes_a_write_a_crash_left_aside_and_copies_in_without_checksums(tmp_path):
    checkpoint = tmp_path / "a b" / "cp"
    storage = UrlCheckpointStorage((tmp_path / "a b" / "cp").as_uri())  # file:///.../a%20b/cp
    storage.open("Job 'j'")
    storage.write("claimed-outputs.json", b'["a"]')
    storage.write("claimed-outputs.json", b'["a", "b"]')
    assert oct(checkpoint.stat().st_mode & 0o777) == "0o700" and storage.read("claimed-outputs.json") == b'["a", "b"]'
    os.rename(checkpoint / "claimed-outputs.json", checkpoint / "claimed-outputs.json.writing")  # killed before the rename
    assert storage.read("claimed-outputs.json") == b'["a", "b"]'
    storage.write("claimed-outputs.json", b'["c"]')
    assert storage.read("claimed-outputs.json") == b'["c"]' and storage.names() == ["claimed-outputs.json"]
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "metadata").write_text("{}")
    (seed / ".metadata.crc").write_bytes(b"crc\0stale")
    storage.copyIn(str(seed), "query")
    assert sorted(os.listdir(checkpoint / "query")) == ["metadata"]
    for name in storage.names():
        storage.removeTree(name)
    storage.removeIfEmpty()
    assert not checkpoint.exists()
