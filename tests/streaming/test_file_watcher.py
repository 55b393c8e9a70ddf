"""A watched directory on Spark: bad files make clear errors or warnings naming the file, the
job goes on past a file deleted before it was read (issue 25, points 4, 5 and 10), and the files
one micro-batch takes are read in the order they appeared."""

import logging
import os
import time
from collections import Counter

import attrs
import pytest

from sparkjet import (
    AggregateOperations,
    InputError,
    Pipeline,
    Sinks,
    Sources,
    UserFunctionError,
    WindowDefinition,
    plan,
)
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.processors.stream_sources import FileWatcherP
from sparkjet.planner import JobStatus
from tests.streaming.test_stream_jobs import dropFile, eventually

pytestmark = pytest.mark.spark


def dropBytes(directory, name: str, data: bytes) -> None:
    """Write a file beside the watched directory, then move it in at once."""
    staged = directory.parent / f".{name}.staged"
    staged.write_bytes(data)
    os.rename(staged, directory / name)


def watching(watched, listName: str, **options) -> Pipeline:
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched), **options)).withoutTimestamps().writeTo(Sinks.list(listName))
    return p


def withWatcher(p: Pipeline, kind: type) -> DAG:
    """Return the Core DAG of ``p`` with its watched directory read by a ``kind`` of FileWatcherP."""

    def swap(vertex):
        supplier = vertex.processorSupplier
        if not isinstance(supplier, FileWatcherP):
            return vertex
        fields = {field.name: getattr(supplier, field.name) for field in attrs.fields(type(supplier)) if field.init}
        return attrs.evolve(vertex, processorSupplier=kind(**fields))

    return plan(p).dag.withVertices(swap)


def inputError(job) -> str:
    """Wait until the stream job failed; return the message of the InputError its join() raises."""
    eventually(lambda: job.getStatus() is JobStatus.FAILED)
    with pytest.raises(InputError) as raised:
        job.join()
    return str(raised.value)


@pytest.fixture
def watched(tmp_path):
    """The watched directory."""
    directory = tmp_path / "in"
    directory.mkdir()
    return directory


def test_undecodable_bytes_fail_the_job_naming_the_file_the_line_and_the_byte(jet, watched):
    job = jet.newJob(watching(watched, "undecodable"))
    dropBytes(watched, "latin.txt", b"fine\ncaf\xe9\n")
    assert inputError(job) == (
        f"Sources.fileWatcher: '{watched / 'latin.txt'}' line 2 is not valid utf-8: invalid continuation byte "
        "at byte 8 of the file; if the files are in another charset, name it: "
        "Sources.fileWatcher(directory, charset='latin-1')"
    )


def deleteGone(directory: str, prefix: str) -> None:
    for name in os.listdir(directory):
        if name.startswith(prefix):
            os.remove(os.path.join(directory, name))


class DeletingWatcherP(FileWatcherP):
    """Makes certain the race of a file deleted right after it appeared: deletes the files
    named early* after Spark listed them, before it looks at them again to read them, and those
    named late* after that, before the driver checks them."""

    def listedFiles(self, rows):
        deleteGone(self.directory, "early")
        listed = super().listedFiles(rows)
        deleteGone(self.directory, "late")
        return listed


def test_a_file_deleted_right_after_it_appeared_is_skipped_and_the_job_goes_on(jet, watched, caplog):
    job = jet.newJob(withWatcher(watching(watched, "after-deleted"), DeletingWatcherP))
    with caplog.at_level(logging.WARNING, logger="sparkjet"):
        dropFile(watched, "early12.txt", ["lost"])
        dropFile(watched, "late12.txt", ["lost too"])
        dropFile(watched, "kept.txt", ["kept"])
        eventually(lambda: jet.getList("after-deleted") == ["kept"])
        dropFile(watched, "next.txt", ["next"])
        eventually(lambda: jet.getList("after-deleted") == ["kept", "next"])
    assert job.getStatus() is JobStatus.RUNNING
    job.cancel()
    warned = [record.getMessage() for record in caplog.records if "skipped" in record.getMessage()]
    assert warned == [
        f"Sources.fileWatcher: skipped '{watched / 'late12.txt'}': it was deleted after it appeared in "
        f"'{watched}' and before it was read (Sources.fileWatcher(directory, ignoreMissingFiles=False) makes "
        "this an error)"
    ]


def test_a_file_deleted_before_it_is_read_fails_the_job_naming_it_where_missing_files_are_not_ignored(jet, watched):
    job = jet.newJob(withWatcher(watching(watched, "deleted-fails", ignoreMissingFiles=False), DeletingWatcherP))
    dropFile(watched, "early12.txt", ["lost"])
    assert inputError(job) == (
        f"Sources.fileWatcher: '{watched / 'early12.txt'}' was deleted after it appeared in '{watched}' and "
        "before it was read; keep files there until they are read, or skip such files: "
        "Sources.fileWatcher(directory, ignoreMissingFiles=True), the default"
    )


