"""Jet's watermark stride: the planner throttles every source's and add-timestamps' watermarks to
the greatest common divisor of what the pipeline's stages prefer, at most ``MAXIMUM_WATERMARK_GAP``."""

import math

from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import (
    MapStatefulTransform,
    RollingAggregateTransform,
    StatefulStreamTransform,
    Transform,
    WindowAggregateTransform,
)
from sparkjet.pipeline.window_definition import SessionWindowDefinition

MAXIMUM_WATERMARK_GAP = 1000
"""The widest stride (ms), windows or not, as in Jet: watermarks keep coming for latency debugging."""

MAX_SESSION_STRIDE = 100
"""A session window's stride is at most this (ms), as Jet's ``MAX_WATERMARK_STRIDE``."""

MIN_WATERMARKS_PER_SESSION = 100
TTL_TO_STRIDE_RATIO = 10


def preferredWatermarkStride(transform: Transform) -> int:
    """Return the stride (ms) a stage prefers, as Jet's ``preferredWatermarkStride``; 0: none."""
    if isinstance(transform, WindowAggregateTransform):
        definition = transform.windowDefinition
        if isinstance(definition, SessionWindowDefinition):
            return min(MAX_SESSION_STRIDE, max(1, definition.sessionTimeout // MIN_WATERMARKS_PER_SESSION))
        return definition.slideBy
    if isinstance(transform, MapStatefulTransform | RollingAggregateTransform) and transform.keyFn is not None:
        ttl = transform.ttl if isinstance(transform, StatefulStreamTransform) else 0
        return max(1, ttl // TTL_TO_STRIDE_RATIO)
    return 0


def watermarkStride(graph: PipelineGraph) -> int:
    """Return the stride Jet's planner throttles the pipeline's watermarks to: the greatest
    common divisor of the stages' preferred strides, ``MAXIMUM_WATERMARK_GAP`` without any, and
    a divisor of it when larger."""
    stride = math.gcd(*(preferredWatermarkStride(transform) for transform in graph.transforms))
    if stride == 0:
        return MAXIMUM_WATERMARK_GAP
    return math.gcd(stride, MAXIMUM_WATERMARK_GAP) if stride > MAXIMUM_WATERMARK_GAP else stride
