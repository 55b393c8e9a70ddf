"""The stream API sparkjet lacked (issue 27, "Missing API"), with Jet's tests ported:
TestSupport's disableCompleteCall() and disableLogging() (SlidingWindowPTest uses them),
JoinClause.joinMapEntries (BatchStageTest)."""

import logging

import pytest

from sparkjet import JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.model.watermark import Watermark
from tests.streaming.test_sliding_window import Case, outboxFrame


def slidingWindow():
    """SlidingWindowPTest's supplier: windows of 4 frames sliding by 1 over one stage, summing."""
    return Case(hasDeduct=True, singleStage=True).supplier


def event(frameTs: int, value: int):
    return Case(hasDeduct=True, singleStage=True).event(frameTs, value)


def test_when_no_frames_received_then_only_the_watermark_without_complete():
    """SlidingWindowPTest.when_noFramesReceived_then_onlyEmitWm."""
    verifyProcessor(slidingWindow()).disableCompleteCall().input([Watermark(1)]).expectOutput([Watermark(1)]).verify()


def test_simple_smoke_without_complete_nor_logging():
    """SlidingWindowPTest.simple_smokeTest."""
    verifyProcessor(slidingWindow()).disableCompleteCall().disableLogging().input(
        [event(0, 1), Watermark(3)]
    ).expectOutput([outboxFrame(0, 1), outboxFrame(1, 1), outboxFrame(2, 1), outboxFrame(3, 1), Watermark(3)]).verify()


def test_without_the_complete_call_a_window_no_watermark_closed_is_not_emitted():
    test = verifyProcessor(slidingWindow()).input([event(0, 1), event(1, 1)])
    test.disableCompleteCall().expectOutput([]).verify()
    test.expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 2), outboxFrame(2, 2), outboxFrame(3, 2), outboxFrame(4, 1)]
    ).verify()


def test_a_processor_test_logs_its_inputs_and_outputs_unless_disabled(caplog):
    caplog.set_level(logging.INFO, logger="sparkjet.testSupport")
    verifyProcessor(slidingWindow()).disableSnapshots().input([event(0, 1), Watermark(3)]).expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 1), outboxFrame(2, 1), outboxFrame(3, 1), Watermark(3)]
    ).verify()
    messages = [record.getMessage() for record in caplog.records]
    mode = "verifyProcessor(mode='inbox one-by-one, outbox capacity 1')"
    assert f"{mode}: Input-0: [(-1, 1)]" in messages
    assert f"{mode}: Output-0: [{outboxFrame(0, 1)!r}]" in messages
    assert f"{mode}: input processed, calling complete()" in messages
    caplog.clear()
    verifyProcessor(slidingWindow()).disableLogging().input([Watermark(3)]).expectOutput([Watermark(3)]).verify()
    assert caplog.records == []


ITEM_COUNT = 1024
"""PipelineTestSupport.itemCount."""


def valueEntry(number: int) -> tuple:
    return (number, f"value-{number}")


def dudEntry(number: int) -> tuple:
    return (number, "dud")


def isEven(number: int) -> bool:
    return number % 2 == 0


def entry(item, match) -> tuple:
    return (item, match)


def dropped(item, match) -> None:
    return None


def joined(jet, enriching, join: str, mapFn) -> list:
    """Run ``range(ITEM_COUNT)`` joined (``join``: hashJoin or innerHashJoin) with the entries
    ``enriching`` makes of it, matched by joinMapEntries(wholeItem()); return the output sorted."""
    p = Pipeline.create()
    entries = enriching(p.readFrom(Sources.items(range(ITEM_COUNT))))
    primary = p.readFrom(Sources.items(range(ITEM_COUNT)))
    getattr(primary, join)(entries, JoinClause.joinMapEntries(wholeItem()), mapFn).writeTo(Sinks.list(join))
    jet.newJob(p).join()
    return sorted(jet.getList(join))


@pytest.mark.spark
def test_hash_join_matches_map_entries_by_key_and_gives_their_values(jet):
    """BatchStageTest.hashJoin."""
    output = joined(jet, lambda stage: stage.map(valueEntry), "hashJoin", entry)
    assert output == [(number, f"value-{number}") for number in range(ITEM_COUNT)]


@pytest.mark.spark
def test_inner_hash_join_with_map_entries_filters_out_the_unmatched(jet):
    """BatchStageTest.when_innerHashJoin_then_filterOutNulls."""
    output = joined(jet, lambda stage: stage.filter(isEven).map(valueEntry), "innerHashJoin", entry)
    assert output == [(number, f"value-{number}") for number in range(0, ITEM_COUNT, 2)]


@pytest.mark.spark
def test_hash_join_with_map_entries_drops_what_the_output_function_makes_none(jet):
    """BatchStageTest.hashJoin_when_outputFnReturnsNull_then_filteredOut."""
    assert joined(jet, lambda stage: stage.map(dudEntry), "hashJoin", dropped) == []
