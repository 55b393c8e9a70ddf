"""A source partition does not turn idle for the time between micro-batches when the next one
brings it events: they waited for it, as Jet's source finds events when it polls, so its
``add-timestamps`` takes them before it looks at the clock. Idle in a stream job's run, then
woken, a partition's events could be late at a vertex that reads the idle message from one
upstream processor after another's newer watermark (the kill test lost window 150's events
where a restart under load took over the 60 s idle timeout)."""

from sparkjet.coredag.model.broadcast_key import broadcastKey
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, limitingLag, wallClockMillis
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, Watermark
from sparkjet.coredag.processors.insert_watermarks import IDLE_AT, InsertWatermarksP
from sparkjet.coredag.runtime.tasklet import Fresh, Live, Restored, Start, TaskletSpec, returning, runPartition
from tests.streaming.test_event_time_mapper import FakeClock, ns
from tests.streaming.test_insert_watermarks import Item, timestampOf

IDLE_TIMEOUT = 100


def stamping(clock: FakeClock) -> TaskletSpec:
    supplier = InsertWatermarksP(EventTimePolicy(timestampOf, limitingLag(0), 1, 0, IDLE_TIMEOUT), clock)
    return TaskletSpec("add-timestamps", supplier, 1, (0,), 1, 1024, 1024)


def microBatch(spec: TaskletSpec, events: list, start: Start) -> list:
    return list(runPartition(spec, 0, iter(events), start))


def keptBy(spec: TaskletSpec, events: list, start: Start) -> tuple[list, Live]:
    """Run a micro-batch; return its output and the processor it kept, as the next one's start."""
    saved: list = []
    output = list(returning(runPartition(spec, 0, iter(events), start), saved))
    processor, outbox = saved[0].kept
    return output, Live(processor=processor, outbox=outbox, saves=True, keeps=True)


def test_a_kept_processor_takes_the_events_of_a_micro_batch_that_starts_after_its_idle_timeout():
    clock = FakeClock()
    spec = stamping(clock)
    output, second = keptBy(spec, [Item(10), Item(20)], Fresh(saves=True, keeps=True))
    assert output == [Watermark(10), Item(10), Watermark(20), Item(20)]
    clock.now = ns(10 * IDLE_TIMEOUT)
    output, third = keptBy(spec, [Item(30)], second)
    assert output == [Watermark(30), Item(30)]
    clock.now += ns(10 * IDLE_TIMEOUT)
    assert microBatch(spec, [], third) == [IDLE_MESSAGE], (
        "a micro-batch without events for it after the idle timeout: idle"
    )


def test_a_restored_processor_takes_the_events_of_a_run_started_after_its_idle_timeout():
    """The state a killed run saved says the partition turns idle a second ago: the run started
    again takes its first micro-batch's events before looking at the clock."""
    saved = [(broadcastKey(0), 20), (broadcastKey(IDLE_AT), wallClockMillis() - 1000)]
    spec = stamping(FakeClock(ns(1000)))
    assert microBatch(spec, [Item(30)], Restored(entries=lambda: saved, saves=True)) == [Watermark(30), Item(30)]
    assert microBatch(spec, [], Restored(entries=lambda: saved, saves=True)) == [IDLE_MESSAGE]
