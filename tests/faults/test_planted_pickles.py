"""A checkpoint holds pickles, which run code when they are read (issue 25, point 11): one that
another user could write, or could have written, is refused before anything in it is unpickled,
naming the path and the fix, as ssh refuses a key file others can write; sparkjet makes its own
directories and files readable by you alone."""

import os
import pickle
import stat

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources
from sparkjet.coredag.runtime import checkpoint_storage
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, checkpointStorage

STATES = "states/batch-000000000.pickle"
"""Where a checkpoint keeps the states of micro-batch 0."""

PLANTED = "so another user could plant pickles there, which run code when they are read"


class Planted:
    """What another user could plant: a pickle that, read, writes the file ``marker``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def plantedCheckpoint(directory, marker):
    """Make ``directory`` a checkpoint whose committed micro-batch 0 left Planted states; return it."""
    (directory / "query" / "commits").mkdir(parents=True)
    (directory / "query" / "commits" / "0").write_text("v1\n{}")
    (directory / "states").mkdir()
    (directory / STATES).write_bytes(pickle.dumps({"map": Planted(str(marker))}))
    return directory


def countingJob(watched) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.noop())
    return p


def guaranteed(location: str | None = None) -> JobConfig:
    config = JobConfig().setName("counts").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    return config if location is None else config.setCheckpointLocation(location)


def test_a_planted_pickle_runs_when_its_checkpoint_is_read(tmp_path):
    checkpoint = plantedCheckpoint(tmp_path / "cp", tmp_path / "marker")
    pickle.loads(checkpointStorage(str(checkpoint), "Job 'counts'").read(STATES))
    assert (tmp_path / "marker").exists(), "a checkpoint is code: what the refusals below keep out"


@pytest.mark.spark
def test_a_world_writable_checkpoint_is_refused_before_its_pickles_are_read(jet, tmp_path):
    (tmp_path / "in").mkdir()
    checkpoint = plantedCheckpoint(tmp_path / "cp", tmp_path / "marker")
    checkpoint.chmod(0o777)
    with pytest.raises(CheckpointError) as raised:
        jet.newJob(countingJob(tmp_path / "in"), guaranteed(str(checkpoint)))
    assert str(raised.value) == (
        f"Job 'counts': cannot keep its checkpoint in '{checkpoint}': '{checkpoint}' is writable by every user "
        f"(drwxrwxrwx), {PLANTED}: chmod go-w '{checkpoint}' if you trust what is in it, else remove it"
    )
    assert not (tmp_path / "marker").exists(), "nothing was unpickled"
    assert (checkpoint / STATES).exists(), "nothing was removed"


def test_a_state_directory_others_can_write_is_refused_unless_sticky(tmp_path, monkeypatch):
    state = tmp_path / "state"
    plantedCheckpoint(state / "counts", tmp_path / "marker")
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(state))
    state.chmod(0o777)
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage(guaranteed().checkpointLocation("counts"), "Job 'counts'")
    assert str(raised.value) == (
        f"Job 'counts': cannot keep its checkpoint in '{state / 'counts'}': '{state}' is writable by every user "
        f"(drwxrwxrwx), {PLANTED}: chmod go-w '{state}'"
    )
    state.chmod(0o1777)  # as /tmp: no one else can move or remove what is yours
    checkpointStorage(str(state / "counts"), "Job 'counts'")
    assert not (tmp_path / "marker").exists()


def test_a_checkpoint_not_made_yet_is_judged_by_the_directory_it_would_be_made_in(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(CheckpointError, match=rf"'{shared}' is writable by every user \(drwxrwxrwx\)"):
        checkpointStorage(str(shared / "deep" / "cp"), "Job 'counts'")
    assert not (shared / "deep").exists()


def test_anything_in_a_checkpoint_that_others_can_write_is_refused(tmp_path):
    checkpoint = plantedCheckpoint(tmp_path / "cp", tmp_path / "marker")
    (checkpoint / "states").chmod(0o773)
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage(str(checkpoint), "Job 'counts'")
    assert str(raised.value).endswith(
        f"'{checkpoint / 'states'}' is writable by every user (drwxrwx-wx), {PLANTED}: "
        f"chmod go-w '{checkpoint / 'states'}' if you trust what is in it, else remove it"
    )
    assert not (tmp_path / "marker").exists()


@pytest.fixture
def groups(monkeypatch):
    """A group database: 'staff' (gid 4242) has another member, 'mine' (gid 4243) only you."""
    import grp
    import pwd

    you = pwd.getpwuid(os.getuid())
    byId = {4242: grp.struct_group(("staff", "x", 4242, ["alice"])), 4243: grp.struct_group(("mine", "x", 4243, []))}
    users = [pwd.struct_passwd((you.pw_name, "x", you.pw_uid, 4243, "", you.pw_dir, you.pw_shell))]
    monkeypatch.setattr(grp, "getgrgid", lambda gid: byId[gid])
    monkeypatch.setattr(pwd, "getpwall", lambda: users)
    monkeypatch.setattr(os, "lstat", withGroup(os.lstat))


def withGroup(lstat):
    """Return ``lstat`` reporting the group a file names in its name (``...-gid4242``)."""

    def grouped(path, *args, **kwargs):
        status = lstat(path, *args, **kwargs)
        if "-gid" not in os.fspath(path):
            return status
        values = list(status)
        values[stat.ST_GID] = int(os.fspath(path).rsplit("-gid", 1)[1])
        return os.stat_result(values)

    return grouped


def test_a_group_writable_checkpoint_is_refused_unless_you_are_the_groups_one_member(tmp_path, groups):
    shared, private = tmp_path / "cp-gid4242", tmp_path / "cp-gid4243"
    for checkpoint in (shared, private):
        checkpoint.mkdir()
        checkpoint.chmod(0o770)
    with pytest.raises(CheckpointError, match=rf"'{shared}' is writable by its group \(drwxrwx---\)"):
        checkpointStorage(str(shared), "Job 'counts'")
    checkpointStorage(str(private), "Job 'counts'")  # a user private group, as Debian's ssh allows


def test_a_file_another_user_left_in_a_checkpoint_is_refused(tmp_path, monkeypatch):
    checkpoint = plantedCheckpoint(tmp_path / "cp", tmp_path / "marker")
    planted = checkpoint / STATES
    if os.getuid() == 0:
        os.chown(planted, 54321, -1)
        owner = "uid 54321"
    else:  # no chown without root: another uid is yours, and your files someone else's
        owner = __import__("pwd").getpwuid(os.getuid()).pw_name
        monkeypatch.setattr(os, "getuid", lambda: os.getpid() + 100_000)
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage(str(checkpoint), "Job 'counts'")
    assert str(raised.value).endswith(f"belongs to user '{owner}', {PLANTED}: use a directory of your own")
    assert not (tmp_path / "marker").exists()


def test_sparkjet_makes_its_directories_and_files_yours_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "home" / ".sparkjet" / "state"))
    storage = checkpointStorage(guaranteed().checkpointLocation("counts"), "Job 'counts'")
    storage.write(STATES, pickle.dumps({"map": 1}))
    made = [tmp_path / "home"]
    for name in (".sparkjet", "state", "counts", "states"):
        made.append(made[-1] / name)
    assert {path.name: stat.S_IMODE(path.stat().st_mode) for path in made} == {path.name: 0o700 for path in made}
    assert stat.S_IMODE((made[-1] / "batch-000000000.pickle").stat().st_mode) == 0o600


def test_a_checkpoint_removed_and_made_again_by_someone_else_is_checked_again(tmp_path):
    storage = checkpointStorage(str(tmp_path / "cp"), "Job 'counts'")
    storage.write("claimed-outputs.json", b"[]")
    storage.remove("claimed-outputs.json")
    storage.removeIfEmpty()
    (tmp_path / "cp").mkdir()
    (tmp_path / "cp").chmod(0o777)  # made meanwhile, as another user could where others may write
    with pytest.raises(CheckpointError, match=r"is writable by every user"):
        storage.write("claimed-outputs.json", b"[]")


@pytest.mark.spark
def test_a_hadoop_checkpoint_others_can_write_is_refused_by_its_file_status(spark, tmp_path):
    checkpoint = plantedCheckpoint(tmp_path / "cp", tmp_path / "marker")
    url = checkpoint.as_uri()
    checkpointStorage(url, "Job 'counts'").write("states/more.pickle", b"x")
    (checkpoint / "states").chmod(0o777)
    with pytest.raises(CheckpointError) as raised:
        checkpointStorage(url, "Job 'counts'")
    assert str(raised.value) == (
        f"Job 'counts': cannot keep its checkpoint in '{url}': 'file:{checkpoint / 'states'}' is writable by every "
        f"user (drwxrwxrwx), {PLANTED}: chmod go-w 'file:{checkpoint / 'states'}' if you trust what is in it, "
        "else remove it"
    )
    assert not (tmp_path / "marker").exists()


@pytest.mark.spark
def test_a_hadoop_checkpoint_made_by_sparkjet_is_yours_alone(spark, tmp_path):
    storage = checkpointStorage((tmp_path / "cp").as_uri(), "Job 'counts'")
    storage.write("states/a.pickle", b"x")
    assert stat.S_IMODE((tmp_path / "cp" / "states").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cp").stat().st_mode) == 0o700
    checkpointStorage((tmp_path / "cp").as_uri(), "Job 'counts'")  # its own files pass


@pytest.mark.spark
def test_a_snapshot_others_can_write_is_refused_before_a_job_starts_from_it(jet, tmp_path, monkeypatch):
    import json

    from sparkjet.coredag.errors import JobError

    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "in").mkdir()
    snapshot = plantedCheckpoint(tmp_path / "state" / "exported-snapshots" / "planted", tmp_path / "marker")
    description = {"snapshotName": "planted", "job": "old", "created": 0, "batchId": 0, "size": 1,
                   "processorKinds": {}, "sourceCount": 1, "directory": str(snapshot)}
    (snapshot / "snapshot.json").write_text(json.dumps(description))
    snapshot.chmod(0o777)
    try:
        job = jet.newJob(countingJob(tmp_path / "in"), JobConfig().setName("new").setInitialSnapshotName("planted"))
    except JobError as refused:
        assert f"'{snapshot}' is writable by every user (drwxrwxrwx), {PLANTED}" in str(refused)
    else:
        job.cancel()
        pytest.fail("the job started from a snapshot another user could have written")
    assert not (tmp_path / "marker").exists()
