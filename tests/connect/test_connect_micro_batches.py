"""A stream job's micro-batches on the Connect engine (issue 36, point 5): each run through the
DataFrame API alone, processors starting from the states the previous micro-batch saved, gives
the classic engine's lists, figures, watermarks and states, micro-batch by micro-batch."""

import shutil
from collections import Counter

import attrs
import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.runtime.cache import Cache
from sparkjet.coredag.runtime.engine import engineOf
from sparkjet.coredag.runtime.physical_plan import physicalPlan
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.micro_batch_loop import MicroBatchLoop, StreamTarget
from sparkjet.planner.planning import planOf
from tests.connect.streams import (
    PIPELINES,
    WINDOW,
    WORDS,
    StreamRun,
    committedLines,
    runMicroBatches,
    streamRows,
    windowedCounts,
    wordEvents,
)
from tests.streaming.test_remote_checkpoint import ftpRoot  # a fixture

pytestmark = pytest.mark.spark

EVENTS = (tuple(wordEvents(0, 25)), tuple(wordEvents(25, 20)), tuple(wordEvents(45, 30)))
"""Three micro-batches' word events, in time order."""


@pytest.fixture
def engine(connect):
    """The engine of the Connect session (no SparkContext in this process)."""
    from pyspark import SparkContext

    before = SparkContext._active_spark_context
    yield engineOf(connect)
    assert SparkContext._active_spark_context is before, "the Connect engine started a SparkContext"


def counted(results) -> Counter:
    """Return the window counts the micro-batches' list 'counts' received, by (window start, word)."""
    found = Counter()
    for result in results:
        for window in result.lists.get("counts", []):
            assert isinstance(window, KeyedWindowResult) and window.end == window.start + WINDOW
            found[window.start, window.key] += window.result
    return found


def comparable(results) -> list:
    """Return each micro-batch's lists (in no order), figures and watermarks."""
    return [
        ({name: Counter(map(repr, items)) for name, items in result.lists.items()}, result.figures, result.watermarks)
        for result in results
    ]


def bothEngines(engine, connect, comparingServer, run: StreamRun, classicRun: StreamRun):
    """Return ``run`` on the Connect engine and ``classicRun`` (the same micro-batches, with a
    checkpoint of its own) on the classic engine, checked: the same lists, figures and watermarks."""
    result = runMicroBatches(engine, connect, run)
    classic = comparingServer.runMicroBatchesOnClassicEngine(classicRun)
    assert result.failure is None and classic.failure is None, result.failure or classic.failure
    assert comparable(result.microBatches) == comparable(classic.microBatches)
    assert {name: byIndex.keys() for name, byIndex in result.states.items()} == {
        name: byIndex.keys() for name, byIndex in classic.states.items()
    }
    return result, classic


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_windowed_count_over_micro_batches_is_the_classic_engines(engine, connect, comparingServer, tmp_path, parallelism):
    batches = ((0, EVENTS[0]), (1, EVENTS[1]), (2, EVENTS[2]), (3, None))
    run = StreamRun("windowedWordCount", parallelism, str(tmp_path / "connect"), batches)
    result, _ = bothEngines(engine, connect, comparingServer, run, attrs.evolve(run, checkpoint=str(tmp_path / "classic")))
    assert counted(result.microBatches) == windowedCounts(event for events in EVENTS for event in events)
    assert all(result.microBatches[batch].lists.get("counts") for batch in range(3)), "windows close as time goes on"
    last = max(time for time, _ in EVENTS[2])
    flushed = {window.start for window in result.microBatches[3].lists["counts"]}
    assert flushed == {last - last % WINDOW}, "the final run flushes the windows the watermark has not closed"
    observed = [
        max(watermark for byIndex in result.microBatches[batch].watermarks.values() for watermark, _ in byIndex.values())
        for batch in range(3)
    ]
    assert observed == sorted(observed) and observed[0] < observed[2], "watermarks go on from micro-batch to micro-batch"


@pytest.mark.parametrize("restartedAt", [2, 3], ids=["same parallelism", "shares"])
def test_a_restart_from_saved_states_with_no_processor_alive_gives_the_same_answer(
    engine, connect, comparingServer, tmp_path, restartedAt,
):
    first = StreamRun("windowedWordCount", 2, str(tmp_path / "connect"), ((0, EVENTS[0]), (1, EVENTS[1])))
    before, classicBefore = bothEngines(
        engine, connect, comparingServer, first, attrs.evolve(first, checkpoint=str(tmp_path / "classic"))
    )
    for side in ("connect", "classic"):  # another state directory: no processor kept alive takes up its state
        shutil.copytree(tmp_path / side, tmp_path / f"{side}-restarted")
    then = StreamRun(
        "windowedWordCount", restartedAt, str(tmp_path / "connect-restarted"), ((2, EVENTS[2]), (3, None)),
        restored=before.states,
    )
    classicThen = attrs.evolve(then, checkpoint=str(tmp_path / "classic-restarted"), restored=classicBefore.states)
    after, _ = bothEngines(engine, connect, comparingServer, then, classicThen)
    windows = [name for name in after.states if len(after.states[name]) == restartedAt]
    assert windows, f"a vertex restored at parallelism {restartedAt}"
    assert counted(before.microBatches + after.microBatches) == windowedCounts(
        event for events in EVENTS for event in events
    )


