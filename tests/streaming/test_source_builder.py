"""Stream sources of the user's functions (Jet's SourceBuilder.stream and timestampedStream):
the driver calls fillBufferFn in a thread of its own, the items reach the job a micro-batch at a
time, destroyFn ends the state, and a function that raises fails the job naming the source. Each
file fed is saved with the source's snapshot (createSnapshotFn), and a feeder started again goes
on from the last file fed (restoreSnapshotFn), whatever moment the one before stopped at."""

import base64
import os
import pickle
import shutil
import threading
import time
from collections import Counter

import pytest

from sparkjet import (
    AggregateOperations,
    AssertionCompletedException,
    Assertions,
    JobError,
    Pipeline,
    Sinks,
    SourceBuilder,
    UserFunctionError,
    WindowDefinition,
    wholeItem,
)
from sparkjet.coredag.processors.built_stream_source import BuiltStreamP, FeedDirectory
from sparkjet.pipeline.errors import PipelineError
from tests.conftest import eventually, treeProgress

WORDS = "ant bee ant cat ant bee dog ant".split() * 5
DESTROYED: list = []


class Counting:
    """A source's state: the next word to add."""

    def __init__(self, context):
        self.next = 0
        self.jobName = context.jobName


def addThree(state: Counting, buffer) -> None:
    """Add up to three words a call, each at 10 ms times its number, until there are none."""
    for _ in range(3):
        if state.next < len(WORDS):
            buffer.add(WORDS[state.next], state.next * 10)
            state.next += 1


def destroyed(state: Counting) -> None:
    DESTROYED.append(state.next)


def windowCounts(results) -> Counter:
    return Counter({(r.start, r.key): r.result for r in results})


