"""Windowed aggregation over a stream, a micro-batch at a time: the windows of a finite test
stream equal a plain count per window whatever the parallelism and however many micro-batches
the stream is cut into, because each processor carries its state (frames, sessions, watermarks)
from one micro-batch to the next in its snapshot."""

import random
from collections import Counter

import pytest

from sparkjet import (
    AggregateOperations,
    MetricNames,
    MetricTags,
    Pipeline,
    Sinks,
    TestSources,
    WindowDefinition,
    wholeItem,
)
from sparkjet.coredag.model.window_result import KeyedWindowResult

pytestmark = pytest.mark.spark

RANDOM = random.Random(7)
LAG = 30
EVENTS = []
for _ in range(240):
    # time moves forward, with disorder smaller than the allowed lag
    time = len(EVENTS) * 2 + RANDOM.randrange(0, LAG)
    EVENTS.append((time, RANDOM.choice(["ant", "bee", "cat", "dog"])))


def tumblingCounts(size: int) -> Counter:
    return Counter((time // size * size, time // size * size + size, word) for time, word in EVENTS)


def slidingCounts(size: int, slide: int) -> Counter:
    counts = Counter()
    for time, word in EVENTS:
        for end in range(time // slide * slide + slide, time + size + 1, slide):
            counts[end - size, end, word] += 1
    return counts


def windowedCount(jet, name: str, window, itemsPerBatch: int, parallelism: int) -> Counter:
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch)).withNativeTimestamps(LAG)
      .groupingKey(wholeItem()).window(window)
      .aggregate(AggregateOperations.counting()).setLocalParallelism(parallelism)
      .writeTo(Sinks.list(name)))
    jet.newJob(p).join()
    results = jet.getList(name)
    assert all(isinstance(result, KeyedWindowResult) and not result.isEarly for result in results)
    counted = Counter({(r.start, r.end, r.key): r.result for r in results})
    assert sum(counted.values()) > 0 and len(counted) == len(results), "each window is emitted once"
    return counted


@pytest.mark.parametrize("itemsPerBatch, parallelism", [(len(EVENTS), 1), (40, 2), (25, 3)])
def test_tumbling_windows_of_a_stream_equal_a_plain_count(jet, itemsPerBatch, parallelism):
    name = f"tumbling-{itemsPerBatch}-{parallelism}"
    assert windowedCount(jet, name, WindowDefinition.tumbling(50), itemsPerBatch, parallelism) == tumblingCounts(50)


def test_sliding_windows_of_a_stream_equal_a_plain_count(jet):
    counted = windowedCount(jet, "sliding", WindowDefinition.sliding(60, 20), 60, 2)
    assert counted == slidingCounts(60, 20)


def test_session_windows_of_a_stream_are_jets_documented_sessions(jet):
    p = Pipeline.create()
    events = [(time, "k") for time in (0, 1, 4, 8, 9, 10, 15)]
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.session(2))
      .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("sessions")))
    jet.newJob(p).join()
    sessions = sorted((r.start, r.end, r.result) for r in jet.getList("sessions"))
    assert sessions == [(0, 3, 2), (4, 6, 1), (8, 12, 3), (15, 17, 1)]


def test_a_stream_jobs_metrics_show_its_micro_batches_watermarks_and_late_events(jet):
    p = Pipeline.create()
    events = [(100, "a"), (110, "b"), (0, "late"), (120, "a")]  # 0 comes after the watermark reached 110
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=2)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(50))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("late")))
    job = jet.newJob(p)
    job.join()
    metrics = job.metrics()
    assert [batch.itemsRead for batch in metrics.microBatches] == [2, 2, 0], "two micro-batches, then the final run"
    # dropped once: where it arrives, as Jet's, by a first stage its Python worker kept alive; else
    # by the last, which keeps the next window to emit that a first stage saves not, as Jet's
    dropped = [metrics.vertex(name).lateEventsDropped for name in ("sliding-window-prepare", "sliding-window")]
    assert sorted(dropped) == [0, 1]
    assert metrics.vertex("finiteStream-add-timestamps").watermark == 100, "120 throttled to the windows' stride"
    assert metrics.vertex("sliding-window").watermark == 100
    assert "3 micro-batches, 4 items read" in metrics.format()
    assert "1 late event dropped" in metrics.format()
    assert sorted((r.start, r.key, r.result) for r in jet.getList("late")) == [(100, "a", 2), (100, "b", 1)]
    byName = job.getMetrics()  # the same figures under Jet's MetricNames, per vertex and processor
    late = byVertex(byName, MetricNames.LATE_EVENTS_DROPPED)
    assert [max(late[name]) for name in ("sliding-window-prepare", "sliding-window")] == dropped
    assert byVertex(byName, MetricNames.RECEIVED_COUNT)["finiteStream-add-timestamps"] == {4}
    assert byVertex(byName, MetricNames.LAST_FORWARDED_WM)["finiteStream-add-timestamps"] == {100}
    assert byVertex(byName, MetricNames.TOP_OBSERVED_WM)["sliding-window"] == {100}
    assert byVertex(byName, MetricNames.COALESCED_WM)["sliding-window"] == {100}
    processors = {m.tag(MetricTags.PROCESSOR) for m in byName.get(MetricNames.TOP_OBSERVED_WM)}
    assert processors and all(processor.isdigit() for processor in processors), "one measurement per processor"


def byVertex(metrics, name: str) -> dict[str, set]:
    """Return the values of metric ``name`` by the vertex each measurement is tagged with."""
    values: dict[str, set] = {}
    for measurement in metrics.get(name):
        values.setdefault(measurement.tag(MetricTags.VERTEX), set()).add(measurement.value())
    return values
