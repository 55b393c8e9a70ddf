"""The runtime's watermark transport: markers in their places among a processor's output, to
every target of a shuffle, coalesced per input queue by seed 003's rules as the input is consumed."""

import pickle

import pytest

from sparkjet.coredag import ProcessorContractError
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MAX, LONG_MIN, Watermark
from sparkjet.coredag.runtime.shuffling import routeItems
from sparkjet.coredag.runtime.watermarks import (
    DONE,
    WAKE,
    EdgeQueues,
    InboundWatermarks,
    OutputWatermarks,
    WatermarkMarker,
    queuesOf,
)
from tests.coredag.test_routing_pure import Accumulated, keyOf, routeOf

M = WatermarkMarker


def consumed(inbound, batches):
    return list(inbound.items(batches))


def test_a_watermark_leaves_as_a_marker_in_its_place():
    output = OutputWatermarks(2, [LONG_MIN])
    assert list(output.items([[1, Watermark(5), 2], [Watermark(6)]])) == [[1, M(2, 5), 2], [M(2, 6)]]
    assert output.emitted() == (6,) and output.markerCount == 2


def test_each_bucket_keeps_its_last_watermark_and_a_later_micro_batch_sends_none_it_sent_before():
    output = OutputWatermarks(0, [7, 4])
    batches = [[(0, Watermark(7)), (0, "x"), (1, Watermark(9))], [(1, "y")]]
    assert list(output.items(batches)) == [[(0, "x"), (1, M(0, 9))], [(1, "y")]]
    assert output.emitted() == (7, 9)


def test_an_item_after_the_idle_message_wakes_its_queue():
    output = OutputWatermarks(1, [LONG_MIN])
    assert list(output.items([[Watermark(3), IDLE_MESSAGE, "a", "b"]])) == [[M(1, 3), M(1, LONG_MAX), M(1, WAKE), "a", "b"]]
    assert output.emitted() == (3,)


def test_a_completed_processor_sends_done_to_every_bucket_and_a_sink_sends_nothing():
    assert list(OutputWatermarks(3, [LONG_MIN, LONG_MIN]).done()) == [[(0, M(3, DONE)), (1, M(3, DONE))]]
    sink = OutputWatermarks(0, [LONG_MIN], sends=False)
    assert list(sink.items([["a", Watermark(1), IDLE_MESSAGE, "b"]])) == [["a", "b"]] and sink.markerCount == 0


def twoQueues(**kwargs):
    return InboundWatermarks([(0, 0), (0, 1)], False, 0, **kwargs)


def test_the_processor_observes_the_minimum_where_the_last_queue_reaches_it():
    inbound = twoQueues()
    batches = [["a", M(0, 10), "b", M(1, 20), "c"], [M(0, 30), "d"]]
    assert consumed(inbound, batches) == [["a"], ["b"], Watermark(10), ["c"], Watermark(20), ["d"]]
    assert inbound.observed == 20 and inbound.markerCount == 3


def test_a_queue_without_a_watermark_holds_the_others_back_until_it_is_done():
    inbound = twoQueues()
    assert consumed(inbound, [[M(0, 30), "a"], [M(1, DONE), "b"]]) == [["a"], Watermark(30), ["b"]]


def test_idle_queues_are_left_out_and_all_idle_goes_on():
    assert consumed(twoQueues(), [[M(0, LONG_MAX), M(1, 30)]]) == [Watermark(30)]
    assert consumed(twoQueues(), [[M(0, LONG_MAX), M(1, LONG_MAX)]]) == [IDLE_MESSAGE]


def test_a_woken_queue_holds_the_others_back_again():
    inbound = twoQueues()
    assert consumed(inbound, [[M(0, LONG_MAX), M(1, 30), M(0, WAKE), M(1, 40), M(0, 35)]]) == [
        Watermark(30),
        Watermark(35),
    ]


def test_the_queues_carry_over_to_the_next_micro_batch():
    first = twoQueues()
    assert consumed(first, [[M(0, 40), M(1, 50)]]) == [Watermark(40)]
    following = twoQueues(state=first.state())
    assert consumed(following, [[M(0, 45)]]) == [Watermark(45)] and following.observed == 45


def test_a_coalescer_started_afresh_forwards_nothing_observed_before():
    inbound = twoQueues(observed=40)
    assert consumed(inbound, [[M(0, 40), M(1, 50), M(0, 45)]]) == [Watermark(45)]


def test_a_done_queue_read_again_is_left_alone():
    first = twoQueues()
    consumed(first, [[M(0, 5), M(0, DONE)]])
    assert consumed(twoQueues(state=first.state()), [[M(0, 5), M(0, DONE), M(1, 7)]]) == [Watermark(7)]


def test_tagged_inputs_are_queues_per_ordinal_and_sender():
    queues = queuesOf([EdgeQueues(0, 2), EdgeQueues(1, 3, ((0,), (1, 2)))], 1)
    assert queues == [(0, 0), (0, 1), (1, 1), (1, 2)]
    inbound = InboundWatermarks(queues, True, 0)
    batches = [[(0, "a"), (0, M(0, 50)), (0, M(1, 40)), (1, M(1, 45))], [(1, M(2, 60)), (1, "b")]]
    assert consumed(inbound, batches) == [[(0, "a")], Watermark(40), [(1, "b")]]


def test_a_marker_from_no_queue_of_the_processor_fails_naming_it():
    with pytest.raises(ProcessorContractError, match="processor 5 of inbound edge 0"):
        consumed(twoQueues(), [[M(5, 1)]])


def test_a_shuffle_sends_every_marker_to_every_target_in_its_place():
    route = routeOf(lambda e: e.partitioned(keyOf), 1, 3)
    batches = iter([list(range(9)), [M(0, 42)], list(range(9, 18))])
    sent = list(routeItems(route, None, 1 << 16, Accumulated(), 0, batches))
    byTarget = {target: [] for target in range(3)}
    for target, data in sent:
        byTarget[target] += pickle.loads(data)
    for received in byTarget.values():
        at = received.index(M(0, 42))
        assert all(item < 9 for item in received[:at]) and all(item >= 9 for item in received[at + 1 :])
    assert sorted(item for items in byTarget.values() for item in items if type(item) is int) == list(range(18))
