"""Jet's two-phase commit on a stream job (issue 16, point 2): each micro-batch ends with
``saveToSnapshot()`` then ``snapshotCommitPrepare()``; once the snapshot is committed, the next
micro-batch's processor (the same one, kept alive in its Python worker, or one restored from the
snapshot) gets ``snapshotCommitFinish(True)`` before any item.
A sink written to Jet's contract (it commits the transactions it restores, as after a restart)
writes every item exactly once, and each of its processors is closed once: a processor kept in a
worker its tasks left is closed once the job ends. Its output appears without more input (a
heartbeat runs the micro-batch that finishes the commit), peeked or not, and again after the
driver is killed (SIGKILL) with a transaction prepared and run again."""

import functools
import os
import re
import signal
import subprocess
import sys
import textwrap
import uuid
from collections import Counter

import pytest

from sparkjet import AbstractProcessor, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, TestSources
from tests.conftest import PROJECT, eventually, finished, treeProgress
from tests.streaming.test_stream_jobs import dropFile

pytestmark = pytest.mark.spark

ITEMS = [f"item-{number}" for number in range(40)]


class TransactionalWriter(AbstractProcessor):
    """Writes items in transactions, as Jet's transactional sinks do: ``snapshotCommitPrepare``
    closes the open one as a prepared file and saves its id; ``snapshotCommitFinish(True)``
    commits what this instance prepared, and ``restoreFromSnapshot`` the ids it restores (Jet's
    contract after a restart); ``complete()`` commits what is left. Each task logs its calls."""

    def __init__(self, directory: str) -> None:
        self.directory, self.open, self.prepared, self.calls = directory, [], [], []

    def tryProcess0(self, item) -> bool:
        self.calls.append("item")
        self.open.append(item)
        return True

    def saveToSnapshot(self) -> bool:
        self.calls.append("save")
        return True

    def snapshotCommitPrepare(self) -> bool:
        self.calls.append("prepare")
        transaction = f"{self.context.globalProcessorIndex}-{uuid.uuid4().hex}"
        with open(os.path.join(self.directory, f".prepared-{transaction}"), "w") as file:
            file.writelines(item + "\n" for item in self.open)
        self.open = []
        self.prepared.append(transaction)
        return self.tryEmitToSnapshot(transaction, None)

    def restoreFromSnapshot(self, key, value) -> None:
        self.calls.append("restore")
        self._commit(key)

    def snapshotCommitFinish(self, success: bool) -> bool:
        self.calls.append(f"finish({success})")
        for transaction in self.prepared if success else ():
            self._commit(transaction)
        self.prepared = []
        return True

    def complete(self) -> bool:
        self.calls.append("complete")
        with open(os.path.join(self.directory, f"committed-last-{self.context.globalProcessorIndex}"), "w") as file:
            file.writelines(item + "\n" for item in self.open)
        return True

    def close(self) -> None:
        with open(os.path.join(self.directory, "calls.log"), "a") as log:
            log.write(" ".join(self.calls) + "\n")

    def _commit(self, transaction: str) -> None:
        """Move the prepared file into place; one committed already (or by another processor) is skipped."""
        try:
            prepared = os.path.join(self.directory, f".prepared-{transaction}")
            os.rename(prepared, os.path.join(self.directory, f"committed-{transaction}"))
        except FileNotFoundError:
            pass


def test_a_transactional_sink_prepares_at_each_snapshot_and_finishes_once_it_is_committed(jet, tmp_path):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(list(enumerate(ITEMS)), itemsPerBatch=8)).withoutTimestamps()
      .customTransform("transactional-writer", functools.partial(TransactionalWriter, str(tmp_path)))
      .writeTo(Sinks.noop()))
    jet.newJob(p).join()
    committed = Counter(
        line for path in tmp_path.glob("committed-*") for line in path.read_text().splitlines()
    )
    assert committed == Counter(ITEMS), "every item committed exactly once"
    assert not list(tmp_path.glob(".prepared-*")), "every prepared transaction committed"
    calls = tmp_path / "calls.log"
    eventually(lambda: calls.read_text().split().count("item") == len(ITEMS))  # each processor closed once
    tasks = calls.read_text().splitlines()
    jetsOrder = re.compile(r"(restore )*(finish\(True\) )?((item )*save prepare finish\(True\) )*(item )*(save prepare|complete)")
    assert all(jetsOrder.fullmatch(task) for task in tasks), tasks
    assert any("save prepare" in task for task in tasks) and any("finish(True)" in task for task in tasks)


def committedLines(directory) -> Counter:
    return Counter(line for path in directory.glob("committed-*") for line in path.read_text().splitlines())


