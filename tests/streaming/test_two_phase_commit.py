"""Jet's two-phase commit on a stream job (issue 16, point 2): each micro-batch ends with
``saveToSnapshot()`` then ``snapshotCommitPrepare()``; once the snapshot is committed, the next
micro-batch's processor (the same one, kept alive in its Python worker, or one restored from the
snapshot) gets ``snapshotCommitFinish(True)`` before any item.
A sink written to Jet's contract (it commits the transactions it restores, as after a restart)
writes every item exactly once, and each of its processors is closed once: a processor kept in a
worker its tasks left is closed once the job ends."""

import functools
import os
import re
import uuid
from collections import Counter

import pytest

from sparkjet import AbstractProcessor, Pipeline, Sinks, TestSources
from tests.conftest import eventually

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
