"""A stream job's checkpoint storage without Spark: a local path goes through Python's file API,
and a Hadoop URL needs the SparkContext, which a job's run reaches for before its stream starts
(tests/streaming/test_hadoop_checkpoint.py runs it on Spark's JVM)."""

import os

import pytest

from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, LocalCheckpointStorage, checkpointStorage
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint


@pytest.fixture
def noSparkContext(monkeypatch):
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", None)


def test_a_local_file_is_written_whole_under_its_name_and_read_back(tmp_path):
    storage = checkpointStorage(str(tmp_path / "cp"), "Job 'j'")
    assert isinstance(storage, LocalCheckpointStorage)
    assert storage.read("states/a.pickle") is None and storage.names("states") == []
    storage.write("states/a.pickle", b"first")
    storage.write("states/a.pickle", b"second")
    assert storage.read("states/a.pickle") == b"second"
    assert os.listdir(tmp_path / "cp" / "states") == ["a.pickle"]
    assert storage.url("query") == str(tmp_path / "cp" / "query")


def test_a_local_checkpoint_copies_out_and_in_and_goes_whole(tmp_path):
    storage = checkpointStorage(str(tmp_path / "cp"), "Job 'j'")
    storage.write("query/commits/0", b"v1")
    storage.write("claimed-outputs.json", b"[]")
    storage.copyOut("query", str(tmp_path / "out-query"))
    storage.copyOut("claimed-outputs.json", str(tmp_path / "out-claims.json"))
    assert (tmp_path / "out-query" / "commits" / "0").read_bytes() == b"v1"
    assert (tmp_path / "out-claims.json").read_bytes() == b"[]"
    storage.copyIn(str(tmp_path / "out-query"), "copied/query")
    assert storage.names("copied/query/commits") == ["0"]
    storage.remove("claimed-outputs.json")
    assert not storage.exists("claimed-outputs.json")
    for name in ("query", "copied"):
        storage.removeTree(name)
    storage.removeIfEmpty()
    assert not (tmp_path / "cp").exists()


def test_a_hadoop_url_without_a_running_spark_context_says_so(noSparkContext):
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage("hdfs://namenode/checkpoints/counts", "Job 'counts'")
    assert str(raised.value) == (
        "Job 'counts': cannot keep its checkpoint in 'hdfs://namenode/checkpoints/counts': a Hadoop URL is "
        "reached through Spark's JVM, and no SparkSession runs yet"
    )


def test_an_unreachable_checkpoint_has_no_claims_and_its_run_fails_naming_the_job(noSparkContext, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path))
    checkpoint = StreamCheckpoint("hdfs://namenode/checkpoints/counts")
    assert checkpoint.claimedOutputs() == set()
    with pytest.raises(CheckpointError, match=r"^Job 'counts': cannot keep its checkpoint in 'hdfs://namenode/"):
        checkpoint.open("counts")


def test_the_fed_sources_of_a_hadoop_checkpoint_stay_in_a_local_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path))
    assert StreamCheckpoint("hdfs://nn:8020/cp/counts").sourceDirectory(1) == str(
        tmp_path / "fed-sources" / "hdfs%3A%2F%2Fnn%3A8020%2Fcp%2Fcounts" / "source-1"
    )
    assert StreamCheckpoint(str(tmp_path / "cp")).sourceDirectory(0) == str(tmp_path / "cp" / "source-0")


def test_a_local_checkpoint_keeps_the_states_of_the_last_two_micro_batches(tmp_path):
    checkpoint = StreamCheckpoint(str(tmp_path / "cp")).open("j")
    for batch in range(4):
        snapshot = checkpoint.saveStates(batch, {"v": {0: ProcessorState(size=batch)}})
        assert snapshot.bytes == batch, "what the tasks wrote"
    assert sorted(os.listdir(tmp_path / "cp" / "snapshot-records")) == ["batch-000000002.pickle", "batch-000000003.pickle"]
    (tmp_path / "cp" / "query" / "commits").mkdir(parents=True)
    (tmp_path / "cp" / "query" / "commits" / "2").write_text("v1")
    assert checkpoint.restoredStates() == {"v": {0: ProcessorState(size=2)}}
    checkpoint.recordClaims(["b"])
    checkpoint.recordClaims(["a"])
    assert checkpoint.claimedOutputs() == {"a", "b"}
    checkpoint.remove()
    assert not (tmp_path / "cp").exists()


def test_a_checkpoint_without_the_states_spark_committed_says_what_is_missing(tmp_path):
    checkpoint = StreamCheckpoint(str(tmp_path / "cp")).open("j")
    (tmp_path / "cp" / "query" / "commits").mkdir(parents=True)
    (tmp_path / "cp" / "query" / "commits" / "4").write_text("v1")
    with pytest.raises(CheckpointError, match=r"has no snapshot record of micro-batch 4, which Spark committed"):
        checkpoint.restoredStates()


def test_a_copy_leaves_out_the_files_spark_is_still_writing(tmp_path):
    commits = tmp_path / "cp" / "query" / "commits"
    commits.mkdir(parents=True)
    for name in ("0", ".0.crc", ".1.3f2a.tmp", "..1.3f2a.tmp.crc"):
        (commits / name).write_text("v1")
    LocalCheckpointStorage(str(tmp_path / "cp")).copyOut("query", str(tmp_path / "copy"))
    assert sorted(os.listdir(tmp_path / "copy" / "commits")) == [".0.crc", "0"]


@pytest.mark.parametrize("below", ["", "sub/dir"])
def test_a_checkpoint_where_a_file_is_in_the_way_is_a_checkpoint_error_naming_it(tmp_path, below):
    (tmp_path / "file").write_text("the user's")
    location = str(tmp_path / "file" / below) if below else str(tmp_path / "file")
    with pytest.raises(CheckpointError, match=(
        rf"^Job 'j': cannot keep its checkpoint in '{location}': '{tmp_path / 'file'}' is a file, not a directory: "
        "give a directory$"
    )):
        StreamCheckpoint(location).open("j").lock("j")
    assert (tmp_path / "file").read_text() == "the user's"


def test_a_checkpoint_at_a_relative_path_is_made_below_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    StreamCheckpoint("cp").open("j").lock("j").release()
    assert (tmp_path / "cp").is_dir()
