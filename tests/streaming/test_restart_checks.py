"""A restart on a checkpoint checks what it restarts (issue 25, point 9): a changed pipeline whose
state does not fit is refused naming what changed, a state dropped with its vertex is said, a
checkpoint in use by a running job is refused (and that job goes on), a commit log cut short and
garbled files are a CheckpointError naming the file, never a silent start from zero nor an
UnpicklingError, EOFError or JSONDecodeError. Spark's own files (its query's id, offsets, commits
and sources' logs) are checked before Spark reads them, so a broken one is named too, not Spark's
``Input length = 1``."""

import concurrent.futures
import contextlib
import json
import pickle
import shutil
from collections import Counter

import pytest
from pyspark.sql.utils import is_remote

from sparkjet import (
    AggregateOperations, InputError, Jet, JobConfig, JobError, Pipeline, ProcessingGuarantee, Sinks, Sources, UserFunctionError,
)
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

pytestmark = pytest.mark.spark


def failingOnBoom(word: str) -> str:
    if word == "boom":
        raise ValueError("boom")
    return word


def word(line: str) -> str:
    return line


def runningCounts(watched, listName: str, operation=None, name=None, failing=False) -> Pipeline:
    p = Pipeline.create()
    lines = p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
    counted = (lines.map(failingOnBoom) if failing else lines).groupingKey(word).rollingAggregate(
        operation or AggregateOperations.counting()
    )
    (counted.setName(name) if name else counted).writeTo(Sinks.list(listName))
    return p


def guaranteed(checkpoint, name: str = "counts") -> JobConfig:
    config = JobConfig().setName(name).setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    return config.setCheckpointLocation(str(checkpoint))


@contextlib.contextmanager
def cancelledAtTheEnd(job):
    """Run the block while ``job`` runs; then cancel it and see it end cancelled."""
    try:
        yield job
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()


@pytest.fixture(scope="module")
def failedCheckpoint(tmp_path_factory, spark):
    """A checkpoint a failed job kept after two committed micro-batches: 'ant' counted twice, then
    a 'boom' its map raised on; and the directory it watched (the 'boom' file read again on a restart)."""
    base = tmp_path_factory.mktemp("failed")
    watched, checkpoint = base / "in", base / "checkpoint"
    watched.mkdir()
    jet = Jet(spark=spark)
    job = jet.newJob(runningCounts(watched, "failing", failing=True), guaranteed(checkpoint))
    dropFile(watched, "a.txt", ["ant"])
    eventually(lambda: ("ant", 1) in jet.getList("failing"))
    dropFile(watched, "b.txt", ["ant"])
    eventually(lambda: ("ant", 2) in jet.getList("failing"))
    dropFile(watched, "c.txt", ["boom"])
    with pytest.raises(UserFunctionError):
        job.join()
    jet.shutdown()
    return watched, checkpoint


@pytest.fixture
def keptCheckpoint(failedCheckpoint, tmp_path):
    """A copy of the failed job's checkpoint, for one test to restart on or break."""
    watched, checkpoint = failedCheckpoint
    copy = tmp_path / "checkpoint"
    shutil.copytree(checkpoint, copy)
    (copy / "lock").unlink(missing_ok=True)
    return watched, copy


def test_a_restart_whose_aggregation_changed_is_refused_naming_the_vertex(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    summing = runningCounts(watched, "summing", AggregateOperations.summing(len))
    with pytest.raises(CheckpointError, match=r"Job 'counts' cannot go on from its checkpoint '.*': vertex "
                       r"'rolling-aggregate' ran a TransformStatefulP\[zero, increment, .*\] there and runs a "
                       r"TransformStatefulP\[zero, _addValue\(len\), .*\] here, so its state does not fit"):
        jet.newJob(summing, guaranteed(checkpoint))


def test_a_restart_with_the_pipeline_fixed_goes_on_from_the_state(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "fixed"), guaranteed(checkpoint))):
        eventually(lambda: ("boom", 1) in jet.getList("fixed"))
        dropFile(watched, "d.txt", ["ant"])
        eventually(lambda: ("ant", 3) in jet.getList("fixed"))