def test_a_vertex_no_stream_reaches_runs_once_per_run(engine, connect, comparingServer, tmp_path):
    batches = ((0, EVENTS[0]), (1, EVENTS[1]), (2, EVENTS[2]), (3, None))
    marker = tmp_path / "noted"
    run = StreamRun("joinedWordCount", 2, str(tmp_path / "connect"), batches, (str(marker),))
    result = runMicroBatches(engine, connect, run)
    assert result.failure is None, result.failure
    assert sorted(marker.read_text().splitlines()) == sorted(repr((word, word.upper())) for word in set(WORDS))
    expected = Counter()
    for (start, word), count in windowedCounts(event for events in EVENTS for event in events).items():
        expected[start, f"{word}:{word.upper()}"] += count
    assert counted(result.microBatches) == expected
    classic = comparingServer.runMicroBatchesOnClassicEngine(
        attrs.evolve(run, checkpoint=str(tmp_path / "classic"), arguments=(str(tmp_path / "noted-classic"),))
    )
    assert comparable(result.microBatches) == comparable(classic.microBatches)
    assert result.microBatches[0].figures["itemsOut", "names"] == len(set(WORDS))
    assert all(result.microBatches[batch].figures["itemsOut", "names"] == 0 for batch in (1, 2, 3))


@pytest.mark.parametrize("atUrl", [False, True], ids=["path", "ftp-url"])
def test_a_files_sink_keeps_each_micro_batchs_files_and_nothing_of_a_failed_one(
    engine, connect, comparingServer, tmp_path, ftpRoot, atUrl,
):
    """The Connect engine's files sink writes at a path of the server or at an FTP URL (through
    fsspec), the classic engine's at a path: the same files, the same lines."""
    batches = ((0, EVENTS[0]), (1, EVENTS[1]), (2, ((80, "ant"), (81, "boom"), (82, "bee"))))
    served, url = ftpRoot
    places = {"connect": served / "connect", "classic": tmp_path / "classic"}
    directories = {side: place / "words" for side, place in places.items()}
    for place in places.values():
        place.mkdir()
        (place / "keep.txt").write_text("mine")
    written = f"{url}/connect/words" if atUrl else str(directories["connect"])
    run = StreamRun("filedWords", 2, str(tmp_path / "connect-checkpoint"), batches, (written,))
    result = runMicroBatches(engine, connect, run)
    classic = comparingServer.runMicroBatchesOnClassicEngine(
        attrs.evolve(run, checkpoint=str(tmp_path / "classic-checkpoint"), arguments=(str(directories["classic"]),))
    )
    assert isinstance(result.failure, UserFunctionError) and "'boom'" in result.failure.itemRepr
    assert str(result.failure) == str(classic.failure)
    assert len(result.microBatches) == 2
    names, lines = committedLines(directories["connect"])
    assert lines == Counter(word for events in EVENTS[:2] for _, word in events)
    assert all(name.startswith(("part-00000-", "part-00001-")) for name in names), names
    assert (names, lines) == committedLines(directories["classic"])
    for place in places.values():
        assert sorted(path.name for path in place.iterdir()) == ["keep.txt", "words"]
        assert (place / "keep.txt").read_text() == "mine"



def test_a_stream_sources_processors_share_a_micro_batchs_rows_and_see_the_jobs_guarantee(
    engine, connect, comparingServer, tmp_path,
):
    batches = ((0, EVENTS[0]), (1, EVENTS[1]), (2, None))
    run = StreamRun(
        "guaranteedWords", 2, str(tmp_path / "connect"), batches, (3,), guarantee=ProcessingGuarantee.EXACTLY_ONCE
    )
    result, _ = bothEngines(engine, connect, comparingServer, run, attrs.evolve(run, checkpoint=str(tmp_path / "classic")))
    for number, events in enumerate(EVENTS[:2]):
        figures = result.microBatches[number].figures
        assert figures["processors", "finiteStream"] == 3, "the rows padded to the source's parallelism"
        assert Counter(result.microBatches[number].lists["words"]) == Counter(
            (word, "EXACTLY_ONCE") for _, word in events
        )
    assert result.microBatches[2].lists.get("words", []) == []


def test_the_micro_batch_loop_runs_its_micro_batches_on_the_connect_engine(engine, connect, tmp_path):
    dag = preflightDag(planOf(PIPELINES["windowedWordCount"]()).dag)
    target = StreamTarget(engine, dag, physicalPlan(dag, 2), "loop", engine.jobControl("loop"))
    delivered = []
    loop = MicroBatchLoop(target, engine.outputDirectories(dag), delivered.append, ["finiteStream"], Cache())
    loop.open(StreamCheckpoint(str(tmp_path / "checkpoint")), True, None)
    for batchId, events in enumerate(EVENTS):
        loop.run(streamRows(connect, dag, events), batchId)
    loop.run(None, -1, final=True)
    loop.end(lambda: None)
    windows = [window for lists in delivered for window in lists.get("counts", [])]
    assert Counter({(window.start, window.key): window.result for window in windows}) == windowedCounts(
        event for events in EVENTS for event in events
    )
    metrics = loop.metrics()
    assert [batch.itemsRead for batch in metrics.microBatches] == [*map(len, EVENTS), 0]
    assert metrics.vertex("sliding-window").watermark is not None, "the processors' watermarks, saved as states"
    assert metrics.lastSnapshot is not None and metrics.lastSnapshot.snapshotId == len(EVENTS) - 1
