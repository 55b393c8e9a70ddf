"""The mapUsingServiceAsyncBatched processor: one call per list of up to maxBatchSize items, its
future giving one result per item, order kept, watermarks behind the calls before them: Jet's
AsyncTransformUsingServiceBatchedPTest (with a list of results per call, as the pipeline stage
gives it, where Jet's core processor takes a traverser)."""

import concurrent.futures
import threading

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.api.service_factory import ServiceFactories
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.processors.async_service import MAX_CONCURRENT_ASYNC_BATCHES, AsyncServiceP

FOO = ServiceFactories.nonSharedService(lambda context: "foo")


def batched(fn, maxBatchSize=128, keyFn=None) -> AsyncServiceP:
    return AsyncServiceP(
        FOO, fn, MAX_CONCURRENT_ASYNC_BATCHES, True, "mapUsingServiceAsyncBatched", keyFn, maxBatchSize
    )


def completed(results: list) -> concurrent.futures.Future:
    future = concurrent.futures.Future()
    future.set_result(results)
    return future


def suffixed(service, items):
    return completed([f"{item}-1" for item in items])


def suffixedInAnotherThread(service, items):
    future = concurrent.futures.Future()
    threading.Thread(target=future.set_result, args=([f"{item}-1" for item in items],)).start()
    return future


def test_completed_futures():
    verifyProcessor(batched(suffixed)).disableSnapshots().input(["a", "b"]).expectOutput(["a-1", "b-1"]).verify()


def test_futures_completed_in_separate_thread_come_before_the_watermark():
    verifyProcessor(batched(suffixedInAnotherThread)).disableSnapshots().input(["a", "b", Watermark(10)]).expectOutput(
        ["a-1", "b-1", Watermark(10)]
    ).verify()


def unsupported(service, items):
    raise NotImplementedError


def test_forward_watermarks_without_items():
    verifyProcessor(batched(unsupported)).disableSnapshots().input([Watermark(10)]).expectOutput([Watermark(10)]).verify()


def test_when_map_fn_returns_null_future_then_the_batch_is_filtered_out():
    verifyProcessor(batched(lambda service, items: None)).disableSnapshots().input(["a", "b"]).expectOutput([]).verify()


def test_none_results_drop_their_items():
    def everyOther(service, items):
        return completed([item if item % 2 else None for item in items])

    verifyProcessor(batched(everyOther)).disableSnapshots().input(list(range(10))).expectOutput([1, 3, 5, 7, 9]).verify()


def test_when_future_completed_exceptionally_then_job_fails():
    def failed(service, items):
        future = concurrent.futures.Future()
        future.set_exception(RuntimeError("test exception"))
        return future

    with pytest.raises(UserFunctionError, match="test exception"):
        verifyProcessor(batched(failed)).disableSnapshots().input(["a"]).expectOutput([]).verify()


def test_a_result_list_of_another_size_is_refused_naming_the_stage():
    with pytest.raises(UserFunctionError, match=r"Stage 'mapUsingServiceAsyncBatched' failed on item \[.a.\]: ValueError: mapAsyncFn.s future must give a list of 1 results, one per item, got 2 results"):
        verifyProcessor(batched(lambda service, items: completed([*items, "c"]))).disableSnapshots().input(
            ["a", "b"]
        ).expectOutput(["a", "b"]).verify()


def test_each_call_gets_at_most_max_batch_size_items_in_order():
    sizes = []

    def recorded(service, items):
        sizes.append(len(items))
        return completed(items)

    verifyProcessor(batched(recorded, maxBatchSize=4)).disableSnapshots().input(list(range(30))).expectOutput(
        list(range(30))
    ).verify()
    assert sizes and max(sizes) == 4 and min(sizes) >= 1


def test_the_fast_path_cuts_each_input_batch_into_calls_of_max_batch_size():
    calls = []

    def recorded(service, items):
        calls.append(list(items))
        return completed([item * 2 for item in items])

    context = ProcessorContext("mapUsingServiceAsyncBatched", 0, 1)
    outputs = [x for batch in batched(recorded, 4).batchFunction(context)([list(range(10)), [10, 11]]) for x in batch]
    assert outputs == [item * 2 for item in range(12)]
    assert calls == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [10, 11]]


def test_keyed_calls_get_the_keys_beside_the_items():
    def keyed(service, keys, items):
        return completed(list(zip(keys, items)))

    verifyProcessor(batched(keyed, keyFn=lambda item: item % 2)).disableSnapshots().input([1, 2, 3]).expectOutput(
        [(1, 1), (0, 2), (1, 3)]
    ).verify()
