"""Names that become paths delete nothing that is not the job's (issue 25, point 8): a job or
snapshot name maps to a directory of its own, one-to-one, inside its parent (``..`` and ``.``
included); a completed job removes only what it keeps in its checkpoint, never a files sink or a
user's file found there; a name that cannot be a directory is a clear error."""

import concurrent.futures

import pytest

from sparkjet import JobConfig, JobError, Pipeline, ProcessingGuarantee, Sinks, Sources, SparkjetError, TestSources
from sparkjet.coredag.runtime.stream.state_directory import fileName
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

EVENTS = [(number, f"item-{number}") for number in range(6)]


@pytest.mark.parametrize(
    "names", [("日本", "中国"), ("job 1", "job_1"), ("a/b", "a_b"), ("a%2Fb", "a/b"), (".", "%2E"), ("..", "._")]
)
def test_two_names_never_share_a_directory(names):
    first, second = (fileName(name, "Job") for name in names)
    assert first != second


@pytest.mark.parametrize("name", [".", "..", "../x", "a/../../b", ".hidden", "/abs", "~", "日本"])
def test_a_name_is_one_directory_name_inside_its_parent(name):
    encoded = fileName(name, "Job")
    assert "/" not in encoded and not encoded.startswith(".") and encoded not in (".", "..")


@pytest.mark.parametrize("name", ["x" * 300, "日" * 90, "nul\0byte", "", "tab\there"])
def test_a_name_that_cannot_be_a_directory_is_a_job_error_naming_it(name):
    with pytest.raises(JobError, match="Job 'j': the name .* (cannot name a directory|is too long)"):
        fileName(name, "Job 'j'")


@pytest.fixture
def stateDirectory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def guaranteed(name: str) -> JobConfig:
    return JobConfig().setName(name).setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)


@pytest.mark.spark
@pytest.mark.parametrize("name", ["..", "."])
def test_a_job_named_dot_dot_removes_nothing_beside_its_checkpoint(jet, tmp_path, stateDirectory, name):
    stateDirectory.mkdir()
    (stateDirectory / "another-job").mkdir()
    (stateDirectory / "another-job" / "keep.txt").write_text("kept")
    (tmp_path / "beside.txt").write_text("kept")
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=len(EVENTS))).withoutTimestamps().writeTo(Sinks.list(f"dots{name}"))
    jet.newJob(p, guaranteed(name)).join()
    assert sorted(jet.getList(f"dots{name}")) == sorted(item for _, item in EVENTS)
    assert (stateDirectory / "another-job" / "keep.txt").read_text() == "kept"
    assert (tmp_path / "beside.txt").read_text() == "kept"
    assert sorted(path.name for path in stateDirectory.iterdir()) == ["another-job"]


@pytest.mark.spark
def test_a_completed_job_keeps_the_files_sink_and_the_users_files_in_its_checkpoint_directory(jet, tmp_path):
    checkpoint = tmp_path / "mine"
    checkpoint.mkdir()
    (checkpoint / "notes.txt").write_text("the user's")
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=len(EVENTS))).withoutTimestamps().writeTo(
        Sinks.files(str(checkpoint / "out"))
    )
    jet.newJob(p, guaranteed("inside").setCheckpointLocation(str(checkpoint))).join()
    assert sorted(path.name for path in checkpoint.iterdir()) == ["notes.txt", "out"]
    written = [line for part in (checkpoint / "out").glob("part-*") for line in part.read_text().splitlines()]
    assert sorted(written) == sorted(item for _, item in EVENTS)


@pytest.mark.spark
def test_snapshots_named_dot_and_dot_dot_stay_among_the_snapshots(jet, tmp_path, stateDirectory):
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list("exported-dots"))
    job = jet.newJob(p, JobConfig().setName("exporting"))
    try:
        dropFile(watched, "a.txt", ["one"])
        eventually(lambda: jet.getList("exported-dots") == ["one"])
        kept = job.exportSnapshot("kept")
        for name in ("..", ".", "日本", "中国"):
            assert job.exportSnapshot(name).name() == name
        with pytest.raises(SparkjetError, match="too long"):
            job.exportSnapshot("s" * 300)
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert jet.getJobStateSnapshot("kept") == kept
    assert {jet.getJobStateSnapshot(name).name() for name in ("..", ".", "日本", "中国")} == {"..", ".", "日本", "中国"}
    exported = stateDirectory / "exported-snapshots"
    assert len(list(exported.iterdir())) == 5
