"""A cancelled stream job keeps every micro-batch it committed (issue 25, point 1): ``cancel()``
at any point of a micro-batch (before it runs, as its files sink's commit starts, between two
of its part files moved into place, once they all are, once its states are saved, between two
micro-batches) leaves each micro-batch whose part files were all moved in, whole, and nothing of
the others. Before the fix, the last committed micro-batch's part files went with the cancel,
and a job with one micro-batch lost its whole directory."""

import concurrent.futures
import os
import re
import threading
from collections import defaultdict

import pytest

from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources
from sparkjet.coredag.runtime import output_directory
from sparkjet.coredag.runtime.output_directory import LocalOutputDirectory
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint

pytestmark = pytest.mark.spark

ITEMS_PER_BATCH = 3
EVENTS = [(number, f"item-{number}") for number in range(8 * ITEMS_PER_BATCH)]
CANCEL_POINTS = ("start", "commit-start", "mid-move", "after-move", "after-states", "between")
"""Each is tried in micro-batch 1, after micro-batch 0 committed; in micro-batch 0 too, the two
that part it from the job's first: half its part files moved (nothing stays, not even the
directory) and all moved (it stays, as the job's only micro-batch)."""


def expectedLines(batch: int) -> list[str]:
    """Return the items finite stream micro-batch ``batch`` holds (one file of the stream each)."""
    return sorted(item for _, item in EVENTS[batch * ITEMS_PER_BATCH:(batch + 1) * ITEMS_PER_BATCH])


def linesByBatch(directory) -> dict[int, list[str]]:
    """Return the lines of the visible part files of ``directory`` by the micro-batch in their name."""
    lines = defaultdict(list)
    for name in os.listdir(directory):
        if match := re.fullmatch(r"part-(\d{5})-\d{5}", name):
            lines[int(match[1])] += (directory / name).read_text().splitlines()
    return {batch: sorted(items) for batch, items in lines.items()}


class CancelAt:
    """Cancels the job at ``point`` of micro-batch ``batch``, and notes which micro-batches'
    part files were all moved into place."""

    def __init__(self, monkeypatch, point: str, batch: int) -> None:
        self.point, self.batch, self.job = point, batch, None
        self.moved: set[int] = set()
        self.cancelled = threading.Event()
        self._current = None
        start, commit, rename = LocalOutputDirectory.startMicroBatch, LocalOutputDirectory.commit, os.rename
        saveStates = StreamCheckpoint.saveStates

        def startingMicroBatch(output, number):
            self._current = number
            self._cancelAt("start")
            start(output, number)

        def committing(output):
            self._cancelAt("commit-start")
            commit(output)
            self.moved.add(output._batch)
            self._cancelAt("after-move")

        def renaming(source, target):
            rename(source, target)
            if os.path.basename(target).startswith("part-"):
                self._cancelAt("mid-move")

        def savingStates(checkpoint, batchId, states):
            saved = saveStates(checkpoint, batchId, states)
            self._cancelAt("after-states")
            return saved

        monkeypatch.setattr(LocalOutputDirectory, "startMicroBatch", startingMicroBatch)
        monkeypatch.setattr(LocalOutputDirectory, "commit", committing)
        monkeypatch.setattr(output_directory.os, "rename", renaming)
        monkeypatch.setattr(StreamCheckpoint, "saveStates", savingStates)

    def _cancelAt(self, point: str) -> None:
        if point == self.point and self._current == self.batch and not self.cancelled.is_set():
            self.cancelled.set()
            self.job.cancel()


@pytest.mark.parametrize(
    ("point", "batch"), [(point, 1) for point in CANCEL_POINTS] + [("mid-move", 0), ("between", 0)]
)
def test_a_cancelled_stream_job_keeps_every_micro_batch_it_committed(jet, tmp_path, monkeypatch, point, batch):
    out = tmp_path / "out"
    cancelAt = CancelAt(monkeypatch, point, batch)
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=ITEMS_PER_BATCH)).withoutTimestamps().writeTo(
        Sinks.files(str(out))
    )
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    config.setCheckpointLocation(str(tmp_path / "checkpoint"))
    cancelAt.job = jet.newJob(p, config)
    if point == "between":
        while not cancelAt.moved >= set(range(batch + 1)) and not cancelAt.job._future.done():
            cancelAt.cancelled.wait(0.05)
        cancelAt.cancelled.set()
        cancelAt.job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        cancelAt.job.join()
    assert cancelAt.cancelled.is_set(), "the job was cancelled before its stream ended"
    if not cancelAt.moved:
        assert not out.exists(), "a job cancelled before any micro-batch committed removes the directory it made"
        return
    committed = linesByBatch(out)
    assert set(committed) == cancelAt.moved, "every micro-batch moved in stays, nothing of the others"
    for number, lines in committed.items():
        assert lines == expectedLines(number), f"micro-batch {number} whole"
    assert not [name for name in os.listdir(out) if name.startswith(".sparkjet-staging")]
