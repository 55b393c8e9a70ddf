"""Stateful and other stages of a stream, run a micro-batch at a time: states live across
micro-batches and are evicted by event time, rolling aggregates run on, a stream merges with
another and joins batch stages, and peek, rebalance, services and custom processors work on
events as on items. Each result is checked against a plain-Python computation."""

import concurrent.futures
import re
from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition
from sparkjet.coredag import JetEvent
from sparkjet.coredag.api.processor import AbstractProcessor
from sparkjet.pipeline import JoinClause, ServiceFactories
from sparkjet.pipeline.errors import PipelineError

pytestmark = pytest.mark.spark

TTL = 500
BURSTS = {0: "aab", 1000: "aca", 2000: "bab"}
"""Each burst of events is one micro-batch: the burst's start time, then a key per event."""

EVENTS = [(start + offset, key) for start, keys in BURSTS.items() for offset, key in enumerate(keys)]


def countsWithEviction(events, ttl: int) -> Counter:
    """A running count per key that ``ttl`` ends, as Jet computes it: the watermark (the top
    time so far, no lag) reaches the processor before the event that advances it, wherever the
    micro-batches fall; the end of the stream evicts every key. Evictions emit
    ``("evicted", key, count)``."""
    outputs, counts, touched = Counter(), {}, {}
    for time, key in events:
        for stale in [stale for stale, touchedAt in touched.items() if touchedAt < time - ttl]:
            outputs["evicted", stale, counts.pop(stale)] += 1
            del touched[stale]
        counts[key] = counts.get(key, 0) + 1
        touched[key] = time
        outputs[key, counts[key]] += 1
    outputs.update(("evicted", key, count) for key, count in counts.items())
    return outputs


def counting(state, key, item):
    state[0] += 1
    return key, state[0]


def evicted(state, key, watermark):
    return "evicted", key, state[0]


def numbering(state, item):
    state[0] += 1
    return state[0]


def newCounter():
    return [0]


def itemKey(item):
    return item


@pytest.mark.parametrize("parallelism", [1, 2])
def test_keyed_states_live_across_micro_batches_until_their_ttl(jet, parallelism):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
      .groupingKey(itemKey).mapStateful(TTL, newCounter, counting, evicted).setLocalParallelism(parallelism)
      .writeTo(Sinks.list(f"ttl-{parallelism}")))
    jet.newJob(p).join()
    assert Counter(jet.getList(f"ttl-{parallelism}")) == countsWithEviction(EVENTS, TTL)


def test_rolling_aggregate_of_a_stream_runs_on_across_micro_batches(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=2)).withNativeTimestamps(0)
      .groupingKey(itemKey).rollingAggregate(AggregateOperations.counting()).setLocalParallelism(2)
      .writeTo(Sinks.list("rolling")))
    jet.newJob(p).join()
    seen = Counter(key for _, key in EVENTS)
    assert sorted(jet.getList("rolling")) == sorted((key, n) for key, total in seen.items() for n in range(1, total + 1))


def test_global_state_and_a_stream_without_timestamps(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=4)).withoutTimestamps()
      .mapStateful(newCounter, numbering)
      .writeTo(Sinks.list("global")))
    jet.newJob(p).join()
    assert sorted(jet.getList("global")) == list(range(1, len(EVENTS) + 1))


