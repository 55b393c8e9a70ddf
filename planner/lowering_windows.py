"""Lowering event time: ``add-timestamps`` and the window aggregations (sliding, tumbling and
session windows), in one stage or two as Jet's planner decides."""

import attrs

from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.jet_dot import PREPARE_SUFFIX
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.event_time_policy import EventTimePolicy, limitingLag
from sparkjet.coredag.model.jet_event import AccumulatePayload, OnPayload, eventTimestamp, jetEvent
from sparkjet.coredag.model.window_result import KeyedWindowResult, TimestampedAtEnd, windowResult
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from sparkjet.coredag.processors.keyed import GlobalKey
from sparkjet.coredag.processors.session_window import SessionWindowP
from sparkjet.coredag.processors.sliding_window import (
    accumulateByFrameP,
    aggregateToSlidingWindowP,
    combineToSlidingWindowP,
    frameResultKey,
)
from sparkjet.pipeline.transforms import TimestampTransform, WindowAggregateTransform
from sparkjet.pipeline.window_definition import SessionWindowDefinition
from sparkjet.planner.lowering_aggregations import TWO_STAGES
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage, stageName
from sparkjet.planner.watermark_stride import watermarkStride


@lowerStage.register
def lowerTimestamps(transform: TimestampTransform, builder: DagBuilder, index: int) -> None:
    """``add-timestamps``: Jet's InsertWatermarksP behind an isolated edge, at its input's
    parallelism, its watermarks throttled to the pipeline's stride; each item leaves as a
    JetEvent (its timestamp and the item)."""
    stride = watermarkStride(builder.graph)
    policy = EventTimePolicy(transform.timestampFn, limitingLag(transform.allowedLag), stride, 0, 0, wrapFn=jetEvent)
    parallelism = transform.localParallelism if transform.localParallelism > 0 else builder.upstreamParallelism(index)
    vertex = builder.addVertex(transform.name, InsertWatermarksP(policy), parallelism)
    builder.addEdges(index, vertex, lambda e: e.isolated())
    builder.setExit(index, vertex)


@lowerStage.register
def lowerWindowAggregate(transform: WindowAggregateTransform, builder: DagBuilder, index: int) -> None:
    """Jet's window plans: ``sliding-window-prepare`` -(distributed partitioned)-> ``sliding-window``
    when the operation combines and no early results are asked, else one ``sliding-window``, or
    ``session-window``; without a key, the last vertex has parallelism 1 and gets every item.
    A keyed window after ``rebalance()`` is one stage, as Jet plans it. Each input of a co-aggregation is partitioned by its own key. Each result is an event timed
    at its window's last moment, as Jet stamps it."""
    name, label, definition = transform.name, stageName(transform), transform.windowDefinition
    keyed = bool(transform.keyFns)
    keyFns = tuple(OnPayload(keyFn) for keyFn in transform.keyFns) if keyed else (GlobalKey(),) * transform.aggrOp.arity
    timestampFns = (eventTimestamp,) * len(keyFns)
    op = onPayloads(transform.aggrOp)
    outputFn = TimestampedAtEnd(transform.outputFn or (KeyedWindowResult if keyed else windowResult))
    parallelism = transform.localParallelism if keyed else 1

    def byKey(edge: Edge) -> Edge:
        return edge.partitioned(keyFns[edge.destOrdinal])

    def intoLast(edge: Edge) -> Edge:
        return byKey(edge.distributed()) if keyed else edge.distributed().allToOne(name)

    early = definition.earlyResultsPeriod
    rebalanced = any(map(transform.rebalancing, range(len(keyFns))))
    if isinstance(definition, SessionWindowDefinition):
        builder.addReason("session windows: one stage, each key's events on one processor")
        supplier = SessionWindowP(definition.sessionTimeout, keyFns, timestampFns, op, label, outputFn, early)
        vertex = builder.addVertex(name, supplier, parallelism)
        builder.addEdges(index, vertex, intoLast)
    elif singleStage := singleWindowStageBecause(op.combineFn is None, early > 0, keyed and rebalanced):
        builder.addReason(singleStage)
        policy = definition.toSlidingWindowPolicy()
        supplier = aggregateToSlidingWindowP(keyFns, timestampFns, policy, op, label, outputFn, early)
        vertex = builder.addVertex(name, supplier, parallelism)
        builder.addEdges(index, vertex, intoLast)
    else:
        builder.addReason(TWO_STAGES)
        policy = definition.toSlidingWindowPolicy()
        prepare = builder.addVertex(
            name + PREPARE_SUFFIX, accumulateByFrameP(keyFns, timestampFns, policy, op, label),
            transform.localParallelism, "prepare",
        )
        vertex = builder.addVertex(name, combineToSlidingWindowP(policy, op, label, outputFn), parallelism)
        builder.addEdges(index, prepare, byKey if keyed else (lambda e: e))
        frames = Edge.between(prepare, vertex).distributed()
        builder.addEdge(frames.partitioned(frameResultKey) if keyed else frames.allToOne(name))
    builder.setExit(index, vertex)


def onPayloads(op: AggregateOperation) -> AggregateOperation:
    """Return ``op`` accumulating events as it would their items, each input's function alike."""
    if op.arity == 1:
        return attrs.evolve(op, accumulateFn=AccumulatePayload(op.accumulateFn))
    return op.withAccumulateFns(*(AccumulatePayload(fn) for fn in op.accumulateFn.accumulateFns))


def singleWindowStageBecause(noCombine: bool, earlyResults: bool, keyedAfterRebalance: bool) -> str | None:
    """Return why a window aggregation runs in one stage, as Jet's planner decides; None for two."""
    if noCombine:
        return "single-stage window aggregation: the operation has no combine"
    if earlyResults:
        return "single-stage window aggregation: early results come from the one stage holding whole windows"
    if keyedAfterRebalance:
        return "single-stage window aggregation: `rebalance()` before it sends every item across, to its key's processor"
    return None
