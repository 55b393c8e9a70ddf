"""Jet's StreamSourceStageTest, its SourceBuilder cases ported: a source of two items, given
their time three ways, windowed by tumbling(1); the processor after the window observes a
watermark per item, as Jet's does, the two of one micro-batch included (it saw only the last
while watermarks reached a processor once per micro-batch). Jet's collector is a sink keeping the
watermarks in a static set; a processor on Spark runs in a Python worker, so here it emits them
as items to an assertion."""

import pytest

from sparkjet import (
    AggregateOperations,
    AssertionCompletedException,
    Assertions,
    Pipeline,
    Sinks,
    SourceBuilder,
    WindowDefinition,
)
from sparkjet.coredag import AbstractProcessor

pytestmark = pytest.mark.spark


def addOneAndTwo(state: list, buffer, timestamped: bool) -> None:
    if not state:
        state.append("added")
        for item in (1, 2):
            buffer.add(item, item) if timestamped else buffer.add(item)


def fillTimestamped(state: list, buffer) -> None:
    addOneAndTwo(state, buffer, True)


def fillPlain(state: list, buffer) -> None:
    addOneAndTwo(state, buffer, False)


def newState(context) -> list:
    return []


def timestampedSourceBuilder():
    return SourceBuilder.timestampedStream("s", newState).fillBufferFn(fillTimestamped).build()


def plainSourceBuilder():
    return SourceBuilder.stream("s", newState).fillBufferFn(fillPlain).build()


def plusOne(item: int) -> int:
    return item + 1


def withoutTimestamps(stage):
    return stage.withoutTimestamps().addTimestamps(plusOne, 0)


def withNativeTimestamps(stage):
    return stage.withNativeTimestamps(0)


def withTimestamps(stage):
    return stage.withTimestamps(plusOne, 0)


class WatermarkCollector(AbstractProcessor):
    """Emits the time of each watermark it observes; its items go nowhere."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        return True

    def tryProcessWatermark(self, watermark) -> bool:
        return self.tryEmit(watermark.timestamp)


@pytest.mark.parametrize(
    "source, timestamps, expectedWms",
    [
        (timestampedSourceBuilder, withoutTimestamps, {2, 3}),
        (timestampedSourceBuilder, withNativeTimestamps, {1, 2}),
        (timestampedSourceBuilder, withTimestamps, {2, 3}),
        (plainSourceBuilder, withoutTimestamps, {2, 3}),
        (plainSourceBuilder, withTimestamps, {2, 3}),
    ],
    ids=[
        "timestampedSourceBuilder_withoutTimestamps",
        "timestampedSourceBuilder_withNativeTimestamps",
        "timestampedSourceBuilder_withTimestamps",
        "plainSourceBuilder_withoutTimestamps",
        "plainSourceBuilder_withTimestamps",
    ],
)
def test_source_builder_watermarks(jet, source, timestamps, expectedWms):
    name = f"wms-{source.__name__}-{timestamps.__name__}"
    p = Pipeline.create()
    (timestamps(p.readFrom(source()))
      .window(WindowDefinition.tumbling(1))
      .aggregate(AggregateOperations.counting())
      .customTransform("wmCollector", WatermarkCollector)
      .apply(Assertions.assertCollectedEventually(60, lambda wms: _assertEqual(set(wms), expectedWms)))
      .writeTo(Sinks.list(name)))
    with pytest.raises(AssertionCompletedException):
        jet.newJob(p).join()
    assert set(jet.getList(name)) == expectedWms


def _assertEqual(actual, expected):
    assert actual == expected
