"""A snapshot restored at another parallelism (issue 16, point 2): as in Jet, ``BroadcastKey``
entries go to every processor and any other entry to the processor the vertex's partitioner
sends that key's items to, so a job restarted with more or fewer processors goes on with the
same results."""

from collections import Counter

from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext, restoreSnapshot
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.broadcast_key import broadcastKey
from sparkjet.coredag.model.partitioner import DefaultPartitioner
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy
from sparkjet.coredag.model.watermark import LONG_MIN, Watermark
from sparkjet.coredag.processors.sliding_window import SnapshotKey, aggregateToSlidingWindowP
from sparkjet.coredag.runtime.processor_state import ProcessorState, partitionKeyOf, redistributed
from sparkjet.coredag.runtime.state_store import StateStore

COUNTING = AggregateOperation(int, lambda acc, item: acc + 1, lambda a, b: a + b, lambda a, b: a - b)
PARTITIONER = DefaultPartitioner()
PARTITION = PARTITIONER.getPartition
WORDS = [f"w{number}" for number in range(12)]


def test_a_partition_aware_key_is_restored_where_its_partition_key_goes():
    assert partitionKeyOf(SnapshotKey(100, "apple")) == "apple"
    assert partitionKeyOf(("a", 1)) == ("a", 1)


def savedBy(store: StateStore, index: int, entries: tuple, emitted: tuple, observed: int) -> ProcessorState:
    """Return the state processor ``index`` of vertex 'w' saved as ``entries`` in ``store``."""
    version = store.save("w", index, list(entries), None, ())
    return ProcessorState(version.files, version.size, emitted, observed, version.savedBy)


def test_entries_go_to_the_processor_of_their_key_and_broadcast_ones_to_all(tmp_path):
    store = StateStore(str(tmp_path), 0)
    saved = {
        0: savedBy(store, 0, ((SnapshotKey(10, "a"), 1), (broadcastKey("next"), 20)), (30,), 25),
        1: savedBy(store, 1, ((SnapshotKey(10, "b"), 2), (SnapshotKey(20, "c"), 3), (broadcastKey("next"), 10)), (40,), 15),
    }
    spread = redistributed(saved, 3, PARTITIONER)
    assert set(spread) == {0, 1, 2}
    for index, share in spread.items():
        entries = store.load(share)
        assert [value for key, value in entries if key == broadcastKey("next")] == [20, 10]
        assert {key.key for key, _ in entries if isinstance(key, SnapshotKey)} == {
            word for word in "abc" if PARTITION(word, 3) == index
        }
        assert share.start.observedWatermark == 15 and share.start.emittedWatermarks == (30,)


def test_processors_that_reached_no_watermark_keep_the_restored_ones_from_going_back_no_further():
    saved = {0: ProcessorState((), 0, (), LONG_MIN), 1: ProcessorState((), 0, (7,), 5)}
    spread = redistributed(saved, 1, PARTITIONER)
    assert spread[0].start.observedWatermark == LONG_MIN and spread[0].start.emittedWatermarks == (LONG_MIN,)


def first(item):
    return item[0]


def second(item):
    return item[1]


def windowProcessor(index: int, count: int, entries=()):
    processor = aggregateToSlidingWindowP((second,), (first,), slidingWinPolicy(10, 10), COUNTING, "w")()
    processor.init(Outbox(1, None), ProcessorContext("w", index, count))
    if entries:
        restoreSnapshot(processor, Inbox(list(entries)))
        assert processor.finishSnapshotRestore()
    return processor


def fed(processor, events, watermark) -> list:
    for event in events:
        assert processor.tryProcess(0, event)
    assert processor.tryProcessWatermark(Watermark(watermark))
    return [item for item in processor.outbox.drainBucket(0) if not isinstance(item, Watermark)]


def saved(processor) -> tuple:
    assert processor.saveToSnapshot()
    return tuple(processor.outbox.drainSnapshotBucket())


def onProcessor(index: int, count: int, events: list) -> list:
    return [event for event in events if PARTITION(event[1], count) == index]


def test_a_window_stage_restarted_on_three_processors_emits_what_two_would_have(tmp_path):
    store = StateStore(str(tmp_path), 0)
    events = [(time // 2, WORDS[time % len(WORDS)]) for time in range(80)]
    before, after = events[:50], events[50:]
    firstRun = [windowProcessor(index, 2) for index in range(2)]
    results = [result for index, p in enumerate(firstRun) for result in fed(p, onProcessor(index, 2, before), 10)]
    states = {index: savedBy(store, index, saved(p), (), 10) for index, p in enumerate(firstRun)}
    for index, share in redistributed(states, 3, PARTITIONER).items():
        results += fed(windowProcessor(index, 3, store.load(share)), onProcessor(index, 3, after), 100)
    expected = Counter((time - time % 10 + 10, word) for time, word in events)
    assert Counter({(result.end, result.key): result.result for result in results}) == expected
    assert len(results) == len(expected), "each window of each key once"
