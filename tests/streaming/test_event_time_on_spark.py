"""Event time on Spark: a Core DAG of add-timestamps, a two-stage sliding window and a recorder
runs as a job; its windows equal a plain count per window (the events' disorder is within the
allowed lag: none is late), and the watermarks the recorder observes come in-band, strictly
increasing, up to the top one its upstream processors reached once all of them are done
(seed 003's rules)."""

import random
from collections import Counter

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, limitingLag
from sparkjet.coredag.model.sliding_window_policy import slidingWinPolicy
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.model.window_result import KeyedWindowResult
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sliding_window import accumulateByFrameP, combineToSlidingWindowP, frameResultKey
from sparkjet.coredag.processors.sources import ItemsP

pytestmark = pytest.mark.spark

LAG = 5
RANDOM = random.Random(11)
EVENTS = tuple((number // 2 + RANDOM.randrange(0, LAG), RANDOM.choice(["ant", "bee", "cat"])) for number in range(400))


def timestampOf(event):
    return event[0]


def wordOf(event):
    return event[1]


def counting() -> AggregateOperation:
    return AggregateOperation(int, lambda acc, item: acc + 1, lambda a, b: a + b, lambda a, b: a - b)


class WatermarkRecorder(AbstractProcessor):
    """Forwards items and records each watermark it observes as an item ``("observed", ts)``."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        return self.tryEmit(("observed", watermark.timestamp))


def windowedCountDag(parallelism: int, size: int, slide: int) -> DAG:
    policy = slidingWinPolicy(size, slide)
    dag = DAG()
    source = dag.newVertex("items", ItemsP(EVENTS), parallelism)
    timestamps = dag.newVertex(
        "items-add-timestamps", InsertWatermarksP(EventTimePolicy(timestampOf, limitingLag(LAG), 1, 0, 0)), parallelism
    )
    prepare = dag.newVertex(
        "sliding-window-prepare", accumulateByFrameP((wordOf,), (timestampOf,), policy, counting(), "prepare"), parallelism
    )
    combine = dag.newVertex("sliding-window", combineToSlidingWindowP(policy, counting(), "sliding-window"), parallelism)
    recorder = dag.newVertex("recorder", WatermarkRecorder, 1)
    sink = dag.newVertex("sink", ListSinkP("windows"), 1)
    dag.edge(Edge.between(source, timestamps).isolated())
    dag.edge(Edge.between(timestamps, prepare).partitioned(wordOf))
    dag.edge(Edge.between(prepare, combine).distributed().partitioned(frameResultKey))
    dag.edge(Edge.between(combine, recorder).distributed().allToOne("recorder"))
    dag.edge(Edge.between(recorder, sink))
    return dag


def plainCounts(size: int, slide: int) -> Counter:
    counts = Counter()
    for timestamp, word in EVENTS:
        for start in range(timestamp - timestamp % slide, timestamp - size, -slide):
            counts[(start, start + size, word)] += 1
    return counts


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("size, slide", [(20, 20), (30, 10)], ids=["tumbling", "sliding"])
def test_windows_on_spark_equal_a_plain_count_and_watermarks_coalesce_to_the_minimum(jet, parallelism, size, slide):
    jet.newJob(windowedCountDag(parallelism, size, slide)).join()
    output = list(jet.getList("windows"))
    observed = [item[1] for item in output if isinstance(item, tuple) and item[0] == "observed"]
    results = [item for item in output if isinstance(item, KeyedWindowResult)]
    assert Counter({(r.start, r.end, r.key): r.result for r in results}) == plainCounts(size, slide)
    assert len(results) == len(plainCounts(size, slide))
    assert len(observed) > 1 and observed == sorted(set(observed))
    assert observed[-1] == max(timestampOf(event) for event in EVENTS) - LAG
