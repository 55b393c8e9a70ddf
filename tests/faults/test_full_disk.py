"""A full disk is said as such, naming where, the bytes the write needed and those free there
(issue 25, point 10; issue 34, point 5): a checkpoint write that fails leaves no ``.writing`` file
and keeps the last whole one; a files sink whose write Spark fails says 'no space left', naming its
directory, where PySpark said only 'An error occurred while calling o54.saveAsTextFile.'.

On a real small disk (a tmpfs each test mounts for itself, 4 MiB, and unmounts whatever happens),
a stream job that fills it in a files sink, in its processors' state files or in a fed source's
files fails with a NoSpaceError; the disk then holds what the committed micro-batches wrote and
nothing of the failed one (no staging file, no ``.writing`` or half-written file, no space held by
a file Spark's task left open), and the job run again once the space is freed goes on exactly:
its output is every input item once. Before, the files sink's failed micro-batch kept its space
taken until the JVM ended, the state files' failure blamed the files sink and left its ``.writing``
files and the files of the tasks that did not fail, and the fed source left a half-written file
that the job run again took as whole, losing its items."""

import errno
import os
import re
import subprocess
from collections import Counter

import pytest

from sparkjet import JobConfig, NoSpaceError, Pipeline, ProcessingGuarantee, Sinks, SourceBuilder, Sources, TestSources
from sparkjet.coredag.processors.built_stream_source import WRITING
from sparkjet.coredag.runtime import terminal_outputs
from sparkjet.coredag.runtime.checkpoint_storage import checkpointStorage
from sparkjet.coredag.runtime.output_directory import LocalOutputDirectory
from sparkjet.coredag.runtime.state_store import referencedFiles
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.planner import JobStatus
from tests.conftest import eventually

DISK_SIZE = 4 * 1024 * 1024
PAGE = 4096
SLACK = 64 * 1024
"""What the disk's own books may hold beyond its visible files' blocks (a directory's entries)."""


def test_a_checkpoint_write_on_a_full_disk_keeps_the_last_whole_file_and_leaves_nothing_aside(tmp_path, monkeypatch):
    storage = checkpointStorage(str(tmp_path / "cp"), "Job 'j'")
    storage.write("states/batch-000000001.pickle", b"whole")

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(NoSpaceError, match=r"Writing the checkpoint '.*cp': no space left on the device of "
                       r"'.*batch-000000001.pickle' \(writing 3 bytes, [\d,]+ bytes free there\): free space there"):
        storage.write("states/batch-000000001.pickle", b"new")
    assert os.listdir(tmp_path / "cp" / "states") == ["batch-000000001.pickle"]
    assert storage.read("states/batch-000000001.pickle") == b"whole"


class FullDisk:
    """An RDD whose write fails as Spark's does on a full disk: a py4j error naming no path."""

    def mapPartitions(self, fn):
        return self

    def saveAsTextFile(self, path):
        raise RuntimeError(
            "An error occurred while calling o54.saveAsTextFile.\n: org.apache.spark.SparkException: Job aborted "
            "due to stage failure: java.io.IOException: No space left on device\n\tat java.base/..."
        )


def test_a_files_sink_on_a_full_disk_says_so_naming_its_directory(tmp_path):
    output = LocalOutputDirectory(str(tmp_path / "out"), "Sinks.files('out')")
    with pytest.raises(NoSpaceError, match=r"Sinks.files\('out'\): no space left on the device of '.*out' \(it needed "
                       r"more than the [\d,]+ bytes free there when it began \(or Spark's scratch directory "
                       r"spark.local.dir filled\), [\d,]+ bytes free there\): free space there and run the job again"):
        terminal_outputs.saveAsTextFiles(FullDisk(), output)


@pytest.fixture
def smallDisk(tmp_path):
    """A 4 MiB tmpfs mounted for the test alone, unmounted whatever the test did (lazily, where
    a process still holds a file there); skipped where this machine refuses the mount."""
    disk = tmp_path / "small-disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE},mode=0700", "tmpfs", str(disk)],
            capture_output=True, text=True,
        )
    except FileNotFoundError:
        pytest.skip("a small disk is a tmpfs mounted for the test, and this machine has no mount command")
    if mounted.returncode != 0:
        pytest.skip(f"a small disk is a tmpfs mounted for the test (as root), and mount refused: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(disk)], check=True)


def fill(disk, room: int):
    """Take the disk's space but ``room`` bytes with a file of the test's own; return it (removing it frees the space)."""
    ballast = disk / "ballast"
    ballast.write_bytes(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - room))
    return ballast


