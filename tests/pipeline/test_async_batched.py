"""mapUsingServiceAsyncBatched end to end on Spark, against plain Python: Jet's BatchStageTest
cases (an executor completing each list's future 10 ms later; None results filtering; keyed, the
keys beside the items) in one job, and on a stream each result keeping its item's timestamp."""

import concurrent.futures
import time
from collections import Counter

import pytest

from sparkjet import AggregateOperations, TestSources, WindowDefinition
from sparkjet.pipeline import Pipeline, ServiceFactories, Sinks, Sources
from sparkjet.pipeline.errors import PipelineError

pytestmark = pytest.mark.spark

ITEM_COUNT = 200
SUFFIX = "-context"
BATCH_SIZE = 4


def formatted(item: int) -> str:
    return f"{item:04d}{SUFFIX}"


EXECUTORS = ServiceFactories.sharedService(
    lambda context: concurrent.futures.ThreadPoolExecutor(8), lambda executor: executor.shutdown()
)


def later(items: list, resultFn) -> list:
    time.sleep(0.01)
    return [resultFn(item) for item in items]


def checkedSize(items: list, maxSize: int) -> None:
    if not 0 < len(items) <= maxSize:
        raise AssertionError(f"list size {len(items)}")


def mapped(executor, items):
    checkedSize(items, BATCH_SIZE)
    return executor.submit(later, items, formatted)


def filtered(executor, items):
    checkedSize(items, BATCH_SIZE)
    return executor.submit(later, items, lambda i: None if i % 13 == 0 else formatted(i))


def keyedFiltered(executor, keys, items):
    checkedSize(items, 32)
    if len(keys) != len(items):
        raise AssertionError("lists size equality")
    results = [None if item % 13 == 0 or key == 0 else formatted(item) for key, item in zip(keys, items)]
    return executor.submit(later, results, lambda result: result)


def keyedMapped(executor, keys, items):
    checkedSize(items, BATCH_SIZE)
    if len(keys) != len(items):
        raise AssertionError("lists size equality")
    return executor.submit(later, items, formatted)


def test_jets_map_using_service_async_batched_plain_filtering_and_keyed(jet):
    p = Pipeline.create()
    items = p.readFrom(Sources.items(range(ITEM_COUNT))).setLocalParallelism(1)
    items.mapUsingServiceAsyncBatched(EXECUTORS, BATCH_SIZE, mapped).writeTo(Sinks.list("batched"))
    items.mapUsingServiceAsyncBatched(EXECUTORS, BATCH_SIZE, filtered).writeTo(Sinks.list("batchedFiltering"))
    items.groupingKey(lambda i: i).mapUsingServiceAsyncBatched(EXECUTORS, BATCH_SIZE, keyedMapped).writeTo(
        Sinks.list("keyedBatched")
    )
    items.groupingKey(lambda i: i % 23).mapUsingServiceAsyncBatched(EXECUTORS, 32, keyedFiltered).writeTo(
        Sinks.list("keyedBatchedFiltering")
    )
    jet.newJob(p).join()
    assert sorted(jet.getList("batched")) == [formatted(i) for i in range(ITEM_COUNT)]
    assert sorted(jet.getList("batchedFiltering")) == [formatted(i) for i in range(ITEM_COUNT) if i % 13]
    assert sorted(jet.getList("keyedBatched")) == [formatted(i) for i in range(ITEM_COUNT)]
    assert sorted(jet.getList("keyedBatchedFiltering")) == [
        formatted(i) for i in range(ITEM_COUNT) if i % 13 and i % 23
    ]


def test_order_is_kept_at_parallelism_one(jet):
    p = Pipeline.create()
    (p.readFrom(Sources.items(range(ITEM_COUNT))).setLocalParallelism(1)
      .mapUsingServiceAsyncBatched(EXECUTORS, BATCH_SIZE, mapped).setLocalParallelism(1)
      .writeTo(Sinks.list("batchedInOrder")))
    jet.newJob(p).join()
    assert list(jet.getList("batchedInOrder")) == [formatted(i) for i in range(ITEM_COUNT)]


EVENTS = [(start + offset, key) for start, keys in {0: "aab", 1000: "aca", 2000: "bab"}.items() for offset, key in enumerate(keys)]


def shouted(executor, keys):
    return executor.submit(later, keys, str.upper)


def keyedShouted(executor, keys, items):
    return executor.submit(later, items, lambda item: item + "!")


def test_on_a_stream_each_result_keeps_its_items_timestamp(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
      .mapUsingServiceAsyncBatched(EXECUTORS, 2, shouted)
      .groupingKey(lambda key: key).mapUsingServiceAsyncBatched(EXECUTORS, 2, keyedShouted)
      .groupingKey(lambda key: key).window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("batchedStream")))
    jet.newJob(p).join()
    expected = Counter((time // 1000 * 1000, key.upper() + "!") for time, key in EVENTS)
    assert Counter({(r.start, r.key): r.result for r in jet.getList("batchedStream")}) == expected


@pytest.mark.parametrize("size", [0, -1, 1.5])
def test_a_max_batch_size_below_one_is_refused_naming_the_stage(size):
    stage = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError, match=f"mapUsingServiceAsyncBatched.*maxBatchSize must be at least 1, got {size}"):
        stage.mapUsingServiceAsyncBatched(EXECUTORS, size, mapped)
