"""Jet's watermark stride: the planner throttles watermarks to the greatest common divisor of
what the stages prefer (a sliding window its slide, a session window a hundredth of its timeout
up to 100 ms, a keyed stateful stage a tenth of its time-to-live), 1000 ms at most."""

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem
from sparkjet.planner import plan


def newState():
    return [0]


def counting(state, key, item):
    return item


def strideOfDag(p) -> int:
    vertex = plan(p).dag.getVertex("finiteStream-add-timestamps")
    return vertex.processorSupplier.eventTimePolicy.watermarkThrottlingFrameSize


@pytest.mark.parametrize(
    "shapes, stride",
    [
        ((), 1000),
        ((WindowDefinition.sliding(10, 2), WindowDefinition.tumbling(6)), 2),
        ((WindowDefinition.tumbling(10_000),), 1000),
        ((WindowDefinition.tumbling(1_500),), 500),
        ((WindowDefinition.session(5_000),), 50),
        ((WindowDefinition.session(50_000),), 100),
        ((500,), 50),
        ((0,), 1),
    ],
    ids=["none", "gcd-of-slides", "capped", "divisor-of-cap", "session", "session-capped", "ttl", "no-ttl"],
)
def test_the_stride_is_jets(shapes, stride):
    assert strideOfDag(pipelineOf(shapes)) == stride


def pipelineOf(shapes) -> Pipeline:
    p = Pipeline.create()
    stage = p.readFrom(TestSources.finiteStream([(0, "a")])).withNativeTimestamps(0)
    if not shapes:
        stage.writeTo(Sinks.noop())
    for shape in shapes:
        keyed = stage.groupingKey(wholeItem())
        if isinstance(shape, int):
            keyed.mapStateful(shape, newState, counting, None).writeTo(Sinks.noop())
        else:
            keyed.window(shape).aggregate(AggregateOperations.counting()).writeTo(Sinks.noop())
    return p


def test_add_timestamps_mid_pipeline_is_throttled_too():
    p = Pipeline.create()
    (p.readFrom(TestSources.items([1, 2])).addTimestamps(lambda item: item, 0)
      .window(WindowDefinition.tumbling(20)).aggregate(AggregateOperations.counting()).writeTo(Sinks.noop()))
    assert plan(p).dag.getVertex("add-timestamps").processorSupplier.eventTimePolicy.watermarkThrottlingFrameSize == 20