def hiddenBytes(disk) -> int:
    """Return the bytes the disk says are taken beyond the blocks of the files it shows: those
    of removed files a process still holds open."""
    status = os.statvfs(disk)
    used = (status.f_blocks - status.f_bfree) * status.f_frsize
    visible = sum(
        os.lstat(os.path.join(directory, name)).st_blocks * 512
        for directory, _, names in os.walk(disk) for name in names
    )
    return used - visible


def filesUnder(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(directory, name), root) for directory, _, names in os.walk(root) for name in names)


def outputLines(directory) -> Counter:
    """Return the lines of the committed part files of ``directory``."""
    return Counter(
        line for name in os.listdir(directory) if re.fullmatch(r"part-\d{5}-\d{5}", name)
        for line in (directory / name).read_text().splitlines()
    )


def exactlyOnceConfig(checkpoint) -> JobConfig:
    config = JobConfig().setName("full-disk").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    return config.setCheckpointLocation(str(checkpoint))


def failsOnTheFullDisk(jet, pipeline, checkpoint, message: str) -> None:
    """Run the job into the full disk: it fails with a NoSpaceError whose message matches ``message``."""
    with pytest.raises(NoSpaceError) as failed:
        jet.newJob(pipeline, exactlyOnceConfig(checkpoint)).join()
    assert re.search(message, str(failed.value)), str(failed.value)


def goesOnExactlyOnceFreed(jet, pipeline, checkpoint, ballast, out, items: list[str]) -> None:
    """Free the space and run the job again to its end: its output is every item once."""
    ballast.unlink()
    jet.newJob(pipeline, exactlyOnceConfig(checkpoint)).join()
    assert outputLines(out) == Counter(items)


@pytest.mark.spark
def test_a_batch_job_that_fills_the_disk_gives_its_space_back_and_leaves_no_directory(jet, smallDisk):
    out = smallDisk / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items([f"{number:04d}-" + "x" * 100_000 for number in range(60)])).writeTo(Sinks.files(str(out)))
    ballast = fill(smallDisk, 2_000_000)  # the job writes 6 MB
    with pytest.raises(NoSpaceError, match=rf"Sinks.files: no space left on the device of '{out}' \(it needed more "
                       r"than the [\d,]+ bytes free there when it began"):
        jet.newJob(p).join()
    assert sorted(os.listdir(smallDisk)) == [ballast.name], "the job's directory goes, nothing of it stays"
    eventually(lambda: hiddenBytes(smallDisk) < SLACK)  # the failed tasks' part files, removed, hold no space once collected


@pytest.mark.spark
def test_a_files_sink_that_fills_the_disk_gives_its_space_back_and_goes_on_exactly_once_freed(jet, tmp_path, smallDisk):
    items = [f"{number:04d}-" + "x" * (400_000 if 8 <= number < 12 else 10_000) for number in range(32)]
    out, checkpoint = smallDisk / "out", tmp_path / "checkpoint"
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(list(enumerate(items)), itemsPerBatch=4)).withoutTimestamps().writeTo(
        Sinks.files(str(out))
    )
    ballast = fill(smallDisk, 600_000)  # micro-batches 0 and 1 fit (40 kB each), not 2 (1.6 MB)
    failsOnTheFullDisk(
        jet, p, checkpoint,
        rf"Sinks.files: no space left on the device of '{out}' \(it needed more than the [\d,]+ bytes free there "
        r"when it began .*, [\d,]+ bytes free there\): free space there and run the job again",
    )
    eventually(lambda: hiddenBytes(smallDisk) < SLACK)  # the failed tasks' part files, removed, hold no space once collected
    committed = outputLines(out)
    assert not [name for name in os.listdir(out) if name.startswith(".sparkjet-staging")]
    assert sum(committed.values()) in (4, 8) and committed <= Counter(items), "committed micro-batches stay whole"

    goesOnExactlyOnceFreed(jet, p, checkpoint, ballast, out, items)


@pytest.mark.spark
def test_state_files_that_fill_the_disk_are_removed_and_the_job_goes_on_exactly_once_freed(jet, tmp_path, smallDisk):
    items = [f"{number:04d}" for number in range(24)]
    out, checkpoint = tmp_path / "out", smallDisk / "checkpoint"

    def remembered(state, key, item):
        state.append("y" * 100_000)  # each key's state: 100 kB, so a micro-batch's 4 keys write 400 kB
        return item

    p = Pipeline.create()
    stage = p.readFrom(TestSources.finiteStream(list(enumerate(items)), itemsPerBatch=4)).withoutTimestamps()
    stage.groupingKey(lambda item: item).mapStateful(list, remembered).writeTo(Sinks.files(str(out)))
    ballast = fill(smallDisk, 1_000_000)  # micro-batches 0 and 1 fit, with Spark's logs, not 2
    failsOnTheFullDisk(
        jet, p, checkpoint,
        rf"A task saving its processor's state: no space left on the device of '{checkpoint}/state/.*' "
        r"\(writing [\d,]+ bytes, [\d,]+ bytes free there\): free space there",
    )
    stateFiles = set(filesUnder(checkpoint / "state"))
    assert not [name for name in stateFiles if name.endswith(".writing")]
    committed = StreamCheckpoint(str(checkpoint)).restoredStates()
    assert stateFiles == referencedFiles(committed), "the failed micro-batch's state files are gone, the committed stay"
    assert hiddenBytes(smallDisk) < SLACK

    goesOnExactlyOnceFreed(jet, p, checkpoint, ballast, out, items)


