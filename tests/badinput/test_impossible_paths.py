"""Paths and names a user gives that no file system takes (a NUL character, a path that is no
str) are refused where they are given, as Jet checks its arguments, by a sparkjet error naming
the call and the argument: never ``ValueError: embedded null byte`` when the job runs."""

import pathlib

import pytest

from sparkjet import JobConfig, JobError, Pipeline, ProcessingGuarantee, Sinks, Sources
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.pipeline import PipelineError
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

NUL = "holds a NUL character \\(at index {}\\), which no file system takes in a path: give it without one"


@pytest.mark.parametrize(
    "given, message",
    [
        (lambda: Sinks.files("out\0put"), r"^Sinks\.files \(called at .*\): the output directory 'out\\x00put' " + NUL.format(3)),
        (lambda: Sinks.json("out\0put"), r"^Sinks\.json \(called at .*\): the output directory 'out\\x00put' " + NUL.format(3)),
        (lambda: Sources.files("in\0"), r"^Sources\.files \(called at .*\): the directory 'in\\x00' " + NUL.format(2)),
        (lambda: Sources.json("in", "*\0.json"), r"^Sources\.json \(called at .*\): the glob '\*\\x00\.json' " + NUL.format(1)),
        (lambda: Sources.fileWatcher("\0in"), r"^Sources\.fileWatcher \(called at .*\): the directory '\\x00in' " + NUL.format(0)),
        (lambda: Sources.files(7), r"^Sources\.files \(called at .*\): expected the directory as a str or a path, got int 7$"),
    ],
    ids=["Sinks.files", "Sinks.json", "Sources.files", "Sources.json glob", "Sources.fileWatcher", "Sources.files int"],
)
def test_a_source_or_sink_path_no_file_system_takes_is_a_pipeline_error_where_it_is_given(given, message):
    with pytest.raises(PipelineError, match=message):
        given()


def test_a_source_directory_given_as_a_path_is_kept_as_a_str():
    assert Sources.files(pathlib.Path("in")).directory == "in"


@pytest.mark.parametrize(
    "location, message",
    [
        ("check\0point", r"the checkpoint location 'check\\x00point' " + NUL.format(5)),
        (42, r"expected the checkpoint location as a str or a path, got int 42$"),
        ("", r"the checkpoint location is empty: give a directory, or None to keep the checkpoint under \$SPARKJET_STATE_DIR$"),
    ],
)
def test_a_checkpoint_location_no_file_system_takes_is_a_checkpoint_error_where_it_is_set(location, message):
    with pytest.raises(CheckpointError, match=r"^JobConfig\.setCheckpointLocation: " + message):
        JobConfig().setCheckpointLocation(location)


def test_a_checkpoint_location_given_as_a_path_or_none_is_taken():
    config = JobConfig().setCheckpointLocation(pathlib.Path("/tmp/cp"))
    assert config.checkpointLocation("j") == "/tmp/cp"
    assert config.setCheckpointLocation(None).checkpointLocation("j") != "/tmp/cp"


@pytest.mark.parametrize("name", ["snap\0shot", "", "new\nline"])
def test_a_snapshot_name_that_cannot_name_a_directory_is_refused_where_it_is_set(name):
    with pytest.raises(JobError, match=r"^JobConfig\.setInitialSnapshotName: the name .* cannot name a directory"):
        JobConfig().setInitialSnapshotName(name)


def word(line: str) -> str:
    return line


@pytest.mark.spark
def test_cancel_and_export_to_a_name_that_cannot_name_a_directory_leaves_the_job_running(jet, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().map(word).writeTo(Sinks.list("nul-export"))
    config = JobConfig().setName("nul-export").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = jet.newJob(p, config.setCheckpointLocation(str(tmp_path / "checkpoint")))
    try:
        dropFile(watched, "a.txt", ["ant"])
        eventually(lambda: jet.getList("nul-export") == ["ant"])
        with pytest.raises(JobError, match=r"^Job 'nul-export': cancelAndExportSnapshot: the name 'a\\x00b' cannot name a directory"):
            job.cancelAndExportSnapshot("a\0b")
        with pytest.raises(JobError, match=r"^Job 'nul-export': exportSnapshot: the name 'a\\x00b' cannot name a directory"):
            job.exportSnapshot("a\0b")
        dropFile(watched, "b.txt", ["bee"])
        eventually(lambda: sorted(jet.getList("nul-export")) == ["ant", "bee"])
    finally:
        job.cancel()
