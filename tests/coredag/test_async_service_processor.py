"""The mapUsingServiceAsync processor: futures per item, a bound on calls in flight, order kept
where asked, as Jet's AsyncTransformUsingService processors."""

import asyncio
import concurrent.futures
import random
import threading

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.coredag.api.processor import Inbox, Outbox, ProcessorContext
from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.api.testing import sameItemsAnyOrder, verifyProcessor
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.processors.async_service import DEFAULT_MAX_CONCURRENT_OPS, AsyncServiceP

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
    verifyProcessor(supplier(maxConcurrentOps)).disableSnapshots().input(ITEMS).expectOutput(EXPECTED).verify()
    assert Tracker.made and all(t.most <= maxConcurrentOps and t.destroyed for t in Tracker.made)
    assert max(t.most for t in Tracker.made) == maxConcurrentOps


def test_unordered_results_are_the_same_multiset():
    Tracker.made.clear()
    verifyProcessor(supplier(5, preserveOrder=False)).disableSnapshots().input(ITEMS).expectOutput(EXPECTED).outputChecker(
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
    verifyProcessor(supplier(fn=viaThreads)).disableSnapshots().input(ITEMS).expectOutput(expected).verify()


async def failing(item):
    raise ValueError(f"no {item}")


def failsOnFive(tracker, item):
    return failing(item) if item == 5 else tracker.double(item)


def returnsAValue(tracker, item):
    return item


def test_a_failing_call_names_the_stage_and_the_item():
    with pytest.raises(UserFunctionError, match=r"Stage 'mapUsingServiceAsync'.* failed on item 5: ValueError: no 5"):
        verifyProcessor(supplier(fn=failsOnFive)).disableSnapshots().input(ITEMS).expectOutput(EXPECTED).verify()


def test_a_function_returning_no_future_says_where_it_belongs():
    with pytest.raises(UserFunctionError, match="must return an awaitable or a concurrent.futures.Future .* mapUsingService"):
        verifyProcessor(supplier(fn=returnsAValue)).disableSnapshots().input(ITEMS).expectOutput(ITEMS).verify()


def test_keyed_calls_get_the_key():
    keyed = AsyncServiceP(TRACKERS, keyedCall, 3, True, "mapUsingPartitionedServiceAsync", keyFn=parity)
    verifyProcessor(keyed).disableSnapshots().input([1, 2, 3]).expectOutput([(1, 1), (0, 2), (1, 3)]).verify()


def parity(item):
    return item % 2


async def keyOf(key, item):
    return key, item


def keyedCall(tracker, key, item):
    return keyOf(key, item)



# Jet's AsyncTransformUsingServicePTest, ordered and unordered: a map here, where Jet's test
# flat-maps each item to two, so each item gives one result.

FOO = ServiceFactory(lambda context: "foo")


def jetSupplier(preserveOrder: bool, fn, maxConcurrentOps: int = DEFAULT_MAX_CONCURRENT_OPS) -> AsyncServiceP:
    return AsyncServiceP(FOO, fn, maxConcurrentOps, preserveOrder, "mapUsingServiceAsync")


def either(test, *orders):
    """Expect any one of ``orders`` (the first for the diff) from ``test``."""
    return test.expectOutput(orders[0]).outputChecker(lambda expected, actual: actual in [list(o) for o in orders])


async def suffixed(item):
    return f"{item}-1"


def completedFuture(service, item):
    return suffixed(item)


def completedInAnotherThread(service, item):
    future = concurrent.futures.Future()
    threading.Thread(target=future.set_result, args=(f"{item}-1",)).start()
    return future


@pytest.mark.parametrize("ordered", [True, False])
def test_completed_futures(ordered):
    test = verifyProcessor(jetSupplier(ordered, completedFuture)).disableSnapshots().input(["a", "b"])
    either(test, ["a-1", "b-1"], *([] if ordered else [["b-1", "a-1"]])).verify()


@pytest.mark.parametrize("ordered", [True, False])
def test_futures_completed_in_separate_thread_come_before_the_watermark(ordered):
    orders = [["a-1", "b-1", Watermark(10)]] + ([] if ordered else [["b-1", "a-1", Watermark(10)]])
    test = verifyProcessor(jetSupplier(ordered, completedInAnotherThread)).disableSnapshots().input(["a", "b", Watermark(10)])
    either(test, *orders).verify()


def unsupported(service, item):
    raise NotImplementedError


@pytest.mark.parametrize("ordered", [True, False])
def test_forward_watermarks_without_items(ordered):
    verifyProcessor(jetSupplier(ordered, unsupported)).disableSnapshots().input([Watermark(10)]).expectOutput([Watermark(10)]).verify()


def noFuture(service, item):
    return None


@pytest.mark.parametrize("ordered", [True, False])
def test_when_map_fn_returns_null_future_then_filtered_out(ordered):
    verifyProcessor(jetSupplier(ordered, noFuture)).disableSnapshots().input(["a", "b", Watermark(10)]).expectOutput(
        [Watermark(10)]
    ).verify()


def failedFuture(service, item):
    future = concurrent.futures.Future()
    future.set_exception(RuntimeError("test exception"))
    return future


@pytest.mark.parametrize("ordered", [True, False])
def test_when_future_completed_exceptionally_then_job_fails(ordered):
    with pytest.raises(UserFunctionError, match="test exception"):
        verifyProcessor(jetSupplier(ordered, failedFuture)).disableSnapshots().input(["a"]).expectOutput([]).verify()


async def never():
    await asyncio.Event().wait()


def neverDone(service, item):
    return never()


def startedProcessor(ordered: bool):
    processor = jetSupplier(ordered, neverDone, maxConcurrentOps=2)()
    processor.init(Outbox(1, 128), ProcessorContext("mapUsingServiceAsync", 0, 1))
    return processor


@pytest.mark.parametrize("ordered", [True, False])
def test_watermarks_take_no_slot(ordered):
    processor = startedProcessor(ordered)
    try:
        inbox = Inbox(["foo"])
        processor.process(0, inbox)
        assert inbox.isEmpty()
        assert all(processor.tryProcessWatermark(Watermark(t)) for t in (0, 1, 2))
        inbox = Inbox(["bar"])
        processor.process(0, inbox)
        assert inbox.isEmpty(), "the second call was refused although a watermark holds no slot"
        assert processor.outbox.drainBucket(0) == []
    finally:
        processor.close()


@pytest.mark.parametrize("ordered", [True, False])
def test_watermarks_queued_one_after_another_are_conflated(ordered):
    verifyProcessor(jetSupplier(ordered, completedFuture)).disableSnapshots().input(["a", Watermark(1), Watermark(2)]).expectOutput(
        ["a-1", Watermark(2)]
    ).verify()


def test_a_watermark_waits_for_the_calls_before_it_only_where_order_is_kept():
    slow = {"a": 0.02, "b": 0.0}

    async def delayed(item):
        await asyncio.sleep(slow.get(item, 0.0))
        return item

    def call(service, item):
        return delayed(item)

    verifyProcessor(jetSupplier(True, call)).disableSnapshots().input(["a", Watermark(5), "b", Watermark(7)]).expectOutput(
        ["a", Watermark(5), "b", Watermark(7)]
    ).verify()
    unordered = verifyProcessor(jetSupplier(False, call)).disableSnapshots().input(["a", Watermark(5), "b", Watermark(7)])
    orders = [["b", "a", Watermark(7)], ["a", "b", Watermark(7)], ["a", Watermark(5), "b", Watermark(7)]]
    either(unordered, *orders).verify()