@pytest.mark.spark
def test_a_fed_source_that_fills_the_disk_leaves_no_half_file_and_the_job_goes_on_exactly_once_freed(
    jet, tmp_path, smallDisk
):
    items = [f"{number:04d}-" + "z" * 30_000 for number in range(60)]
    out, checkpoint = tmp_path / "out", smallDisk / "checkpoint"
    p = Pipeline.create()
    p.readFrom(TestSources.finiteStream(list(enumerate(items)), itemsPerBatch=10)).withoutTimestamps().writeTo(
        Sinks.files(str(out))
    )
    ballast = fill(smallDisk, 1_000_000)  # the source's files 0 to 1 fit (400 kB each, pickled), not 2
    failsOnTheFullDisk(
        jet, p, checkpoint,
        rf"Feeding a finite stream source: no space left on the device of '{checkpoint}/source-0/batch-\d+.txt' "
        r"\(writing [\d,]+ bytes, [\d,]+ bytes free there\)",
    )
    fed = [name for name in filesUnder(checkpoint) if name.startswith("source-0/")]
    assert fed == [f"source-0/batch-{number:06d}.txt" for number in range(len(fed))], "whole files only"
    assert hiddenBytes(smallDisk) < SLACK

    goesOnExactlyOnceFreed(jet, p, checkpoint, ballast, out, items)


RELEASED = {"upTo": 0}
"""How far the built source below may count: the test lets it go on a step at a time."""
SMALL_NUMBERS = 10
"""The built source's numbers up to this one are small items; those after, 30 kB each."""


def numbered(number: int) -> str:
    return f"{number:04d}-" + "w" * (0 if number < SMALL_NUMBERS else 30_000)


class Counting:
    """A built source's state: the next number to add."""

    def __init__(self, context):
        self.next = 0


def addReleased(state: Counting, buffer) -> None:
    """Add every number released and not added yet."""
    for number in range(state.next, RELEASED["upTo"]):
        buffer.add(numbered(number))
    state.next = max(state.next, RELEASED["upTo"])


def restoreCount(state: Counting, snapshots: list) -> None:
    state.next = snapshots[0]


@pytest.mark.spark
def test_a_built_source_that_fills_the_disk_fails_the_job_and_goes_on_from_its_snapshot_freed(jet, tmp_path, smallDisk):
    out, checkpoint = tmp_path / "out", smallDisk / "checkpoint"
    RELEASED["upTo"] = SMALL_NUMBERS
    source = (SourceBuilder.stream("counting", Counting).fillBufferFn(addReleased)
              .createSnapshotFn(lambda state: state.next).restoreSnapshotFn(restoreCount).build())
    p = Pipeline.create()
    p.readFrom(source).withoutTimestamps().writeTo(Sinks.files(str(out)))
    ballast = fill(smallDisk, 600_000)
    job = jet.newJob(p, exactlyOnceConfig(checkpoint))
    eventually(lambda: out.exists() and sum(outputLines(out).values()) == SMALL_NUMBERS)
    RELEASED["upTo"] = 50  # one file of 40 items of 30 kB, 1.6 MB pickled: more than the disk has
    eventually(lambda: job.getStatus() is JobStatus.FAILED)  # the source's failure ends the job, which waited for input
    with pytest.raises(NoSpaceError, match=rf"Feeding a stream source: no space left on the device of '{checkpoint}/"
                       r"source-0/events-\d+.txt' \(writing [\d,]+ bytes, [\d,]+ bytes free there\)"):
        job.join()
    assert not [name for name in filesUnder(checkpoint) if name.endswith(WRITING)], "nothing half written stays"
    assert hiddenBytes(smallDisk) < SLACK

    ballast.unlink()
    job = jet.newJob(p, exactlyOnceConfig(checkpoint))
    try:
        eventually(lambda: sum(outputLines(out).values()) >= 50)
    finally:
        job.cancel()
    assert outputLines(out) == Counter(map(numbered, range(50))), "each number once, from the source's snapshot"
