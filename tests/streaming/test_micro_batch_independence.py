"""One event sequence fed in micro-batches of 1, 7 and all its events gives the same output:
watermarks travel in-band, so every processor sees each watermark where Jet's would, among the
events, wherever the micro-batches fall (issue 27, point 1). The expected values follow Jet's
rules by hand: with no lag, add-timestamps emits the watermark its stride allows before the
event that advances it; an event is late where the watermark passed it."""

from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem

pytestmark = pytest.mark.spark

EVENTS = [
    (0, "a"), (4, "b"), (12, "a"), (3, "a"), (17, "b"), (25, "a"), (14, "b"), (31, "a"),
    (33, "b"), (47, "a"), (20, "a"), (52, "b"), (55, "a"), (71, "b"), (72, "a"), (90, "a"),
]
"""Three events come after the watermark passed them: (3, a) after 10, (14, b) after 20, (20, a) after 40."""

SIZES = [1, 7, len(EVENTS)]


def windowed(jet, name: str, window, itemsPerBatch: int):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(window)
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list(name)))
    job = jet.newJob(p)
    job.join()
    late = sum(vertex.lateEventsDropped for vertex in job.metrics().vertices)
    return Counter((r.start, r.end, r.key, r.result) for r in jet.getList(name)), late


@pytest.mark.parametrize("itemsPerBatch", SIZES)
def test_tumbling_windows_drop_the_same_late_events_in_any_micro_batches(jet, itemsPerBatch):
    counted, late = windowed(jet, f"tumbling-{itemsPerBatch}", WindowDefinition.tumbling(10), itemsPerBatch)
    kept = [event for event in EVENTS if event not in [(3, "a"), (14, "b"), (20, "a")]]
    assert counted == Counter((t // 10 * 10, t // 10 * 10 + 10, key, 1) for t, key in kept)
    assert late == 3


def test_sliding_and_session_windows_give_the_same_output_in_any_micro_batches(jet):
    for name, window in [("sliding", WindowDefinition.sliding(20, 10)), ("session", WindowDefinition.session(5))]:
        outputs = [windowed(jet, f"{name}-{size}", window, size) for size in SIZES]
        assert outputs[1] == outputs[0] and outputs[2] == outputs[0], name
        assert outputs[0][1] > 0, f"{name}: the sequence has late events"


TTL_EVENTS = [(0, "a"), (1, "a"), (5, "b"), (14, "b"), (15, "a"), (16, "a"), (30, "b"), (31, "a")]


def counting(state, key, item):
    state[0] += 1
    return "m", key, state[0]


def evicted(state, key, watermark):
    return "e", key, state[0]


def newCounter():
    return [0]


@pytest.mark.parametrize("itemsPerBatch", [1, 7, len(TTL_EVENTS)])
def test_map_stateful_evicts_by_ttl_where_the_watermark_passes_in_any_micro_batches(jet, itemsPerBatch):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(TTL_EVENTS, itemsPerBatch)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).mapStateful(10, newCounter, counting, evicted)
      .writeTo(Sinks.list(f"ttl-{itemsPerBatch}")))
    jet.newJob(p).join()
    # the watermark 14 evicts a (touched at 1), so a restarts at 1; 30 evicts both; the end evicts the rest
    output = list(jet.getList(f"ttl-{itemsPerBatch}"))
    assert [entry for entry in output if entry[1] == "a"] == [
        ("m", "a", 1), ("m", "a", 2), ("e", "a", 2), ("m", "a", 1), ("m", "a", 2), ("e", "a", 2), ("m", "a", 1), ("e", "a", 1)
    ]
    assert [entry for entry in output if entry[1] == "b"] == [
        ("m", "b", 1), ("m", "b", 2), ("e", "b", 2), ("m", "b", 1), ("e", "b", 1)
    ]