def test_a_file_read_while_still_being_written_is_reported_once_naming_it(jet, watched, caplog):
    job = jet.newJob(watching(watched, "being-written"))
    read = lambda: jet.getList("being-written")  # noqa: E731
    with caplog.at_level(logging.WARNING, logger="sparkjet"):
        dropFile(watched, "growing.txt", [f"line {number}" for number in range(101)])
        eventually(lambda: len(read()) == 101)
        with (watched / "growing.txt").open("a") as growing:
            growing.write("".join(f"line {number}\n" for number in range(101, 200)))
        dropBytes(watched, "cut.txt", b"one\ntw")
        eventually(lambda: read()[101:] == ["one", "tw"])
        dropFile(watched, "next.txt", ["next"])
        eventually(lambda: read()[-1:] == ["next"])
    job.cancel()
    warned = sorted(record.getMessage() for record in caplog.records if record.levelno == logging.WARNING)
    assert warned == [
        f"Sources.fileWatcher: '{watched / 'cut.txt'}' does not end with a line end: it may have been read "
        "while still being written (its last line cut short, what followed never read); write each file "
        f"elsewhere, then move it into '{watched}' whole (a rename)",
        f"Sources.fileWatcher: '{watched / 'growing.txt'}' changed after it was read (799 bytes then, 1,690 "
        "now): it was still being written, and what was written after it was read is never read, as Spark's "
        f"file stream source reads each file once; write each file elsewhere, then move it into '{watched}' "
        "whole (a rename)",
    ]


def test_a_line_longer_than_the_limit_fails_the_job_naming_the_file_and_its_size(jet, watched):
    job = jet.newJob(watching(watched, "long-line", maxLineBytes=1 << 20))
    dropBytes(watched, "long.txt", b"short\n" + b"x" * (3 << 20) + b"\n")
    assert inputError(job) == (
        f"Sources.fileWatcher: '{watched / 'long.txt'}' line 2 is 3,145,728 bytes long, more than the "
        "1,048,576 bytes a line may have (a line is one item, held whole in memory); if such lines are "
        "expected, raise the limit: Sources.fileWatcher(directory, maxLineBytes=3145728)"
    )


def failsOnNoTime(line: str) -> int:
    if line == "no time":
        raise ValueError("no time here")
    return int(line.split()[0])


def test_a_timestamp_function_that_fails_names_the_file_and_line_its_item_came_from(jet, watched):
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(watched))).withTimestamps(failsOnNoTime, 0).writeTo(Sinks.noop())
    job = jet.newJob(p)
    dropFile(watched, "a.txt", ["10 ant", "no time"])
    eventually(lambda: job.getStatus() is JobStatus.FAILED)
    with pytest.raises(UserFunctionError, match=rf"failed on item 'no time' \(line 2 of '{watched / 'a.txt'}'\): "
                       r"ValueError: no time here"):
        job.join()


def lineTime(line: str) -> int:
    return int(line.split()[0])


def lineWord(line: str) -> str:
    return line.split()[1]


def test_the_files_one_micro_batch_takes_are_read_in_the_order_they_appeared(jet, watched):
    # file i holds event times from i * 2 s on; Spark's file source gives a micro-batch's files
    # largest first, in partitions of about two: in its order file 3 comes before file 2
    sizes = [70, 60, 40, 50]
    files = [[f"{i * 2000 + number} w{number % 3}" for number in range(size)] for i, size in enumerate(sizes)]
    appeared = time.time() - 60
    for number, lines in enumerate(files):  # all there before the job starts: its first micro-batch takes them
        dropFile(watched, f"{number}.txt", lines)
        os.utime(watched / f"{number}.txt", (appeared + number, appeared + number))
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(watched))).withTimestamps(lineTime, 100)
      .groupingKey(lineWord).window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("in-order")))
    expected = Counter((lineTime(line) // 1000 * 1000, lineWord(line)) for lines in files for line in lines)
    job = jet.newJob(p)
    eventually(lambda: job.metrics().itemsReadInMicroBatches == sum(sizes))
    dropFile(watched, "end.txt", ["60000 end"])  # its watermark closes every window before it
    results = jet.getList("in-order")
    eventually(lambda: any(result.start == 6000 for result in results))
    job.cancel()
    assert Counter({(result.start, result.key): result.result for result in results}) == expected
    assert len(results) == len(expected), "each window is emitted once"


def sparkJobsOf(spark, group: str, run) -> int:
    """Return how many Spark jobs ``run()`` starts (in Spark job group ``group``)."""
    sc = spark.sparkContext
    sc.setJobGroup(group, "counted")
    try:
        run()
    finally:  # what setJobGroup set, cleared: later jobs of this thread are in no group, described by Spark
        for name in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(name, None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def test_a_micro_batchs_files_are_put_in_order_by_the_driver_without_a_spark_job(spark, watched):
    """Listing the files is one Spark job and reading them another; their order costs none
    (a DataFrame's orderBy cost a sampling job and a shuffle every micro-batch)."""
    for number, modified in enumerate([30, 10, 20]):
        dropFile(watched, f"{number}.txt", [f"line {number}"])
        os.utime(watched / f"{number}.txt", (1_700_000_000 + modified, 1_700_000_000 + modified))
    watcher = next(
        vertex.processorSupplier for vertex in plan(watching(watched, "unused")).dag.vertices()
        if isinstance(vertex.processorSupplier, FileWatcherP)
    )
    listed = watcher.streamRows(
        spark.read.format("binaryFile").load(str(watched)), text="path", eventTime="length",
        sequence="unix_millis(modificationTime)",
    )
    read = []
    jobs = sparkJobsOf(spark, "file-order", lambda: read.extend(watcher.microBatchRows(listed).rdd.collect()))
    assert [os.path.basename(row.text) for row in read] == ["1.txt", "2.txt", "0.txt"]
    assert jobs == 2
