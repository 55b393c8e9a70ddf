"""The runtime's watermark transport: markers after a processor's output, to every target of a
shuffle, coalesced by seed 003's rules at the end of a processor's input."""

import pickle

from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MIN, Watermark
from sparkjet.coredag.runtime.shuffling import routeItems
from sparkjet.coredag.runtime.watermarks import InputMarkers, OutputWatermarks, WatermarkMarker
from tests.coredag.test_routing_pure import Accumulated, keyOf, routeOf


def markersOf(*timestamps, ordinal=None):
    pairs = [WatermarkMarker(index, ts) for index, ts in enumerate(timestamps)]
    return [pairs] if ordinal is None else [[(ordinal, marker) for marker in pairs]]


def reached(batches, tagged=False):
    markers = InputMarkers(tagged, 0)
    items = [item for batch in markers.items(batches) for item in batch]
    return items, markers.coalesced()


def test_the_input_observes_the_minimum_of_its_queues():
    items, (watermark, idle) = reached([[1, 2], *markersOf(30, 10, 20)])
    assert items == [1, 2] and watermark == Watermark(10) and not idle


def test_a_queue_without_a_watermark_holds_the_others_back():
    assert reached(markersOf(30, LONG_MIN))[1] == (None, False)


def test_idle_queues_are_left_out_and_all_idle_goes_on():
    assert reached([[WatermarkMarker(0, 30), WatermarkMarker(1, LONG_MIN, idle=True)]])[1] == (Watermark(30), False)
    assert reached([[WatermarkMarker(0, LONG_MIN, idle=True)] * 2])[1] == (None, True)


def test_a_queue_that_reached_a_watermark_then_went_idle_forwards_it_before_the_idle_message():
    # Jet's coalescer saw 500, then the other queue idle (500 goes on), then this one idle
    markers = [[WatermarkMarker(0, 500, idle=True), WatermarkMarker(1, LONG_MIN, idle=True)]]
    assert reached(markers)[1] == (Watermark(500), True)


def test_the_output_remembers_the_watermark_before_the_idle_message():
    watermarks = OutputWatermarks([LONG_MIN])
    list(watermarks.items([[Watermark(500), IDLE_MESSAGE]]))
    assert list(watermarks.markers(2)) == [[WatermarkMarker(2, 500, idle=True)]]
    assert watermarks.emitted() == (500,)


def test_tagged_inputs_are_queues_per_ordinal_and_sender():
    batches = [[(0, "a")], *markersOf(50, 40, ordinal=0), *markersOf(45, ordinal=1)]
    items, (watermark, _) = reached(batches, tagged=True)
    assert items == [(0, "a")] and watermark == Watermark(40)


def test_no_input_queues_observe_nothing():
    assert reached([[1]])[1] == (None, False)


def test_the_output_keeps_the_last_watermark_of_each_bucket():
    watermarks = OutputWatermarks([LONG_MIN, LONG_MIN])
    batches = [[(0, "x"), (0, Watermark(3)), (1, Watermark(4))], [(0, Watermark(7)), (1, "y")]]
    assert [item for batch in watermarks.items(batches) for item in batch] == [(0, "x"), (1, "y")]
    assert list(watermarks.markers(5)) == [[(0, WatermarkMarker(5, 7)), (1, WatermarkMarker(5, 4))]]
    single = OutputWatermarks([LONG_MIN])
    assert list(single.items([[Watermark(1)]])) == [] and list(single.markers(0)) == [[WatermarkMarker(0, 1)]]


def test_a_later_micro_batch_starts_from_the_watermarks_emitted_before():
    watermarks = OutputWatermarks([7, 4])
    assert list(watermarks.items([[(1, Watermark(9))]])) == [] and watermarks.emitted() == (7, 9)


def test_a_watermark_observed_in_an_earlier_micro_batch_is_not_observed_again():
    markers = InputMarkers(False, 0, observed=40)
    list(markers.items([[WatermarkMarker(0, 40), WatermarkMarker(1, 50)]]))
    assert markers.coalesced() == (None, False)
    list(markers.items([[WatermarkMarker(0, 45)]]))
    assert markers.coalesced() == (Watermark(45), False) and markers.observed == 45


def test_a_shuffle_sends_every_marker_to_every_target_whatever_the_routing():
    route = routeOf(lambda e: e.partitioned(keyOf), 1, 3)
    sent = list(routeItems(route, None, 1 << 16, Accumulated(), 0, iter([list(range(9)), [WatermarkMarker(0, 42)]])))
    received = [(target, item) for target, data in sent for item in pickle.loads(data)]
    assert sorted(target for target, item in received if item == WatermarkMarker(0, 42)) == [0, 1, 2]
    assert sorted(item for _, item in received if not isinstance(item, WatermarkMarker)) == list(range(9))