def transactionalPipeline(watched, output, peeked: bool) -> Pipeline:
    """A transactional stage over the files dropped into ``watched``, peeked or not."""
    p = Pipeline.create()
    written = (p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
               .customTransform("transactional-writer", functools.partial(TransactionalWriter, str(output))))
    (written.peek() if peeked else written).writeTo(Sinks.noop())
    return p


def exactlyOnce(name: str, checkpoint) -> JobConfig:
    return (JobConfig().setName(name).setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
            .setCheckpointLocation(str(checkpoint)))


@pytest.mark.parametrize("peeked", [False, True], ids=["unpeeked", "peeked"])
def test_a_transactional_stage_commits_its_output_with_no_more_input(jet, tmp_path, peeked):
    watched, output = tmp_path / "in", tmp_path / "out"
    watched.mkdir()
    output.mkdir()
    job = jet.newJob(transactionalPipeline(watched, output, peeked), exactlyOnce("lull", tmp_path / "checkpoint"))
    try:
        lines = {"a.txt": ["ant", "bee"], "b.txt": ["cat", "ant"]}
        for name, text in lines.items():
            dropFile(watched, name, text)
        expected = Counter(line for text in lines.values() for line in text)
        eventually(lambda: committedLines(output) == expected)  # no file comes after these two
        assert job.getStatus().name == "RUNNING"
    finally:
        job.cancel()


KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from sparkjet import Jet
    from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
    from sparkjet.coredag.runtime.stream.micro_batch_loop import MicroBatchLoop
    from tests.streaming.test_two_phase_commit import exactlyOnce, transactionalPipeline

    watched, output, checkpoint, peeked, killAt = sys.argv[1:6]

    def dieWithItemsPrepared():  # a transaction holding items prepared, not committed
        if any(name.startswith(".prepared-") and os.path.getsize(os.path.join(output, name)) for name in os.listdir(output)):
            os.killpg(os.getpgid(0), signal.SIGKILL)

    if killAt == "before Spark commits":  # the snapshot saved, its micro-batch not committed
        saveStates = StreamCheckpoint.saveStates
        def dyingSave(self, batchId, states):
            saved = saveStates(self, batchId, states)
            dieWithItemsPrepared()
            return saved
        StreamCheckpoint.saveStates = dyingSave
    else:  # the next micro-batch starts: the snapshot is committed, its second phase not run
        onMicroBatch = MicroBatchLoop.onMicroBatch
        def dyingOnMicroBatch(self, rows, batchId):
            dieWithItemsPrepared()
            return onMicroBatch(self, rows, batchId)
        MicroBatchLoop.onMicroBatch = dyingOnMicroBatch
    pipeline = transactionalPipeline(watched, output, peeked == "peeked")
    Jet(master="local[2]").newJob(pipeline, exactlyOnce("transactional", checkpoint)).join()
    """
)


@pytest.mark.parametrize(
    ("peeked", "killAt"), [(False, "before Spark commits"), (True, "once Spark committed")], ids=["unpeeked", "peeked"]
)
def test_a_transactional_stage_killed_with_a_transaction_prepared_commits_every_item_once(jet, tmp_path, peeked, killAt):
    """Killed before Spark commits the micro-batch, the job runs it again from the snapshot
    before (its prepared transaction is left uncommitted); killed once Spark committed it, the
    processor restored from its snapshot commits the transaction. Either way each item is
    committed once, and no item comes after the restart."""
    watched, output, checkpoint, script = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint", tmp_path / "job.py"
    watched.mkdir()
    output.mkdir()
    script.write_text(KILLED)
    arguments = [watched, output, checkpoint, "peeked" if peeked else "unpeeked", killAt]
    run = subprocess.Popen(
        [sys.executable, str(script), *map(str, arguments)], cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    lines = {"a.txt": ["ant", "bee"], "b.txt": ["cat", "ant"]}
    dropFile(watched, "a.txt", lines["a.txt"])
    killed = finished(run, treeProgress(tmp_path))
    assert killed.returncode == -signal.SIGKILL, f"the run was not killed:\n{killed.stderr[-3000:]}"
    assert not committedLines(output), "killed before its transaction was committed"
    dropFile(watched, "b.txt", lines["b.txt"])  # read by the run again, after which no file comes
    job = jet.newJob(transactionalPipeline(watched, output, peeked), exactlyOnce("transactional", checkpoint))
    try:
        expected = Counter(line for text in lines.values() for line in text)
        eventually(lambda: committedLines(output) == expected)
    finally:
        job.cancel()
