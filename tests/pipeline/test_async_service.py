"""mapUsingServiceAsync end to end on Spark, against plain Python: Jet's BatchStageTest cases
(an executor completing each item's future 10 ms later), the bound on calls in flight and the
order under random delays, and a failing call failing the job naming the stage."""

import asyncio
import concurrent.futures
import random
import time
from collections import Counter

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import Pipeline, ServiceFactories, Sinks, Sources
from tests.conftest import here

pytestmark = pytest.mark.spark

ITEM_COUNT = 200
SUFFIX = "-context"


def formatted(item: int) -> str:
    return f"{item:04d}{SUFFIX}"


def newExecutor(context) -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(8)


def shutdown(executor: concurrent.futures.ThreadPoolExecutor) -> None:
    executor.shutdown()


EXECUTORS = ServiceFactories.sharedService(newExecutor, shutdown)


def later(item: int) -> str:
    time.sleep(0.01)
    return formatted(item)


def scheduled(executor, item):
    return executor.submit(later, item)


def scheduledByKey(executor, key, item):
    return executor.submit(later, item)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_jets_map_using_service_async_plain_and_keyed(jet, parallelism):
    p = Pipeline.create()
    items = p.readFrom(Sources.items(range(ITEM_COUNT))).setLocalParallelism(1)
    items.mapUsingServiceAsync(EXECUTORS, scheduled).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"async{parallelism}")
    )
    items.groupingKey(lambda i: i).mapUsingServiceAsync(EXECUTORS, scheduledByKey).setLocalParallelism(
        parallelism
    ).writeTo(Sinks.list(f"keyedAsync{parallelism}"))
    jet.newJob(p).join()
    expected = [formatted(i) for i in range(ITEM_COUNT)]
    assert sorted(jet.getList(f"async{parallelism}")) == expected
    assert sorted(jet.getList(f"keyedAsync{parallelism}")) == expected
    if parallelism == 1:
        assert list(jet.getList(f"async{parallelism}")) == expected


class InFlight:
    """A service counting its calls in flight."""

    def __init__(self) -> None:
        self.count = 0

    async def call(self, item: int) -> tuple[int, int] | None:
        self.count += 1
        seen = self.count
        await asyncio.sleep(random.Random(item).random() / 200)
        self.count -= 1
        return None if item % 5 == 0 else (item, seen)


def newInFlight(context) -> InFlight:
    return InFlight()


IN_FLIGHT = ServiceFactories.nonSharedService(newInFlight)


def counted(service: InFlight, item: int):
    return service.call(item)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_the_bound_holds_and_order_is_kept_under_random_delays(jet, parallelism):
    p = Pipeline.create()
    items = p.readFrom(Sources.items(range(ITEM_COUNT))).setLocalParallelism(1)
    items.mapUsingServiceAsync(IN_FLIGHT, counted, maxConcurrentOps=3).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"ordered{parallelism}")
    )
    items.mapUsingServiceAsync(IN_FLIGHT, counted, maxConcurrentOps=5, preserveOrder=False).setLocalParallelism(
        parallelism
    ).writeTo(Sinks.list(f"unordered{parallelism}"))
    jet.newJob(p).join()
    ordered, unordered = jet.getList(f"ordered{parallelism}"), jet.getList(f"unordered{parallelism}")
    expected = Counter(i for i in range(ITEM_COUNT) if i % 5)
    assert Counter(i for i, _ in ordered) == expected == Counter(i for i, _ in unordered)
    assert max(seen for _, seen in ordered) <= 3 and max(seen for _, seen in unordered) <= 5
    if parallelism == 1:
        assert [i for i, _ in ordered] == sorted(expected)
        assert max(seen for _, seen in ordered) == 3 and max(seen for _, seen in unordered) == 5


async def failing(item: int) -> int:
    if item == 7:
        raise ValueError("seven")
    return item


def failsOnSeven(service, item):
    return failing(item)


def test_a_failing_call_fails_the_job_naming_the_stage_and_the_item(jet):
    p = Pipeline.create()
    mapped = p.readFrom(Sources.items(range(20))).mapUsingServiceAsync(IN_FLIGHT, failsOnSeven)
    line = here() - 1
    mapped.writeTo(Sinks.list("failed"))
    with pytest.raises(UserFunctionError) as failure:
        jet.newJob(p).join()
    assert str(failure.value) == (
        f"Stage 'mapUsingServiceAsync' (defined at test_async_service.py:{line}) failed on item 7: ValueError: seven"
    )
