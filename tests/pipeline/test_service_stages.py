"""Keyed service stages and mapUsingServiceAsync on Spark, against plain Python."""

import asyncio
from collections import Counter

import pytest

from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.pipeline import Pipeline, PipelineError, ServiceFactories, Sinks, Sources
from sparkjet.planner import plan

WORDS = "the quick brown fox jumps over the lazy dog then the fox naps while a dog barks twice".split()


class Seen:
    """A service naming its processor: which processor each key's items met."""

    def __init__(self, context) -> None:
        self.processor = context.globalProcessorIndex


def seenBy(context):
    return Seen(context)


SEEN = ServiceFactories.nonSharedService(seenBy)


def whereMet(service, key, word):
    return key, service.processor


def keepLong(service, key, word):
    return len(word) > 3


def letters(service, key, word):
    return [(key, letter) for letter in word]


async def upper(service, word):
    await asyncio.sleep(0.001 * (len(word) % 3))
    return None if word == "the" else word.upper()


async def keyedUpper(service, key, word):
    await asyncio.sleep(0.001)
    return key, word.upper()


def test_keyed_service_stages_plan_a_distributed_partitioned_edge():
    p = Pipeline.create()
    byFirst = p.readFrom(Sources.items(WORDS)).groupingKey(lambda w: w[0])
    byFirst.mapUsingService(SEEN, whereMet).writeTo(Sinks.logger())
    byFirst.mapUsingServiceAsync(SEEN, keyedUpper).writeTo(Sinks.logger())
    dag = plan(p).dag
    for name in ("mapUsingPartitionedService", "mapUsingPartitionedServiceAsync"):
        [edge] = dag.getInboundEdges(name)
        assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED


def test_async_stage_refuses_a_bound_below_one():
    stage = Pipeline.create().readFrom(Sources.items(WORDS))
    with pytest.raises(PipelineError, match="maxConcurrentOps must be at least 1, got 0"):
        stage.mapUsingServiceAsync(SEEN, upper, maxConcurrentOps=0)


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_keyed_service_stages_meet_one_service_per_key(jet, parallelism):
    p = Pipeline.create()
    byFirst = p.readFrom(Sources.items(WORDS)).groupingKey(lambda w: w[0])
    byFirst.mapUsingService(SEEN, whereMet).setLocalParallelism(parallelism).writeTo(Sinks.list(f"met{parallelism}"))
    byFirst.filterUsingService(SEEN, keepLong).setLocalParallelism(parallelism).writeTo(Sinks.list(f"long{parallelism}"))
    byFirst.flatMapUsingService(SEEN, letters).setLocalParallelism(parallelism).writeTo(Sinks.list(f"letters{parallelism}"))
    jet.newJob(p).join()
    met = list(jet.getList(f"met{parallelism}"))
    assert Counter(key for key, _ in met) == Counter(w[0] for w in WORDS)
    assert all(len({processor for k, processor in met if k == key}) == 1 for key, _ in met)
    assert Counter(jet.getList(f"long{parallelism}")) == Counter(w for w in WORDS if len(w) > 3)
    assert Counter(jet.getList(f"letters{parallelism}")) == Counter((w[0], c) for w in WORDS for c in w)


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_map_using_service_async_equals_plain_python(jet, parallelism):
    p = Pipeline.create()
    words = p.readFrom(Sources.items(WORDS)).setLocalParallelism(1)
    words.mapUsingServiceAsync(SEEN, upper, maxConcurrentOps=3).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"upper{parallelism}")
    )
    words.mapUsingServiceAsync(SEEN, upper, preserveOrder=False).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"unordered{parallelism}")
    )
    words.groupingKey(len).mapUsingServiceAsync(SEEN, keyedUpper).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"keyed{parallelism}")
    )
    jet.newJob(p).join()
    expected = [w.upper() for w in WORDS if w != "the"]
    if parallelism == 1:
        assert list(jet.getList(f"upper{parallelism}")) == expected
    assert Counter(jet.getList(f"upper{parallelism}")) == Counter(expected)
    assert Counter(jet.getList(f"unordered{parallelism}")) == Counter(expected)
    assert Counter(jet.getList(f"keyed{parallelism}")) == Counter((len(w), w.upper()) for w in WORDS)