def test_a_checkpoint_of_the_former_layout_restarts_exactly_and_its_snapshot_records_go_as_they_age(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    (checkpoint / "snapshot-records").rename(checkpoint / "states")  # where a checkpoint kept them before issue 35
    former = sorted(path.name for path in (checkpoint / "states").glob("batch-*.pickle"))
    assert former, "the failed job saved snapshot records"
    with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "former"), guaranteed(checkpoint))):
        eventually(lambda: ("boom", 1) in jet.getList("former"))
        dropFile(watched, "d.txt", ["ant"])
        eventually(lambda: ("ant", 3) in jet.getList("former"))
        eventually(lambda: not list((checkpoint / "states").glob("batch-*.pickle")))
        assert Counter(jet.getList("former")) == Counter([("boom", 1), ("ant", 3)]), "ant counted on from 2, once"
        assert list((checkpoint / "snapshot-records").glob("batch-*.pickle"))


def test_a_restart_whose_stateful_stage_was_renamed_says_its_state_is_dropped(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    with pytest.warns(UserWarning, match=r"Job 'counts' goes on from its checkpoint without the state of "
                      r"'rolling-aggregate': .* starts empty"):
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "renamed", name="counted"), guaranteed(checkpoint))):
            eventually(lambda: ("boom", 1) in jet.getList("renamed"))


def test_a_second_job_on_a_checkpoint_in_use_is_refused_and_the_first_goes_on(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "first"), guaranteed(checkpoint))):
        with pytest.raises(CheckpointError, match=r"Job 'other' cannot use the checkpoint '.*': another running job uses it"):
            jet.newJob(runningCounts(watched, "second"), guaranteed(checkpoint, "other"))
        dropFile(watched, "e.txt", ["ant"])
        eventually(lambda: ("ant", 3) in jet.getList("first"))


def test_a_job_refused_for_its_name_leaves_its_checkpoint_free_while_its_error_is_kept(jet, keptCheckpoint, tmp_path):
    """A job refused because a running job has its name writes nothing in its own checkpoint and
    holds no lock on it, even while its error (and the frames it names) is kept, as a notebook
    keeps the last one."""
    watched, checkpoint = keptCheckpoint
    other = tmp_path / "other-checkpoint"
    with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "named"), guaranteed(checkpoint))):
        with pytest.raises(JobError, match=r"^A job named 'counts' is already running") as refused:
            jet.newJob(runningCounts(watched, "refused"), guaranteed(other))
        assert not other.exists(), "the refused job wrote nothing there (no shape its successor must fit)"
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "freed"), guaranteed(other, "freed"))):
            eventually(lambda: ("boom", 1) in jet.getList("freed"))
        assert refused.value is not None


@pytest.mark.parametrize("refusal", ["its state does not fit", "its watched directory is gone", "no thread runs it"])
def test_a_job_refused_after_taking_its_checkpoint_lets_go_of_it_while_its_error_is_kept(
    jet, keptCheckpoint, monkeypatch, refusal
):
    """A stream job refused once it holds its checkpoint (the restart check, the preflight, its
    thread not starting) lets go of it at once, even while its error is kept: the next job there
    goes on from the checkpoint's state."""
    watched, checkpoint = keptCheckpoint
    pipeline, away = runningCounts(watched, "refused"), watched.with_name("away")
    if refusal == "its state does not fit":
        pipeline, expected = runningCounts(watched, "refused", AggregateOperations.summing(len)), CheckpointError
    elif refusal == "its watched directory is gone":
        watched.rename(away)
        expected = InputError
    else:
        monkeypatch.setattr(jet._executor, "submit", lambda *args: (_ for _ in ()).throw(RuntimeError("no thread")))
        expected = RuntimeError
    try:
        with pytest.raises(expected) as refused:
            jet.newJob(pipeline, guaranteed(checkpoint))
    finally:
        monkeypatch.undo()
        if away.exists():
            away.rename(watched)
    with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "next"), guaranteed(checkpoint))):
        eventually(lambda: ("boom", 1) in jet.getList("next"))
    assert refused.value is not None


