"""Jet's WatermarkCoalescerTest, ported: seed 003's rules for a processor with several input queues."""

import pytest

from sparkjet.coredag import ProcessorContractError
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MIN, Watermark
from sparkjet.coredag.model.watermark_coalescer import WatermarkCoalescer

IDLE = IDLE_MESSAGE


def wm(timestamp: int) -> Watermark:
    return Watermark(timestamp)


@pytest.fixture
def wc() -> WatermarkCoalescer:
    return WatermarkCoalescer(2)


def test_nothing_happened_then_no_wm(wc):
    assert wc.checkWmHistory() is None


def test_both_inputs_have_wm_then_forwarded(wc):
    assert wc.observeWm(0, wm(1)) is None
    assert wc.topObservedWm() == 1
    assert wc.coalescedWm() == LONG_MIN
    assert wc.observeWm(1, wm(2)) == wm(1)
    assert wc.observeWm(0, wm(3)) == wm(2)
    assert wc.observeWm(1, wm(4)) == wm(3)
    assert wc.topObservedWm() == 4
    assert wc.coalescedWm() == 3


@pytest.mark.parametrize("activity", ["event", "wm"])
def test_i1_recovers_from_idle_then_wm_from_i1_coalesced(wc, activity):
    assert wc.observeWm(0, IDLE) is None
    assert wc.observeWm(1, wm(11)) == wm(11)  # forwarded immediately
    if activity == "wm":
        assert wc.observeWm(0, wm(11)) is None
    else:
        wc.observeEvent(0)
    assert wc.observeWm(1, wm(12)) is None  # waiting for i1
    assert wc.observeWm(0, wm(13)) == wm(12)  # both are at least at 12
    assert wc.checkWmHistory() is None


@pytest.mark.parametrize(
    "first, second, forwarded",
    [((0, IDLE), (1, wm(100)), wm(100)), ((0, wm(100)), (1, IDLE), wm(100)), ((0, wm(100)), (1, wm(101)), wm(100))],
    ids=["idle-then-active", "active-then-idle", "both-active"],
)
def test_one_input_idle_or_both_active_then_forwarded_immediately(wc, first, second, forwarded):
    assert wc.observeWm(*first) is None
    assert wc.observeWm(*second) == forwarded


def test_i1_active_no_wm_i2_idle_then_no_wm_to_forward(wc):
    wc.observeEvent(0)
    assert wc.observeWm(1, IDLE) is None
    assert wc.checkWmHistory() is None
    assert wc.checkWmHistory() is None


def test_i1_idle_i2_active_no_wm_then_nothing_yet(wc):
    assert wc.observeWm(0, IDLE) is None
    wc.observeEvent(1)
    assert wc.checkWmHistory() is None


def test_both_idle_then_idle_message_forwarded_immediately(wc):
    assert wc.observeWm(0, IDLE) is None
    assert wc.observeWm(1, IDLE) == IDLE


def test_one_active_one_done_then_forwarded_immediately(wc):
    assert wc.observeWm(0, wm(100)) is None
    assert wc.queueDone(1) == wm(100)
    other = WatermarkCoalescer(2)
    assert other.queueDone(0) is None
    assert other.observeWm(1, wm(100)) == wm(100)


def test_i1_idle_i2_done_i1_recovers_then_idle_message_then_wm(wc):
    assert wc.observeWm(0, IDLE) is None
    assert wc.queueDone(1) == IDLE
    assert wc.observeWm(0, wm(10)) == wm(10)


def test_i1_done_i2_idle_and_recovers_then_forwarded_immediately(wc):
    assert wc.queueDone(0) is None
    assert wc.observeWm(1, IDLE) == IDLE
    assert wc.observeWm(1, wm(10)) == wm(10)


def test_duplicate_idle_message_is_processed(wc):
    """A source emits IDLE, an event (not broadcast) and IDLE again: two IDLEs in a row downstream."""
    assert wc.observeWm(0, IDLE) is None
    assert wc.observeWm(0, IDLE) is None


def test_all_idle_and_duplicate_idle_message_is_processed(wc):
    assert wc.observeWm(0, IDLE) is None
    assert wc.observeWm(1, IDLE) == IDLE
    assert wc.observeWm(0, IDLE) is None


def test_all_done_then_no_max_value_emitted(wc):
    assert wc.queueDone(0) is None
    assert wc.queueDone(1) is None


def test_two_of_three_inputs_idle_then_nothing_forwarded():
    wc = WatermarkCoalescer(3)
    assert wc.observeWm(0, IDLE) is None
    assert wc.observeWm(1, IDLE) is None


def test_duplicate_done_call_is_an_error(wc):
    wc.queueDone(0)
    with pytest.raises(ProcessorContractError, match="Duplicate"):
        wc.queueDone(0)


@pytest.mark.parametrize("late", [wm(0), IDLE], ids=["wm", "idle"])
def test_anything_after_done_is_not_monotonic(wc, late):
    wc.queueDone(0)
    with pytest.raises(ProcessorContractError, match="not monotonically increasing"):
        wc.observeWm(0, late)


def test_wm_going_back_is_an_error_with_jets_message(wc):
    wc.observeWm(0, wm(10))
    with pytest.raises(ProcessorContractError) as raised:
        wc.observeWm(0, wm(9))
    assert str(raised.value) == "Watermarks not monotonically increasing on queue: last one=10, new one=9"


def test_all_had_wms_then_all_idle_the_one_behind_last_then_top_wm_forwarded(wc):
    assert wc.observeWm(0, wm(10)) is None
    assert wc.observeWm(1, wm(11)) == wm(10)
    assert wc.observeWm(1, IDLE) is None  # stays at 10
    assert wc.observeWm(0, IDLE) == wm(11)  # now every input is idle: the top one goes
    assert wc.checkWmHistory() == IDLE


def test_all_had_wms_the_one_ahead_idle_the_one_behind_done_then_top_wm_forwarded(wc):
    assert wc.observeWm(0, wm(10)) is None
    assert wc.observeWm(1, wm(11)) == wm(10)
    assert wc.observeWm(1, IDLE) is None
    assert wc.queueDone(0) == wm(11)
    assert wc.checkWmHistory() == IDLE


def test_single_input():
    wc = WatermarkCoalescer(1)
    assert wc.observeWm(0, IDLE) == IDLE
    assert wc.observeWm(0, wm(10)) == wm(10)
    assert wc.observeWm(0, wm(11)) == wm(11)
    assert wc.observeWm(0, IDLE) == IDLE
    assert wc.observeWm(0, wm(12)) == wm(12)
    assert wc.queueDone(0) is None


def test_no_inputs_observe_nothing():
    wc = WatermarkCoalescer(0)
    assert wc.checkWmHistory() is None and wc.coalescedWm() == LONG_MIN
    with pytest.raises(ProcessorContractError, match="without inputs"):
        wc.observeWm(0, wm(1))


def test_watermarks_print_their_time_or_idle():
    assert repr(wm(7)) == "Watermark(7)" and repr(IDLE) == "Watermark(IDLE_MESSAGE)"
