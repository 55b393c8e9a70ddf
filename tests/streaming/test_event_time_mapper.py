"""Jet's EventTimeMapperTest and WatermarkPolicy tests, ported: per-partition watermarks, idleness,
throttling, restore."""

import pickle

import pytest

from sparkjet.coredag.model.event_time_mapper import NO_NATIVE_TIME, EventTimeMapper
from sparkjet.coredag.model.event_time_policy import (
    EventTimePolicy,
    LimitingRealTimeLag,
    WatermarkPolicy,
    limitingLag,
    limitingRealTimeLag,
    noEventTime,
)
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MAX, LONG_MIN, Watermark

LAG = 3


def ns(ms: int) -> int:
    return ms * 1_000_000


class FakeClock:
    """A nanosecond clock the test sets."""

    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def identity(n):
    return n


def mapper(idleTimeoutMillis: int, throttling: int = 1, wmPolicy=limitingLag(LAG), timestampFn=identity, partitions=1):
    clock = FakeClock()
    policy = EventTimePolicy(timestampFn, wmPolicy, throttling, 0, idleTimeoutMillis)
    etm = EventTimeMapper(policy, clock)
    etm.addPartitions(partitions)
    return etm, clock


def wm(timestamp: int) -> Watermark:
    return Watermark(timestamp)


def test_smoke():
    etm, clock = mapper(idleTimeoutMillis=5, partitions=2)
    clock.now = ns(1)
    assert etm.flatMapIdle() == []  # all partitions are active initially
    clock.now = ns(5)
    assert etm.flatMapIdle() == [IDLE_MESSAGE]  # the idle timeout passed for all partitions
    assert etm.flatMapIdle() == []  # still idle: no second IDLE_MESSAGE
    assert etm.flatMapEvent(100, 0) == [wm(100 - LAG), 100]  # the other partition is idle
    assert etm.flatMapEvent(90, 0) == [90]  # older: no watermark
    assert etm.flatMapEvent(101, 0) == [wm(101 - LAG), 101]


def test_smoke_with_the_idle_timeout_disabled():
    etm, _ = mapper(idleTimeoutMillis=0, partitions=2)
    assert etm.flatMapIdle() == []
    assert etm.flatMapEvent(10, 0) == [10]  # waiting for partition 1 indefinitely
    assert etm.flatMapEvent(11, 0) == [11]
    assert etm.flatMapEvent(10, 1) == [wm(10 - LAG), 10]
    assert etm.flatMapEvent(11, 1) == [wm(11 - LAG), 11]
    assert etm.flatMapEvent(12, 1) == [12]  # partition 1 ahead of 0: no watermark
    assert etm.flatMapEvent(13, 0) == [wm(12 - LAG), 13]


def test_zero_partitions_are_idle_at_once():
    etm, _ = mapper(idleTimeoutMillis=0, partitions=0)
    assert etm.flatMapIdle() == [IDLE_MESSAGE]
    assert etm.flatMapIdle() == []
    etm.addPartitions(1)
    assert etm.flatMapIdle() == []  # no value to send yet
    assert etm.flatMapEvent(10, 0) == [wm(10 - LAG), 10]


def test_idle_event_idle_then_two_idle_messages():
    etm, clock = mapper(idleTimeoutMillis=10)
    assert etm.flatMapEvent(10, 0) == [wm(10 - LAG), 10]
    clock.now = ns(10)
    assert etm.flatMapIdle() == [IDLE_MESSAGE]
    assert etm.flatMapEvent(10, 0) == [10]  # an event, but no new watermark
    assert etm.flatMapIdle() == []
    clock.now = ns(20)
    assert etm.flatMapIdle() == [IDLE_MESSAGE]


def test_event_in_one_of_two_partitions_then_wm_and_idle_message_after_the_timeout():
    etm, clock = mapper(idleTimeoutMillis=10, partitions=2)
    assert etm.flatMapEvent(10, 0) == [10]
    clock.now = ns(10)
    assert etm.flatMapIdle() == [wm(10 - LAG), IDLE_MESSAGE]


