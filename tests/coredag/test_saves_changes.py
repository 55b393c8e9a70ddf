"""The processors that save only what changed (issue 26, point 3): a base of the whole state, then
the deltas each gives of the keys it touched, evicted or closed, read back through the state store
into a new processor, or replayed onto one at the base's state, give the state the live
processor holds, for every kind that saves changes."""

import operator

import pytest

from sparkjet import AggregateOperations
from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext, restoreSnapshot
from sparkjet.coredag.api.saves_changes import SavesChanges, replayChanges
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.processors.keyed import AccumulatorHolder, MapStatefulP, RollingAccumulation
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy, tumblingWinPolicy
from sparkjet.coredag.processors.peeking import ItemLogger, PeekingSupplier
from sparkjet.coredag.processors.session_window import SessionWindowP
from sparkjet.coredag.processors.sliding_window import aggregateToSlidingWindowP
from sparkjet.coredag.processors.transform_stateful import TransformStatefulP
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.state_store import StateStore

COUNTING = AggregateOperations.counting()


def eventKey(event: JetEvent) -> str:
    return event.payload[0]


def sessions() -> SessionWindowP:
    return SessionWindowP(10, (operator.itemgetter(0),), (operator.itemgetter(1),), COUNTING, "sessions")


def countsLivingTwenty() -> TransformStatefulP:
    """A running count per key whose keys live 20 ms of event time past their last event."""
    return TransformStatefulP(
        MapStatefulP(eventKey, AccumulatorHolder(COUNTING), RollingAccumulation(COUNTING), "counts"), ttl=20
    )


def sessionEvents(keys: str, timestamp: int) -> list:
    return [(key, timestamp) for key in keys]


def timedEvents(keys: str, timestamp: int) -> list:
    return [JetEvent(timestamp, (key, 1)) for key in keys]


def started(supplier) -> tuple:
    processor, outbox = supplier(), Outbox(1, None)
    processor.init(outbox, ProcessorContext("v", 0, 1))
    return processor, outbox


def restoredFrom(supplier, root: str, chain: tuple) -> tuple:
    """Return a new processor restored from the state files ``chain``, with its outbox."""
    processor, outbox = started(supplier)
    restoreSnapshot(processor, Inbox(StateStore(root, 99).load(ProcessorState(chain))))
    assert processor.finishSnapshotRestore()
    return processor, outbox


def microBatch(processor, outbox: Outbox, items: list, watermark: int) -> list:
    """Give the processor ``items``, then the watermark, as a micro-batch does; return what it emitted."""
    inbox, emitted = Inbox(items), []
    while not inbox.isEmpty():
        processor.process(0, inbox)
        emitted += outbox.drainBucket(0)
    while not processor.tryProcessWatermark(Watermark(watermark)):
        emitted += outbox.drainBucket(0)
    return emitted + outbox.drainBucket(0)


def saved(processor, outbox: Outbox, changesOnly: bool) -> list:
    save = processor.saveChangesToSnapshot if changesOnly else processor.saveToSnapshot
    while not save():
        pass
    return outbox.drainSnapshotBucket()


def wholeState(processor, outbox: Outbox) -> dict:
    return dict(saved(processor, outbox, changesOnly=False))


@pytest.mark.parametrize(
    ("supplier", "eventsOf", "batches"),
    [
        (sessions(), sessionEvents, [("abcdefgh", 0, 5), ("ab", 12, 30), ("cz", 40, 35), ("", 0, 60)]),
        (countsLivingTwenty(), timedEvents, [("abcdefgh", 0, 5), ("abx", 12, 25), ("a", 40, 41), ("cy", 50, 70)]),
        (
            PeekingSupplier(countsLivingTwenty(), ItemLogger("counts")), timedEvents,
            [("abcdefgh", 0, 5), ("abx", 12, 25), ("a", 40, 41), ("cy", 50, 70)],
        ),
    ],
    ids=["session windows", "stateful map with a time-to-live", "peeked stateful map"],
)
def test_a_base_and_the_deltas_a_processor_gives_read_back_as_its_live_state(tmp_path, supplier, eventsOf, batches):
    live, outbox = started(supplier)
    assert isinstance(live, SavesChanges)
    root, chain, sizes = str(tmp_path), (), []
    for version, (keys, timestamp, watermark) in enumerate(batches):
        microBatch(live, outbox, eventsOf(keys, timestamp), watermark)
        store = StateStore(root, version)
        if chain:
            written = store.saveChanges("v", 0, saved(live, outbox, changesOnly=True), chain)
        else:
            written = store.save("v", 0, saved(live, outbox, changesOnly=False), None, chain, comparing=False)
        chain = written.files
        sizes.append(written.size)
        if version == 0:
            stale, staleOutbox = restoredFrom(supplier, root, chain)
    assert len(chain) == len(batches) and max(sizes[1:]) < sizes[0], "a base, then smaller deltas"
    restored, restoredOutbox = restoredFrom(supplier, root, chain)
    assert wholeState(restored, restoredOutbox) == wholeState(live, outbox)
    assert len(wholeState(live, outbox)) < 8, "sessions closed and keys evicted: removed from the chain too"
    replayChanges(stale, *StateStore(root, 99).changesIn(chain[1:]))
    assert stale.finishSnapshotRestore()
    assert wholeState(stale, staleOutbox) == wholeState(live, outbox), "kept at the base, caught up by the deltas"
    last = eventsOf("ab", 1000)
    assert microBatch(stale, staleOutbox, last, 2000) == microBatch(live, outbox, last, 2000), "and goes on alike"