EXPECTED = Counter((number * 10 // 100 * 100, word) for number, word in enumerate(WORDS))


def test_a_builder_needs_its_fill_function_and_a_plain_stream_has_no_native_time():
    with pytest.raises(PipelineError, match="SourceBuilder 'words' .*fillBufferFn must be set"):
        SourceBuilder.stream("words", Counting).build()
    plain = SourceBuilder.stream("words", Counting).fillBufferFn(addThree).build()
    with pytest.raises(PipelineError, match="The source doesn't support native timestamps"):
        Pipeline.create().readFrom(plain).withNativeTimestamps(0)


def test_a_builder_takes_jets_snapshot_functions_create_then_restore():
    source = (SourceBuilder.stream("numbers", Numbers).fillBufferFn(addNumbers)
              .createSnapshotFn(snapshotOf).restoreSnapshotFn(restoreFrom).build())
    assert (source.createSnapshotFn, source.restoreSnapshotFn) == (snapshotOf, restoreFrom)
    refused = (r"SourceBuilder 'numbers' \(at .*test_source_builder.py:\d+\): createSnapshotFn must be followed by "
               r"restoreSnapshotFn, as in Jet; call .restoreSnapshotFn\(fn\) before .build")
    with pytest.raises(PipelineError, match=refused):
        SourceBuilder.stream("numbers", Numbers).fillBufferFn(addNumbers).createSnapshotFn(snapshotOf).build()


def test_a_built_source_without_snapshot_functions_says_it_cannot_go_on_after_a_restart():
    assert numbersSource(createSnapshotFn=snapshotOf, restoreSnapshotFn=restoreFrom).cannotReplay() is None
    assert numbersSource().cannotReplay() == (
        "SourceBuilder.stream('numbers') has no createSnapshotFn and restoreSnapshotFn, so after a restart it would "
        "start over from createFn and feed its items a second time: add both to its builder, .createSnapshotFn(lambda "
        "state: snapshot).restoreSnapshotFn(lambda state, snapshots: ...), as Jet's fault-tolerant sources do, or run "
        "the job without a processing guarantee (ProcessingGuarantee.NONE: started again, it starts over)"
    )


@pytest.mark.spark
def test_a_timestamped_stream_of_your_functions_is_windowed_until_the_assertion_passes(jet):
    source = SourceBuilder.timestampedStream("words", Counting).fillBufferFn(addThree).destroyFn(destroyed).build()
    p = Pipeline.create()
    # windows close once a later word's time passes them: all but the last
    closable = Counter({key: count for key, count in EXPECTED.items() if key[0] < max(start for start, _ in EXPECTED)})
    (p.readFrom(source).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(100))
      .aggregate(AggregateOperations.counting())
      .apply(Assertions.assertCollectedEventually(60, lambda results: _assertEqual(windowCounts(results), closable)))
      .writeTo(Sinks.list("built-windows")))
    with pytest.raises(AssertionCompletedException):
        jet.newJob(p).join()
    assert windowCounts(jet.getList("built-windows")) == closable
    assert DESTROYED[-1] == len(WORDS), "destroyFn got the state after the last word"


def _assertEqual(actual, expected):
    assert actual == expected


def failing(state, buffer):
    raise OSError("the feed is down")


@pytest.mark.spark
def test_a_failing_fill_function_fails_the_job_naming_the_source(jet):
    p = Pipeline.create()
    p.readFrom(SourceBuilder.stream("feed", Counting).fillBufferFn(failing).build()).withoutTimestamps().writeTo(Sinks.noop())
    with pytest.raises(UserFunctionError, match=r"Stage 'feed' failed on item \(in fillBufferFn\): OSError: the feed is down"):
        jet.newJob(p).join()


@pytest.mark.spark
def test_a_source_that_cannot_start_stops_the_sources_started_before_it(jet, monkeypatch):
    """A job whose second built source cannot read its feed directory fails saying so, and the
    first one, already fed by its thread, stops with it: destroyFn called, no thread left writing
    files into the checkpoint."""
    recover = FeedDirectory.recover

    def unreadableSecond(feed):
        if feed.path.endswith("source-1"):
            raise PermissionError(f"[Errno 13] Permission denied: '{feed.path}'")
        return recover(feed)

    monkeypatch.setattr(FeedDirectory, "recover", unreadableSecond)
    DESTROYED.clear()
    p = Pipeline.create()
    first, second = (
        p.readFrom(SourceBuilder.stream(name, Counting).fillBufferFn(addThree).destroyFn(destroyed).build())
        for name in ("first-feed", "second-feed")
    )
    first.withoutTimestamps().merge(second.withoutTimestamps()).writeTo(Sinks.noop())
    with pytest.raises(PermissionError, match=r"Permission denied: '.*source-1'"):
        jet.newJob(p).join()
    feeding = [thread.name for thread in threading.enumerate() if thread.name.endswith("-feed")]
    assert feeding == [], "a source's thread still feeds the failed job's checkpoint"
    assert len(DESTROYED) == 1, "the source started first got destroyFn"


def addOnce(state: list, buffer) -> None:
    if not state:
        state.append("added")
        buffer.add("one item")


def test_a_feeder_started_again_writes_after_the_files_of_the_run_before(tmp_path):
    """Spark's file source skips a name it has read: a resumed or restarted job's feeder must
    not write events-000000000.txt again."""
    (tmp_path / "events-000000004.txt").write_text("")
    feeder = BuiltStreamP(lambda context: [], addOnce, sourceId="once").feeder("job", str(tmp_path))
    feeder.start()
    eventually(lambda: (tmp_path / "events-000000005.txt").exists(), treeProgress(tmp_path))
    feeder.stop()
    assert fedFiles(tmp_path) == ["events-000000004.txt", "events-000000005.txt"]


def fedFiles(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if not name.startswith("."))


def fedItems(directory) -> list:
    """Return the items of the files fed into ``directory``, decoded as the job's rows are."""
    return [
        pickle.loads(base64.b64decode(line))[1]
        for name in fedFiles(directory)
        for line in (directory / name).read_text().splitlines()
    ]


class Numbers:
    """A source's state: the next number to add."""

    def __init__(self, context):
        self.next = 0


def addNumbers(state: Numbers, buffer) -> None:
    """Add the next 7 numbers, slowly enough that they go into many files."""
    for _ in range(7):
        buffer.add(state.next)
        state.next += 1
    time.sleep(0.005)


def numbersSource(**functions) -> BuiltStreamP:
    return BuiltStreamP(Numbers, addNumbers, sourceId="numbers", **functions)


def snapshotOf(state: Numbers) -> int:
    return state.next


def restoreFrom(state: Numbers, snapshots: list) -> None:
    state.next = snapshots[0]


RESTORABLE = {"createSnapshotFn": snapshotOf, "restoreSnapshotFn": restoreFrom}


def feedUntil(source: BuiltStreamP, directory, files: int) -> None:
    """Run a feeder of ``source`` into ``directory`` until ``files`` files are there in all, then stop it."""
    feeder = source.feeder("job", str(directory))
    feeder.start()
    eventually(lambda: feeder.failure is not None or len(fedFiles(directory)) >= files, treeProgress(directory))
    feeder.stop()
    assert feeder.failure is None, feeder.failure


def test_a_feeder_started_again_goes_on_from_the_snapshot_of_the_last_file_it_fed(tmp_path):
    feedUntil(numbersSource(**RESTORABLE), tmp_path, 3)
    feedUntil(numbersSource(**RESTORABLE), tmp_path, 6)
    items = fedItems(tmp_path)
    assert items == list(range(len(items))), "every number once, in order, across the two runs"


def test_without_snapshot_functions_a_feeder_started_again_starts_over_as_jets_does(tmp_path):
    feedUntil(numbersSource(), tmp_path, 2)
    first = len(fedItems(tmp_path))
    feedUntil(numbersSource(), tmp_path, 4)
    assert fedItems(tmp_path)[first] == 0, "createFn's state again, from 0"


def test_a_snapshot_of_none_is_not_restored_as_in_jet(tmp_path):
    restored = []
    source = numbersSource(createSnapshotFn=lambda state: None, restoreSnapshotFn=lambda _, saved: restored.append(saved))
    feedUntil(source, tmp_path, 1)
    feedUntil(source, tmp_path, 2)
    assert restored == []


def test_a_snapshot_that_cannot_be_pickled_fails_the_source_naming_it(tmp_path):
    locking = numbersSource(createSnapshotFn=lambda state: threading.Lock(), restoreSnapshotFn=restoreFrom)
    feeder = locking.feeder("job", str(tmp_path))
    feeder.start()
    eventually(lambda: feeder.failure is not None, treeProgress(tmp_path))
    feeder.stop()
    assert str(feeder.failure) == (
        "Stage 'numbers' failed on item (in createSnapshotFn): TypeError: cannot pickle '_thread.lock' object"
    )
    assert fedFiles(tmp_path) == [], "nothing fed without its snapshot"


def feedWithSnapshots(directory, snapshots: dict[int, int]) -> FeedDirectory:
    """Feed files 0, 1... each of one line, with the snapshot ``snapshots[number]``."""
    directory.mkdir(exist_ok=True)
    feed = FeedDirectory(str(directory))
    for number, snapshot in snapshots.items():
        feed.feed(number, [f"line {number}\n"], pickle.dumps([snapshot]))
    return feed


@pytest.mark.parametrize(("written", "following", "restored"), [
    (".events-000000002.snapshot.writing", 2, [20]),  # its snapshot not saved: dropped, its items made again
    (".events-000000002.snapshot", 3, [30]),  # its snapshot saved: its items moved into place
])
def test_a_file_the_feeder_died_feeding_is_finished_if_its_snapshot_was_saved_else_dropped(
    tmp_path, written, following, restored
):
    feed = feedWithSnapshots(tmp_path, {0: 10, 1: 20})
    (tmp_path / ".events-000000002.txt.writing").write_text("line 2\n")
    (tmp_path / written).write_bytes(pickle.dumps([30]))
    saved, snapshot = feed.recover()
    assert (saved, pickle.loads(snapshot)) == (following, restored)
    assert sorted(os.listdir(tmp_path)) == [f".events-{following - 1:09d}.snapshot", *fedFiles(tmp_path)]
    assert [(tmp_path / name).read_text() for name in fedFiles(tmp_path)] == [f"line {n}\n" for n in range(following)]


def test_files_spark_removed_after_reading_them_leave_the_numbering_and_the_snapshot(tmp_path):
    feed = feedWithSnapshots(tmp_path, {0: 10, 1: 20, 2: 30})
    for number in range(3):
        os.remove(feed.fedPath(number))
    following, snapshot = feed.recover()
    assert (following, pickle.loads(snapshot)) == (3, [30])


def test_a_copy_taken_while_files_are_fed_and_read_goes_on_from_where_it_was_taken(tmp_path, monkeypatch):
    """An exported snapshot copies the directory while the feeder feeds files (removing the
    snapshot before each) and Spark removes those it read: here one more file is fed and the
    oldest removed before each file copied, from a file half fed (its snapshot saved, its items
    not yet in place). The copy's last snapshot and the files fed up to it agree."""
    live = feedWithSnapshots(tmp_path / "live", {number: number for number in range(4)})
    (tmp_path / "live" / ".events-000000004.txt.writing").write_text("line 4\n")
    (tmp_path / "live" / ".events-000000004.snapshot").write_bytes(pickle.dumps([4]))
    copyfile, fed, read = shutil.copyfile, [4], [0]

    def feedingAndReading(source, target, **options):
        if fed[0] == 4:
            os.rename(tmp_path / "live" / ".events-000000004.txt.writing", live.fedPath(4))
        else:
            live.feed(fed[0], [f"line {fed[0]}\n"], pickle.dumps([fed[0]]))
        fed[0] += 1
        os.remove(live.fedPath(read[0]))
        read[0] += 1
        return copyfile(source, target, **options)

    monkeypatch.setattr(shutil, "copyfile", feedingAndReading)
    live.copyTo(str(tmp_path / "copy"))
    monkeypatch.undo()
    following, snapshot = FeedDirectory(str(tmp_path / "copy")).recover()
    assert pickle.loads(snapshot) == [following - 1], "the snapshot of the last file copied"
    copied = [int(name[7:16]) for name in fedFiles(tmp_path / "copy")]
    assert set(range(read[0], following)) <= set(copied) <= set(range(following)), "no file Spark had not read is lost"


@pytest.mark.parametrize("timestamp", [True, 1.5, None, "5"])
def test_a_timestamped_buffer_refuses_a_timestamp_that_is_not_an_int_of_milliseconds(timestamp):
    from sparkjet.coredag.processors.built_stream_source import SourceBuffer

    with pytest.raises(JobError, match=r"takes add\(item, timestamp\), got timestamp .* for item 'x': .*int"):
        SourceBuffer(timestamped=True).add("x", timestamp)
