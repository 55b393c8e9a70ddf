"""Jet's TransformStatefulPTest, ported (each case as a map and as a flat-map), and the state a
stateful stream processor carries from one micro-batch to the next."""

import pytest

from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext, restoreSnapshot
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.errors import UserFunctionError
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.watermark import LONG_MAX, Watermark
from sparkjet.coredag.processors.keyed import MapStatefulP, StatefulKind
from sparkjet.coredag.processors.transform_stateful import TransformStatefulP

EVICT_SIGNAL = 99


def eventKey(event):
    return event.payload[0]


def entryKey(entry):
    return entry[0]


def newCounter():
    return [0]


def summing(state, key, item):
    """Jet's test function: a running sum per key, as an entry (an event with event time)."""
    value = item.payload[1] if isinstance(item, JetEvent) else item[1]
    state[0] += value
    return JetEvent(item.timestamp, (key, state[0])) if isinstance(item, JetEvent) else (key, state[0])


def expanded(output):
    """What the flat-map form emits for one map output: it and its negated copy, as Jet's expandFn."""
    if isinstance(output, JetEvent):
        return [output, JetEvent(output.timestamp, (output.payload[0], -output.payload[1]))]
    return [output, (output[0], -output[1])]


def supplier(flatMap, ttl, keyFn, mapFn, onEvictFn=None) -> TransformStatefulP:
    """Jet's createSupplier: the map form, or the flat-map form expanding each output."""
    if not flatMap:
        onEvict = None if onEvictFn is None else (lambda s, k, wm: [r] if (r := onEvictFn(s, k, wm)) is not None else [])
        return TransformStatefulP(MapStatefulP(keyFn, newCounter, mapFn, "map-stateful"), ttl, onEvict)

    def flatMapFn(state, key, item):
        result = mapFn(state, key, item)
        return expanded(result) if result is not None else []

    onEvict = None if onEvictFn is None else (lambda s, k, wm: expanded(onEvictFn(s, k, wm)))
    return TransformStatefulP(MapStatefulP(keyFn, newCounter, flatMapFn, "map-stateful", StatefulKind.FLAT_MAP), ttl, onEvict)


def expandedList(flatMap, items):
    if not flatMap:
        return items
    return [out for item in items for out in ([item] if isinstance(item, Watermark) else expanded(item))]


def wm(timestamp):
    return Watermark(timestamp)


def ev(timestamp, key, value):
    return JetEvent(timestamp, (key, value))


flatMaps = pytest.mark.parametrize("flatMap", [False, True], ids=["map", "flat-map"])


@flatMaps
def test_no_ttl(flatMap):
    inputs = [("a", 1), ("b", 2), ("a", 3), ("b", 4)]
    verifyProcessor(supplier(flatMap, 0, entryKey, summing)).input(inputs).expectOutput(
        expandedList(flatMap, [("a", 1), ("b", 2), ("a", 4), ("b", 6)])
    ).verify()


@flatMaps
def test_map_to_none_emits_nothing(flatMap):
    verifyProcessor(supplier(flatMap, 0, entryKey, lambda s, k, e: None)).input([("a", 1)]).expectOutput([]).verify()


@flatMaps
def test_ttl_evicts_the_keys_the_watermark_passes(flatMap):
    verifyProcessor(supplier(flatMap, 2, eventKey, summing)).input(
        [ev(0, "a", 1), ev(1, "b", 2), wm(3), ev(3, "a", 3), wm(4), ev(4, "b", 4)]
    ).expectOutput(
        expandedList(flatMap, [ev(0, "a", 1), ev(1, "b", 2), wm(3), ev(3, "a", 3), wm(4), ev(4, "b", 4)])
    ).verify()


@flatMaps
def test_a_state_survives_a_watermark_within_its_ttl(flatMap):
    verifyProcessor(supplier(flatMap, 2, eventKey, summing)).input([ev(1, "b", 1), wm(2), ev(2, "b", 2)]).expectOutput(
        expandedList(flatMap, [ev(1, "b", 1), wm(2), ev(2, "b", 3)])
    ).verify()


@flatMaps
def test_only_expired_keys_are_evicted(flatMap):
    verifyProcessor(supplier(flatMap, 2, eventKey, summing)).input(
        [ev(0, "a", 1), ev(1, "b", 2), wm(3), ev(3, "a", 3), ev(3, "b", 4)]
    ).expectOutput(expandedList(flatMap, [ev(0, "a", 1), ev(1, "b", 2), wm(3), ev(3, "a", 3), ev(3, "b", 6)])).verify()