def windows(policy, operation=COUNTING):
    """Windows of ``policy`` per key over ``(key, time)`` events, in one stage."""
    return aggregateToSlidingWindowP(
        (operator.itemgetter(0),), (operator.itemgetter(1),), policy, operation, "windows"
    )


def spreadEvents(keys: str, timestamp: int) -> list:
    """An event of each key at ``timestamp`` and 20 and 40 ms later: three frames each."""
    return [(key, timestamp + later) for later in (0, 20, 40) for key in keys]


@pytest.mark.parametrize(
    "supplier",
    [
        windows(tumblingWinPolicy(10)),
        windows(slidingWinPolicy(10, 5)),
        windows(slidingWinPolicy(10, 5), AggregateOperations.toList()),
    ],
    ids=["tumbling", "sliding with a deduct", "sliding without a deduct"],
)
def test_a_window_stages_base_and_deltas_read_back_as_its_live_state(tmp_path, supplier):
    """The frames each micro-batch touched are saved, and those the watermark evicted removed:
    the files hold what the live processor holds, a delta what changed. A twin that ran the
    first micro-batch alike, and a processor restored from its base (the copies a worker kept),
    catch up by replaying the deltas."""
    live, outbox = started(supplier)
    twin, twinOutbox = started(supplier)
    assert isinstance(live, SavesChanges)
    batches = [("abcdefgh", 0, 12), ("ab", 50, 17), ("cz", 60, 31), ("", 0, 52)]
    root, chain, sizes, emitted = str(tmp_path), (), [], []
    for version, (keys, timestamp, watermark) in enumerate(batches):
        emitted += microBatch(live, outbox, spreadEvents(keys, timestamp), watermark)
        store = StateStore(root, version)
        if chain:
            written = store.saveChanges("v", 0, saved(live, outbox, changesOnly=True), chain)
        else:
            written = store.save("v", 0, saved(live, outbox, changesOnly=False), None, chain, comparing=False)
            microBatch(twin, twinOutbox, spreadEvents(keys, timestamp), watermark)
            saved(twin, twinOutbox, changesOnly=False)
        chain = written.files
        sizes.append(written.size)
        if version == 0:
            stale, staleOutbox = restoredFrom(supplier, root, chain)
    assert any(not isinstance(item, Watermark) for item in emitted), "windows closed and their frames evicted"
    assert len(chain) == len(batches) and max(sizes[1:]) < sizes[0], "a base, then smaller deltas"
    assert dict(StateStore(root, 99).load(ProcessorState(chain))) == wholeState(live, outbox), "evicted frames removed"
    restored, restoredOutbox = restoredFrom(supplier, root, chain)
    assert wholeState(restored, restoredOutbox) == wholeState(live, outbox)
    kept = ((twin, twinOutbox), (stale, staleOutbox))
    for processor, box in kept:
        replayChanges(processor, *StateStore(root, 99).changesIn(chain[1:]))
        assert processor.finishSnapshotRestore()
        assert wholeState(processor, box) == wholeState(live, outbox), "kept at the base, caught up by the deltas"
    last = spreadEvents("ab", 1000)
    goesOn = [sorted(map(repr, microBatch(processor, box, last, 2000)))
              for processor, box in (*kept, (restored, restoredOutbox), (live, outbox))]
    assert all(output == goesOn[-1] for output in goesOn), "and goes on alike"