def test_merged_streams_window_together_and_join_a_batch_stage(jet):
    p = Pipeline.create()
    first = p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
    second = p.readFrom(TestSources.finiteStream([(time, key.upper()) for time, key in EVENTS], 4)).withNativeTimestamps(0)
    names = p.readFrom(TestSources.items([("a", "ant"), ("b", "bee"), ("c", "cat")]))
    (first.merge(second)
      .hashJoin(names, JoinClause.onKeys(str.lower, lambda entry: entry[0]).projecting(lambda entry: entry[1]),
                lambda key, name: f"{key}:{name}")
      .groupingKey(itemKey).window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("merged")))
    jet.newJob(p).join()
    names = {"a": "ant", "b": "bee", "c": "cat"}
    expected = Counter()
    for time, key in EVENTS:
        for merged in (key, key.upper()):
            expected[time // 1000 * 1000, f"{merged}:{names[key]}"] += 1
    assert Counter({(r.start, r.key): r.result for r in jet.getList("merged")}) == expected


class Doubling(AbstractProcessor):
    """A custom processor on a timestamped stream: it gets events and emits events."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit(JetEvent(item.timestamp, item.payload * 2))


def test_peek_rebalance_services_and_custom_processors_on_events(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
      .peek(toStringFn=lambda key: f"peeked {key}")
      .rebalance(itemKey)
      .mapUsingService(ServiceFactories.sharedService(lambda context: str.upper), lambda upper, key: upper(key))
      .groupingKey(itemKey).filterUsingService(ServiceFactories.sharedService(lambda context: "B"),
                                               lambda skipped, key, item: key != skipped)
      .customTransform("doubling", Doubling)
      .groupingKey(itemKey).window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("custom")))
    jet.newJob(p).join()
    expected = Counter((time // 1000 * 1000, key.upper() * 2) for time, key in EVENTS if key != "b")
    assert Counter({(r.start, r.key): r.result for r in jet.getList("custom")}) == expected


def test_stateful_stream_stages_refuse_what_jet_refuses(jet):
    p = Pipeline.create()
    untimed = p.readFrom(TestSources.finiteStream(EVENTS)).withoutTimestamps()
    with pytest.raises(PipelineError, match="Cannot use time-to-live on a non-timestamped stream"):
        untimed.groupingKey(itemKey).mapStateful(10, newCounter, counting, None)
    timed = p.readFrom(TestSources.finiteStream(EVENTS)).withNativeTimestamps(0)
    with pytest.raises(PipelineError, match="takes a timestamped stream stage"):
        timed.merge(untimed)
    with pytest.raises(PipelineError, match="joins batch stages only"):
        timed.hashJoin(timed, JoinClause.onKeys(itemKey, itemKey), lambda a, b: a)
    with pytest.raises(PipelineError, match=r"takes \(createFn, mapFn\) or \(ttl, createFn, mapFn, onEvictFn\)"):
        timed.groupingKey(itemKey).mapStateful(newCounter)


@pytest.mark.parametrize("timedFirst", [True, False], ids=["timed-merge-untimed", "untimed-merge-timed"])
def test_merging_a_timestamped_stream_with_one_without_says_jets_rule(timedFirst):
    p = Pipeline.create()
    timed = p.readFrom(TestSources.finiteStream(EVENTS)).withNativeTimestamps(0).setName("timed")
    untimed = p.readFrom(TestSources.finiteStream(EVENTS)).withoutTimestamps().setName("untimed")
    stage, other = (timed, untimed) if timedFirst else (untimed, timed)
    with pytest.raises(PipelineError) as raised:
        stage.merge(other)
    kind = "a timestamped stream stage" if timedFirst else "a stream stage without timestamps"
    where = r" \(defined at test_stateful_streams\.py:\d+\)"
    assert re.fullmatch(
        f"Stage '{stage.name()}'{where}: The merged stages must either both have or both not have timestamp "
        f"definitions: merge\\(\\) takes {kind}, got Stage '{other.name()}'{where}; give Stage 'untimed'{where} "
        r"timestamps first, with addTimestamps\(timestampFn, allowedLag\)",
        str(raised.value),
    ), str(raised.value)


async def shouted(suffix, key):
    return key.upper() + suffix


def keyedFuture(executor, key, item):
    return executor.submit(str.upper, item)


def test_async_services_on_events_keep_their_timestamps(jet):
    p = Pipeline.create()
    stream = p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
    (stream.mapUsingServiceAsync(ServiceFactories.nonSharedService(lambda context: "!"), shouted)
      .groupingKey(itemKey).mapUsingServiceAsync(
          ServiceFactories.nonSharedService(
              lambda context: concurrent.futures.ThreadPoolExecutor(2), lambda executor: executor.shutdown()
          ),
          keyedFuture, preserveOrder=False)
      .groupingKey(itemKey).window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("async")))
    jet.newJob(p).join()
    expected = Counter((time // 1000 * 1000, key.upper() + "!") for time, key in EVENTS)
    assert Counter({(r.start, r.key): r.result for r in jet.getList("async")}) == expected


def test_the_batch_side_of_a_join_is_read_once_per_job(jet):
    p = Pipeline.create()
    names = p.readFrom(TestSources.items([("a", "ant"), ("b", "bee"), ("c", "cat")])).setName("names")
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=2)).withNativeTimestamps(0)
      .hashJoin(names, JoinClause.onKeys(itemKey, lambda entry: entry[0]).projecting(lambda entry: entry[1]),
                lambda key, name: name)
      .writeTo(Sinks.list("joined-once")))
    job = jet.newJob(p)
    job.join()
    assert sorted(jet.getList("joined-once")) == sorted({"a": "ant", "b": "bee", "c": "cat"}[key] for _, key in EVENTS)
    metrics = job.metrics()
    assert len(metrics.microBatches) == 6, "five micro-batches and the final run"
    assert metrics.vertex("names").itemsOut == 3, "read once, not once per micro-batch"
