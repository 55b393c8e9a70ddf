"""A killed driver's temporary checkpoint does not stay forever (issue 25, point 10): a job without
a guarantee keeps its checkpoint in a temporary directory noting its process; the next job removes
those whose process on this host is gone, and nothing else: not a running process's, not a
directory that notes no process, not what is not a checkpoint's."""

import json
import os
import socket
import subprocess
import sys
import tempfile

import pytest

from sparkjet.coredag.runtime.stream.checkpoint import OWNER, temporaryCheckpoint


def leftCheckpoint(directory, name: str, pid: int | None, extra: str | None = None):
    path = directory / name
    (path / "query" / "commits").mkdir(parents=True)
    (path / "states").mkdir()
    if pid is not None:
        (path / OWNER).write_text(json.dumps({"pid": pid, "host": socket.gethostname()}))
    if extra is not None:
        (path / extra).write_text("not the checkpoint's")
    return path


@pytest.fixture
def temporaryDirectory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_a_new_temporary_checkpoint_removes_those_whose_process_is_gone_and_nothing_else(temporaryDirectory):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    goneId = int(gone.stdout)
    killed = leftCheckpoint(temporaryDirectory, "sparkjet-killed-abc", goneId)
    beside = leftCheckpoint(temporaryDirectory, "sparkjet-with-a-file-abc", goneId, extra="notes.txt")
    running = leftCheckpoint(temporaryDirectory, "sparkjet-running-abc", os.getpid())
    unowned = leftCheckpoint(temporaryDirectory, "sparkjet-unowned-abc", None)
    other = leftCheckpoint(temporaryDirectory, "other-abc", goneId)
    checkpoint = temporaryCheckpoint("new job")
    assert not killed.exists()
    assert sorted(os.listdir(beside)) == ["notes.txt"], "only what a checkpoint keeps goes"
    assert running.exists() and unowned.exists() and other.exists()
    assert os.path.basename(checkpoint.location).startswith("sparkjet-new_job-")
    assert json.loads((temporaryDirectory / os.path.basename(checkpoint.location) / OWNER).read_text())["pid"] == os.getpid()