def test_no_timestamp_fn_and_no_native_time_is_an_error():
    etm, _ = mapper(idleTimeoutMillis=10, timestampFn=None)
    with pytest.raises(ValueError, match="Neither timestampFn nor nativeEventTime specified"):
        etm.flatMapEvent(10, 0, NO_NATIVE_TIME)


def test_no_timestamp_fn_then_native_time():
    etm, clock = mapper(idleTimeoutMillis=5, timestampFn=None)
    clock.now = ns(1)
    assert etm.flatMapEvent(10, 0, 11) == [wm(11 - LAG), 10]
    assert etm.flatMapEvent(11, 0, 12) == [wm(12 - LAG), 11]


def test_throttling_to_frame_size_0_emits_no_watermarks():
    etm, _ = mapper(idleTimeoutMillis=5, throttling=0)
    assert etm.flatMapEvent(-10, 0) == [-10]
    assert etm.flatMapEvent(10, 0) == [10]


def test_restored_watermark_does_not_go_back():
    etm, _ = mapper(idleTimeoutMillis=5, wmPolicy=limitingLag(0))
    etm.restoreWatermark(0, 10)
    assert etm.flatMapEvent(9, 0) == [9]
    assert etm.flatMapEvent(10, 0) == [10]
    assert etm.flatMapEvent(11, 0) == [wm(11), 11]


def test_two_active_partitions_the_lagging_one_removed_then_wm_forwarded():
    etm, _ = mapper(idleTimeoutMillis=5, wmPolicy=limitingLag(0), partitions=2)
    assert etm.flatMapEvent(10, 0) == [10]
    assert etm.removePartition(1) == [wm(10)]


def test_two_active_partitions_the_one_ahead_removed_then_no_wm():
    etm, _ = mapper(idleTimeoutMillis=5, wmPolicy=limitingLag(0), partitions=2)
    assert etm.flatMapEvent(10, 0) == [10]
    assert etm.flatMapEvent(11, 1) == [wm(10), 11]
    assert etm.removePartition(1) == []


def test_three_partitions_lagging_one_removed_second_lagging_one_idle_then_wm():
    etm, clock = mapper(idleTimeoutMillis=5, wmPolicy=limitingLag(0), partitions=3)
    assert etm.flatMapEvent(10, 0) == [10]
    clock.now = ns(1)
    assert etm.flatMapEvent(11, 1) == [11]
    assert etm.flatMapEvent(12, 2) == [wm(10), 12]
    clock.now = ns(5)  # partition 0 turns idle and partition 1 is removed
    assert etm.removePartition(1) == [wm(12)]


class ConstantPolicy(WatermarkPolicy):
    def reportEvent(self, timestamp: int) -> None:
        pass

    def getCurrentWatermark(self) -> int:
        return 42


def test_current_wm_beyond_the_event_is_capped_so_the_event_is_not_late():
    etm, _ = mapper(idleTimeoutMillis=5, wmPolicy=ConstantPolicy)
    assert etm.flatMapEvent(41, 0) == [wm(41), 41]
    assert etm.flatMapEvent(40, 0) == [40]  # late, and the watermark does not go back


def test_throttling_floors_watermarks_to_the_frame():
    etm, _ = mapper(idleTimeoutMillis=0, throttling=10)
    assert etm.flatMapEvent(14, 0) == [wm(10), 14]
    assert etm.flatMapEvent(15, 0) == [15]
    assert etm.flatMapEvent(24, 0) == [wm(20), 24]


