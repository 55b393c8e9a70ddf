"""A stream job's checkpoint on a file system no machine mounts (issue 26, point 4): Spark's query
checkpoint and the driver's files through Hadoop's FileSystem, the processors' state files
written and read by the tasks themselves through fsspec. The file system here is an FTP server
(pyftpdlib, on 127.0.0.1), which both Hadoop (``FTPFileSystem``) and fsspec reach, as they reach
``hdfs://`` and ``s3a://`` on a cluster. On a Spark Connect client the driver's files go through
fsspec too (``UrlCheckpointStorage``), the query checkpoint through Hadoop in the server."""

import concurrent.futures
import errno
import logging
import os
import pathlib
import pickle
import threading

import pytest
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.filesystems import AbstractedFS
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import ThreadedFTPServer
from pyspark.sql.utils import is_remote

from sparkjet import JobConfig, ProcessingGuarantee
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.files import UrlFiles, filesAt
from sparkjet.coredag.runtime.state_store import MissingStateError, StateStore
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from tests.streaming.test_exported_snapshots import runningCounts
from tests.streaming.test_stream_jobs import dropFile, eventually


class OwnCwdFilesystem(AbstractedFS):
    """pyftpdlib's file system, but a client's CWD changes that client's directory alone:
    pyftpdlib's own changes the process's working directory and changes it back, which, with a
    threaded server's handlers interleaving, can leave the test process in a removed directory."""

    def chdir(self, path: str) -> None:
        if not os.path.isdir(path):
            raise FileNotFoundError(errno.ENOENT, "No such directory", path)
        self.cwd = self.fs2ftp(path)


@pytest.fixture
def ftpRoot(tmp_path):
    """Serve ``tmp_path / "ftp"`` over FTP on a free local port; yield the directory and its URL."""
    served = tmp_path / "ftp"
    served.mkdir()
    authorizer = DummyAuthorizer()
    authorizer.add_user("jet", "secret", str(served), perm="elradfmwMT")
    handler = type("Handler", (FTPHandler,), {"authorizer": authorizer, "abstracted_fs": OwnCwdFilesystem})
    logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
    server = ThreadedFTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.2}, daemon=True)
    thread.start()
    try:
        yield served, f"ftp://jet:secret@127.0.0.1:{server.address[1]}"
    finally:
        server.close_all()
        thread.join()


def exactlyOnceAt(location: str) -> JobConfig:
    return JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(location)


def test_a_state_store_at_a_url_writes_whole_files_and_reads_back_its_chain(ftpRoot):
    served, url = ftpRoot
    store = StateStore(f"{url}/cp/state", version=1)
    assert isinstance(filesAt(store.root), UrlFiles)
    base = store.save("counts", 0, [("ant", 2), ("bee", 1)], last=None, chain=())
    delta = StateStore(store.root, version=2).saveChanges("counts", 0, [("ant", 3)], base.files)
    written = sorted(path.name for path in (served / "cp" / "state" / "counts" / "0").iterdir())
    assert written == sorted(name.rsplit("/", 1)[1] for name in delta.files), "whole files, nothing left aside"
    assert pickle.loads((served / "cp" / "state" / delta.files[0]).read_bytes()) == [("ant", 2), ("bee", 1)]
    assert store.extends(delta.files), "a delta lighter than its base may follow"
    assert sorted(store.load(ProcessorState(files=delta.files))) == [("ant", 3), ("bee", 1)]
    (served / "cp" / "state" / delta.files[1]).unlink()
    with pytest.raises(MissingStateError, match=r"The state file 'ftp://jet@127\.0\.0\.1:\d+/cp/state/counts/0/.*\.delta' is missing"):
        store.load(ProcessorState(files=delta.files))


@pytest.mark.spark
def test_a_job_keeps_its_state_at_an_ftp_url_and_a_job_started_from_its_snapshot_reads_it_there(
    jet, tmp_path, monkeypatch, ftpRoot
):
    served, url = ftpRoot
    monkeypatch.setenv("SPARKJET_STATE_DIR", str(tmp_path / "state"))
    watched = tmp_path / "in"
    watched.mkdir()
    job = jet.newJob(runningCounts(watched, "ftp-counts"), exactlyOnceAt(f"{url}/cp"))
    counts = jet.getList("ftp-counts")
    try:
        dropFile(watched, "a.txt", ["ant", "bee", "ant"])
        eventually(lambda: len(counts) == 3)
        eventually(lambda: any(path.suffix == ".base" for path in (served / "cp" / "state").rglob("*")))
        assert (served / "cp" / "query" / "offsets").is_dir(), "Spark's query checkpoint is there too"
        dropFile(watched, "b.txt", ["ant"])
        eventually(lambda: ("ant", 3) in counts)
        eventually(lambda: any(path.suffix == ".delta" for path in (served / "cp" / "state").rglob("*")))
        exported = job.exportSnapshot("from-ftp")
    finally:
        job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    eventually(lambda: not (served / "cp").exists())
    assert sorted(counts) == [("ant", 1), ("ant", 2), ("ant", 3), ("bee", 1)]
    assert any(path.is_file() for path in pathlib.Path(exported.directory, "state").rglob("*")), "copied out"

    later = jet.newJob(
        runningCounts(watched, "ftp-later"), exactlyOnceAt(f"{url}/cp2").setInitialSnapshotName(exported.snapshotName)
    )
    try:
        dropFile(watched, "c.txt", ["ant", "bee"])
        eventually(lambda: len(jet.getList("ftp-later")) == 2)
        assert sorted(jet.getList("ftp-later")) == [("ant", 4), ("bee", 2)], "restored from the files at the URL"
    finally:
        later.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        later.join()
    eventually(lambda: not (served / "cp2").exists())


def test_a_checkpoint_at_a_scheme_fsspec_cannot_reach_is_refused_naming_what_to_install():
    with pytest.raises(CheckpointError) as raised:
        StreamCheckpoint("s3a://bucket/cp").stateLocation
    assert str(raised.value).startswith(
        "The checkpoint 's3a://bucket/cp' cannot keep the processors' state: each task writes its processor's "
        "state through fsspec, which says: Install s3fs to access S3. Install the library of 's3a://' file "
        "systems on the driver and every executor"
    )


@pytest.mark.spark
def test_a_checkpoint_the_file_system_refuses_is_refused_at_submission_without_showing_the_password(
    jet, tmp_path, ftpRoot
):
    served, url = ftpRoot
    wrong = url.replace("jet:secret@", "jet:wrong@")
    with pytest.raises(CheckpointError) as raised:
        jet.newJob(runningCounts(tmp_path, "never"), exactlyOnceAt(f"{wrong}/cp").setName("refused"))
    message = str(raised.value)
    assert message.startswith(f"Job 'refused': cannot keep its checkpoint in '{url.replace('jet:secret@', 'jet@')}/cp': ")
    assert ("530 Authentication failed" if is_remote() else "Login failed") in message and "wrong" not in message
    assert not list(served.iterdir())