@flatMaps
def test_eviction_emits_what_on_evict_gives_then_everything_is_evicted_at_the_end(flatMap):
    def onEvict(state, key, watermark):
        return JetEvent(watermark, (key, EVICT_SIGNAL))

    verifyProcessor(supplier(flatMap, 2, eventKey, summing, onEvict)).input(
        [ev(0, "a", 1), ev(1, "b", 2), wm(3), ev(3, "a", 3), wm(4), ev(4, "b", 4)]
    ).expectOutput(
        expandedList(
            flatMap,
            [
                ev(0, "a", 1), ev(1, "b", 2), ev(3, "a", EVICT_SIGNAL), wm(3), ev(3, "a", 3),
                ev(4, "b", EVICT_SIGNAL), wm(4), ev(4, "b", 4),
                ev(LONG_MAX, "a", EVICT_SIGNAL), ev(LONG_MAX, "b", EVICT_SIGNAL),
            ],
        )
    ).verify()


@flatMaps
def test_many_keys_evicted_in_the_order_they_were_last_touched(flatMap):
    keys = [f"k{i}" for i in range(100)]
    inputs = [ev(0, key, 1) for key in keys] + [wm(3)] + [ev(3, key, 3) for key in reversed(keys)]
    verifyProcessor(supplier(flatMap, 2, eventKey, summing)).input(inputs).expectOutput(
        expandedList(flatMap, inputs)
    ).verify()


def test_late_event_is_dropped_and_counted():
    def running(state, key, event):
        state[0] += event.payload
        return JetEvent(event.timestamp, state[0])

    late = TransformStatefulP(MapStatefulP(lambda e: 0, newCounter, running, "map-stateful"), 1000)
    verifyProcessor(late).input([JetEvent(0, 1), JetEvent(1, 2), wm(3), JetEvent(0, 1)]).expectOutput(
        [JetEvent(0, 1), JetEvent(1, 3), wm(3)]
    ).verify()
    processor = late()
    processor.init(Outbox(1, None), ProcessorContext("map-stateful", 0, 1))
    processor.tryProcessWatermark(wm(3))
    processor.tryProcess0(JetEvent(0, 1))
    assert processor.lateEventsDropped == 1


@flatMaps
def test_negative_watermark_times(flatMap):
    verifyProcessor(supplier(flatMap, 2, eventKey, summing)).input(
        [ev(-10, "a", 1), ev(-9, "b", 2), wm(-7), ev(-7, "a", 3), ev(-7, "b", 3), wm(-4), ev(-4, "b", 4)]
    ).expectOutput(
        expandedList(
            flatMap, [ev(-10, "a", 1), ev(-9, "b", 2), wm(-7), ev(-7, "a", 3), ev(-7, "b", 5), wm(-4), ev(-4, "b", 4)]
        )
    ).verify()


def processorOf(stateful: TransformStatefulP):
    processor = stateful()
    outbox = Outbox(1, None)
    processor.init(outbox, ProcessorContext("map-stateful", 0, 1))
    return processor, outbox


def test_states_and_watermark_carry_over_a_snapshot_and_restore():
    stateful = supplier(False, 2, eventKey, summing)
    first, outbox = processorOf(stateful)
    for item in (ev(0, "a", 1), ev(5, "b", 2)):
        first.tryProcess0(item)
    first.tryProcessWatermark(wm(1))
    assert first.saveToSnapshot()
    entries = outbox.drainSnapshotBucket()

    second, outbox = processorOf(stateful)
    restoreSnapshot(second, Inbox(entries))
    assert second.finishSnapshotRestore()
    second.tryProcess0(ev(0, "a", 1))  # late: the restored watermark is 1
    second.tryProcess0(ev(6, "b", 3))
    second.tryProcess0(ev(6, "a", 4))  # "a" was not evicted at watermark 1: its sum goes on
    assert outbox.drainBucket(0) == [ev(6, "b", 5), ev(6, "a", 5)]
    assert second.lateEventsDropped == 1


def test_a_restored_processor_takes_the_lowest_watermark_saved():
    stateful = supplier(False, 2, eventKey, summing)
    entries = []
    for watermark in (7, 3):
        processor, outbox = processorOf(stateful)
        processor.tryProcessWatermark(wm(watermark))
        processor.saveToSnapshot()
        entries += outbox.drainSnapshotBucket()
    restored, _ = processorOf(stateful)
    restoreSnapshot(restored, Inbox(entries))
    restored.finishSnapshotRestore()
    assert restored.currentWatermark == 3


def test_a_raising_eviction_names_the_stage_and_the_key():
    def failing(state, key, watermark):
        raise ValueError("no")

    with pytest.raises(UserFunctionError, match="map-stateful.*'a'"):
        verifyProcessor(supplier(False, 2, eventKey, summing, failing)).input([ev(0, "a", 1), wm(5)]).expectOutput(
            []
        ).verify()