def test_a_checkpoint_whose_commit_log_was_removed_is_refused(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    shutil.rmtree(checkpoint / "query" / "commits")
    with pytest.raises(CheckpointError, match=r"has the snapshot of micro-batch \d+ but Spark's commit log .* ends at none"):
        jet.newJob(runningCounts(watched, "no-commits"), guaranteed(checkpoint))


@pytest.mark.parametrize("garbage", [b"", b"\x80\x05garbage", b"not json", b"\xff\xfe", b"5", b'{"sourceCount": 1}', b"[1]"])
@pytest.mark.parametrize("file", ["claimed-outputs.json", "job-shape.json"])
def test_a_garbled_checkpoint_description_is_a_checkpoint_error_naming_it(jet, keptCheckpoint, file, garbage):
    watched, checkpoint = keptCheckpoint
    (checkpoint / file).write_bytes(garbage)
    with pytest.raises(CheckpointError, match=rf"The checkpoint file '.*{file}' cannot be read"):
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "garbled"), guaranteed(checkpoint))):
            pass


@pytest.mark.parametrize("cut", [0, 10, -1])
def test_a_truncated_states_file_is_a_checkpoint_error_naming_it(jet, keptCheckpoint, cut):
    watched, checkpoint = keptCheckpoint
    for states in (checkpoint / "snapshot-records").glob("batch-*.pickle"):
        states.write_bytes(states.read_bytes()[:cut])
    job = jet.newJob(runningCounts(watched, "truncated"), guaranteed(checkpoint))
    with pytest.raises(CheckpointError, match=r"The checkpoint file '.*snapshot-records/batch-\d+\.pickle' cannot be read"):
        job.join()


def test_states_of_another_shape_are_a_checkpoint_error_naming_the_file(jet, keptCheckpoint):
    watched, checkpoint = keptCheckpoint
    for states in (checkpoint / "snapshot-records").glob("batch-*.pickle"):
        states.write_bytes(pickle.dumps(["not", "states"]))
    job = jet.newJob(runningCounts(watched, "shapeless"), guaranteed(checkpoint))
    with pytest.raises(CheckpointError, match=r"The checkpoint file '.*snapshot-records/batch-\d+\.pickle' cannot be read \(it "
                       r"holds a list, not the processors' states by vertex and index; \d+ bytes\)"):
        job.join()


SPARK_FILES = ["metadata", "commits/1", "offsets/2", "offsets/1", "sources/0/2"]
"""The files of the failed job's query that Spark reads when it starts the query again."""

BREAKAGES = {
    "garbled": (lambda data: b"\xff\xfe", r"it is not UTF-8 text: byte 0xff at offset 0"),
    "empty": (lambda data: b"", r"it is empty"),
    "truncated": (lambda data: data[: len(data) // 2], r"(line \d, .*, is not JSON|it ends after its version line)"),
    "of another shape": (lambda data: (b"" if data.startswith(b"{") else b"v1\n") + b'["no", "object"]', r"(line \d|it) is not"),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
@pytest.mark.parametrize("file", SPARK_FILES)
def test_a_broken_file_of_sparks_query_is_a_checkpoint_error_naming_it_before_the_query_starts(
    jet, keptCheckpoint, file, breakage
):
    watched, checkpoint = keptCheckpoint
    broken, reason = BREAKAGES[breakage]
    path = checkpoint / "query" / file
    path.write_bytes(broken(path.read_bytes()))
    with pytest.raises(CheckpointError, match=rf"^The checkpoint file '{checkpoint}/query/{file}' cannot be read "
                       rf"\({reason}.*; \d+ bytes\): it was cut short or changed from outside; restore it, or remove "
                       rf"the checkpoint '{checkpoint}' to start the job over, empty: that loses the job's state"):
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "broken-query"), guaranteed(checkpoint))):
            pass