def test_limiting_lag_out_of_order_events_keep_the_watermark_monotonic():
    """Jet's WatermarkPolicy_withFixedLagTest, its three cases."""
    policy = limitingLag(10)()
    assert policy.getCurrentWatermark() == LONG_MIN  # no event ever
    for i in range(10):
        policy.reportEvent(i)
        assert policy.getCurrentWatermark() == i - 10
        policy.reportEvent(i - 1)
        policy.reportEvent(i - 2)
        assert policy.getCurrentWatermark() == i - 10
    stopped = limitingLag(10)()
    stopped.reportEvent(10)
    assert [stopped.getCurrentWatermark() for _ in range(3)] == [0, 0, 0]


def test_real_time_lag_follows_the_wall_clock():
    now = [1_000]
    policy = LimitingRealTimeLag(100, lambda: now[0])()
    policy.reportEvent(5_000)
    assert policy.getCurrentWatermark() == 900
    now[0] = 2_000
    assert policy.getCurrentWatermark() == 1_900


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: limitingLag(-1), "lag must not be negative"),
        (lambda: limitingRealTimeLag(-1), "lag must not be negative"),
        (lambda: EventTimePolicy(identity, limitingLag(1), -1), "watermarkThrottlingFrameSize must be >= 0"),
        (lambda: EventTimePolicy(identity, limitingLag(1), 2, 2), "offset must be smaller than frame size"),
        (lambda: EventTimePolicy(identity, limitingLag(1), 1, 0, -1), r"idleTimeoutMillis must be >= 0 \(0 means disabled\)"),
    ],
)
def test_invalid_policies_get_jets_messages(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_policies_pickle_to_ship_to_workers():
    policy = EventTimePolicy(identity, limitingLag(LAG), 10, 5, 1_000)
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert pickle.loads(pickle.dumps(noEventTime())) == noEventTime()


def test_no_event_time_emits_no_watermarks():
    etm = EventTimeMapper(noEventTime(), FakeClock())
    etm.addPartitions(1)
    assert etm.flatMapEvent("x", 0) == ["x"]


# a timestamp is an int of epoch milliseconds, as Jet's ToLongFunction makes it


def secondsOf(event):
    return event["seconds"]


@pytest.mark.parametrize(
    "seconds, shown", [(1.5, "1.5 (float)"), (None, "None (NoneType)"), ("17", "'17' (str)"), (True, "True (bool)")]
)
def test_a_timestamp_that_is_no_int_is_refused_naming_the_function_and_what_to_return(seconds, shown):
    etm, _ = mapper(idleTimeoutMillis=0, timestampFn=secondsOf)
    with pytest.raises(TypeError) as raised:
        etm.flatMapEvent({"seconds": seconds}, 0)
    assert str(raised.value) == (
        f"timestampFn secondsOf (defined at test_event_time_mapper.py:{secondsOf.__code__.co_firstlineno}) returned "
        f"{shown}, but an event's timestamp is an int of epoch milliseconds (Jet's long): return int(seconds * 1000) "
        "for seconds as time.time() gives them"
    )


def test_a_native_timestamp_that_is_no_int_is_refused_naming_the_source():
    etm, _ = mapper(idleTimeoutMillis=0, timestampFn=None)
    with pytest.raises(TypeError, match=r"^The source gave the native timestamp 10.5 \(float\), but an event's timestamp"):
        etm.flatMapEvent("item", 0, 10.5)


def test_a_timestamp_beyond_javas_long_is_refused():
    etm, _ = mapper(idleTimeoutMillis=0)
    with pytest.raises(ValueError, match=r"returned 9223372036854775808, out of a Java long's range, but an event's"):
        etm.flatMapEvent(LONG_MAX + 1, 0)


class IntLike:
    """An integer of another type, as numpy's int64 is."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_an_integer_of_another_type_becomes_an_int():
    etm, _ = mapper(idleTimeoutMillis=0, timestampFn=lambda item: IntLike(item), wmPolicy=limitingLag(0))
    [watermark, event] = etm.flatMapEvent(10, 0)
    assert watermark == wm(10) and type(watermark.timestamp) is int and event == 10
