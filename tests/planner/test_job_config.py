"""Jet's JobConfig and a stream job's checkpoint: where it lives, the states of Spark's last
committed micro-batch, the output directories a restarted job goes on writing into."""

import os

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.planner import plan
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.stream_job import warnNotExactlyOnce
from sparkjet.coredag.runtime.stream.stream_dag import notExactlyOnce, resumingOutputs


def test_a_job_config_is_jets_fluent_and_mutable_one():
    config = JobConfig()
    assert config.getProcessingGuarantee() is ProcessingGuarantee.NONE
    config.setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    assert config.setName("counts").getName() == "counts"
    assert config.getProcessingGuarantee() is ProcessingGuarantee.EXACTLY_ONCE
    with pytest.raises(TypeError, match="takes a ProcessingGuarantee"):
        config.setProcessingGuarantee("EXACTLY_ONCE")


def test_the_default_checkpoint_is_named_after_the_job_under_the_state_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path))
    assert JobConfig().checkpointLocation("word counts/1") == os.path.join(tmp_path, "word%20counts%2F1")
    assert JobConfig().setCheckpointLocation("/elsewhere").checkpointLocation("x") == "/elsewhere"


def test_a_restart_takes_the_states_of_sparks_last_committed_micro_batch(tmp_path):
    checkpoint = StreamCheckpoint(str(tmp_path))
    assert checkpoint.lastCommittedBatch() is None and checkpoint.restoredStates() == {}
    for batch in range(3):
        snapshot = checkpoint.saveStates(batch, {"window": {0: ProcessorState((f"w/0/{batch}.base",), 10 + batch)}})
        assert snapshot.snapshotId == batch and snapshot.bytes == 10 + batch
    assert sorted(os.listdir(tmp_path / "snapshot-records")) == ["batch-000000001.pickle", "batch-000000002.pickle"]
    commits = tmp_path / "query" / "commits"
    commits.mkdir(parents=True)
    for batch in (0, 1):  # Spark committed 0 and 1; 2 was saved, then the driver died
        (commits / str(batch)).write_text("v1")
    assert checkpoint.lastCommittedBatch() == 1
    restored = checkpoint.restoredStates()["window"][0]
    assert restored.files == ("w/0/1.base",)
    assert not [name for name in os.listdir(tmp_path / "snapshot-records") if name.endswith(".writing")]


def test_a_restarted_job_goes_on_writing_into_the_directories_it_claimed(tmp_path):
    checkpoint = StreamCheckpoint(str(tmp_path / "checkpoint"))
    checkpoint.recordClaims([str(tmp_path / "out")])
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(tmp_path))).withoutTimestamps().writeTo(Sinks.files(str(tmp_path / "out")))
    dag = resumingOutputs(plan(p).dag, checkpoint.claimedOutputs())
    (sink,) = [vertex.processorSupplier for vertex in dag if vertex.name.startswith("filesSink")]
    assert sink.resumes
    (tmp_path / "out").mkdir()
    sink.preflight()  # the directory exists: it is the job's own


def test_an_exactly_once_stream_job_says_which_sinks_cannot_be_exactly_once(tmp_path):
    p = Pipeline.create()
    lines = p.readFrom(Sources.fileWatcher(str(tmp_path))).withoutTimestamps()
    lines.writeTo(Sinks.logger())
    lines.writeTo(Sinks.files(str(tmp_path / "out")))
    lines.writeTo(Sinks.list("lines"))
    assert notExactlyOnce(plan(p).dag) == ["loggerSink"]
    with pytest.warns(UserWarning, match=r"Job 'j' is EXACTLY_ONCE, but its sink\(s\) loggerSink may repeat"):
        warnNotExactlyOnce("j", ["loggerSink"])
