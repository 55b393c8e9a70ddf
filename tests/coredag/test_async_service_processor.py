"""The mapUsingServiceAsync processor: futures per item, a bound on calls in flight, order kept
where asked, as Jet's AsyncTransformUsingService processors."""

import asyncio
import concurrent.futures
import random

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.api.testing import sameItemsAnyOrder, verifyProcessor
from sparkjet.coredag.processors.async_service import AsyncServiceP

ITEMS = list(range(30))


class Tracker:
    """A service that counts the calls in flight at once."""

    made: list["Tracker"] = []

    def __init__(self) -> None:
        self.inFlight = self.most = 0
        self.destroyed = False
        Tracker.made.append(self)

    async def double(self, item: int) -> int | None:
        self.inFlight += 1
        self.most = max(self.most, self.inFlight)
        await asyncio.sleep(random.Random(item).random() / 500)
        self.inFlight -= 1
        return None if item % 7 == 3 else item * 2


def newTracker(context: ProcessorContext) -> Tracker:
    return Tracker()


def destroy(tracker: Tracker) -> None:
    tracker.destroyed = True


TRACKERS = ServiceFactory(newTracker, destroy)
EXPECTED = [item * 2 for item in ITEMS if item % 7 != 3]


def doubled(tracker, item):
    return tracker.double(item)


def supplier(maxConcurrentOps=4, preserveOrder=True, fn=doubled) -> AsyncServiceP:
    return AsyncServiceP(TRACKERS, fn, maxConcurrentOps, preserveOrder, "mapUsingServiceAsync")


@pytest.mark.parametrize("maxConcurrentOps", [1, 4])
def test_results_come_in_input_order_and_the_bound_holds(maxConcurrentOps):
    Tracker.made.clear()
    verifyProcessor(supplier(maxConcurrentOps)).input(ITEMS).expectOutput(EXPECTED).verify()
    assert Tracker.made and all(t.most <= maxConcurrentOps and t.destroyed for t in Tracker.made)
    assert max(t.most for t in Tracker.made) == maxConcurrentOps


def test_unordered_results_are_the_same_multiset():
    Tracker.made.clear()
    verifyProcessor(supplier(5, preserveOrder=False)).input(ITEMS).expectOutput(EXPECTED).outputChecker(
        sameItemsAnyOrder
    ).verify()
    assert all(t.most <= 5 for t in Tracker.made)


def test_the_fast_path_gives_the_same_results_in_order():
    context = ProcessorContext("mapUsingServiceAsync", 0, 1)
    outputs = [x for batch in supplier().batchFunction(context)([ITEMS[:10], ITEMS[10:]]) for x in batch]
    assert outputs == EXPECTED


POOL = concurrent.futures.ThreadPoolExecutor(2)


def viaThreads(tracker, item):
    return POOL.submit(lambda: item + 1) if item % 2 else None


def test_concurrent_futures_work_and_none_futures_drop_the_item():
    expected = [item + 1 for item in ITEMS if item % 2]
    verifyProcessor(supplier(fn=viaThreads)).input(ITEMS).expectOutput(expected).verify()


async def failing(item):
    raise ValueError(f"no {item}")


def failsOnFive(tracker, item):
    return failing(item) if item == 5 else tracker.double(item)


def returnsAValue(tracker, item):
    return item


def test_a_failing_call_names_the_stage_and_the_item():
    with pytest.raises(UserFunctionError, match=r"Stage 'mapUsingServiceAsync'.* failed on item 5: ValueError: no 5"):
        verifyProcessor(supplier(fn=failsOnFive)).input(ITEMS).expectOutput(EXPECTED).verify()


def test_a_function_returning_no_future_says_where_it_belongs():
    with pytest.raises(UserFunctionError, match="must return an awaitable or a concurrent.futures.Future .* mapUsingService"):
        verifyProcessor(supplier(fn=returnsAValue)).input(ITEMS).expectOutput(ITEMS).verify()


def test_keyed_calls_get_the_key():
    keyed = AsyncServiceP(TRACKERS, keyedCall, 3, True, "mapUsingPartitionedServiceAsync", keyFn=parity)
    verifyProcessor(keyed).input([1, 2, 3]).expectOutput([(1, 1), (0, 2), (1, 3)]).verify()


def parity(item):
    return item % 2


async def keyOf(key, item):
    return key, item


def keyedCall(tracker, key, item):
    return keyOf(key, item)