def test_a_garbled_exported_snapshot_is_a_checkpoint_error_naming_it(jet, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    described = tmp_path / "state" / "exported-snapshots" / "broken" / "snapshot.json"
    described.parent.mkdir(parents=True)
    described.write_text(json.dumps({"snapshotName": "broken"})[:-3])
    with pytest.raises(CheckpointError, match=r"The snapshot 'broken' cannot be read: its description '.*snapshot.json'"):
        jet.getJobStateSnapshot("broken")


@pytest.fixture(scope="module")
def exportedSnapshot(tmp_path_factory, spark):
    """The state directory holding snapshot 'kept', exported by a job that counted 'ant' once,
    and the directory that job watched."""
    base = tmp_path_factory.mktemp("exported")
    watched, state = base / "in", base / "state"
    watched.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARKJET_STATE_DIR", str(state))
        jet = Jet(spark=spark)
        job = jet.newJob(runningCounts(watched, "exporting"), JobConfig().setName("exporting"))
        dropFile(watched, "a.txt", ["ant"])
        eventually(lambda: ("ant", 1) in jet.getList("exporting"))
        job.cancelAndExportSnapshot("kept")
        with pytest.raises(concurrent.futures.CancelledError):
            job.join()
        jet.shutdown()
    return watched, state


@pytest.fixture
def keptSnapshot(exportedSnapshot, tmp_path, monkeypatch):
    """A copy of the state directory holding snapshot 'kept', for one test to break; and its directory."""
    watched, state = exportedSnapshot
    shutil.copytree(state, tmp_path / "state")
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    return watched, tmp_path / "state" / "exported-snapshots" / "kept"


def lastFile(directory, pattern: str = "[0-9]*"):
    return max(directory.glob(pattern), key=lambda path: int(path.name.split(".")[0].removeprefix("batch-")))


@pytest.mark.parametrize("file", ["query/metadata", "query/commits", "query/offsets", "query/sources/0", "snapshot-records"])
def test_a_broken_file_of_the_snapshot_a_job_starts_from_is_a_checkpoint_error_naming_it(jet, keptSnapshot, file):
    watched, snapshot = keptSnapshot
    path = snapshot / file if file == "query/metadata" else lastFile(snapshot / file, "*.pickle" if file == "snapshot-records" else "[0-9]*")
    path.write_bytes(path.read_bytes()[:7])
    config = JobConfig().setName("from-broken").setInitialSnapshotName("kept")
    with pytest.raises(CheckpointError, match=rf"^The checkpoint file '{path}' cannot be read \(.*\): it was cut short or "
                       r"changed from outside; export the snapshot 'kept' again, or destroy it"):
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "from-broken"), config)):
            pass


@pytest.mark.parametrize("field, value", [("batchId", "0"), ("processorKinds", ["rolling-aggregate"]), ("sourceCount", None)])
def test_a_snapshot_description_with_a_field_of_another_type_is_a_checkpoint_error_naming_it(jet, keptSnapshot, field, value):
    _, snapshot = keptSnapshot
    described = json.loads((snapshot / "snapshot.json").read_text())
    (snapshot / "snapshot.json").write_text(json.dumps({**described, field: value}))
    with pytest.raises(CheckpointError, match=rf"^The snapshot 'kept' cannot be read: its description '.*snapshot.json' is "
                       rf"cut short or changed \({field} of another type\); export it again, or destroy it$"):
        jet.getJobStateSnapshot("kept")


def test_a_snapshot_is_where_its_description_is_whatever_it_says(jet, keptSnapshot, tmp_path):
    """Destroying a snapshot whose description names another directory removes the snapshot, never that directory."""
    _, snapshot = keptSnapshot
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("kept")
    described = json.loads((snapshot / "snapshot.json").read_text())
    (snapshot / "snapshot.json").write_text(json.dumps({**described, "directory": str(elsewhere)}))
    jet.getJobStateSnapshot("kept").destroy()
    assert not snapshot.exists() and (elsewhere / "keep.txt").read_text() == "kept"


@pytest.mark.parametrize("file", ["commits/1", "offsets/2"])
def test_a_broken_file_of_sparks_query_at_a_hadoop_url_is_a_checkpoint_error_naming_it(jet, keptCheckpoint, file):
    watched, checkpoint = keptCheckpoint
    (checkpoint / "query" / file).write_bytes(b"\xff\xfe")
    shown = f"file://{checkpoint}" if is_remote() else f"file:{checkpoint}"  # as given, or as Hadoop qualifies it
    with pytest.raises(CheckpointError, match=rf"^The checkpoint file '{shown}/query/{file}' cannot be read \("):
        with cancelledAtTheEnd(jet.newJob(runningCounts(watched, "broken-url"), guaranteed(f"file://{checkpoint}"))):
            pass
