"""Lowering the batch stages that see every item before they emit: aggregations (grouped or
not, of one input or several), distinct and sort, in one stage or two as Jet's planner decides."""

import operator

from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.model.jet_dot import PREPARE_SUFFIX
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)
from sparkjet.coredag.processors.coaggregation import TaggedInputP
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.keyed import DistinctP
from sparkjet.coredag.processors.sorting import SortP
from sparkjet.pipeline.transforms import AggregateTransform, DistinctTransform, GroupTransform, SortTransform
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage, stageName


COLLECT_SUFFIX = "-collect"
_entryKey = operator.itemgetter(0)


@lowerStage.register
def lowerGroup(transform: GroupTransform, builder: DagBuilder, index: int) -> None:
    """``group-and-aggregate-prepare`` -(distributed partitioned)-> ``group-and-aggregate``;
    one distributed partitioned stage when the operation has no combine or after rebalance().
    Co-grouping takes each input partitioned by its own key."""
    name, label, op, keyFn = transform.name, stageName(transform), transform.aggrOp, transform.keyFn
    parallelism, inputs = transform.localParallelism, len(builder.graph.upstream[index])
    inputKey = (lambda e: transform.inputKeyFns[e.destOrdinal]) if transform.inputKeyFns else (lambda e: keyFn)
    singleStage = singleStageBecause(op.combineFn is None, any(map(transform.rebalancing, range(inputs))))
    builder.addReason(singleStage or TWO_STAGES)
    if singleStage:
        vertex = builder.addVertex(name, multiInput(AggregateByKeyP(keyFn, op, label), inputs), parallelism)
        builder.addEdges(index, vertex, lambda e: e.distributed().partitioned(inputKey(e)))
    else:
        prepare = builder.addVertex(
            name + PREPARE_SUFFIX, multiInput(AccumulateByKeyP(keyFn, op, label), inputs), parallelism, "prepare"
        )
        vertex = builder.addVertex(name, CombineByKeyP(op, label), parallelism)
        builder.addEdges(index, prepare, lambda e: e.partitioned(inputKey(e)))
        builder.addEdge(Edge.between(prepare, vertex).distributed().partitioned(_entryKey))
    builder.setExit(index, vertex)


TWO_STAGES = "two-stage: prepare per task, combine after the shuffle"


def singleStageBecause(noCombine: bool, rebalanced: bool) -> str | None:
    """Return why an aggregation runs in one stage, None if it runs in two."""
    if noCombine:
        return "single-stage aggregation: the operation has no combine"
    if rebalanced:
        return "single-stage aggregation: `rebalance()` before it sends every item across"
    return None


@lowerStage.register
def lowerAggregate(transform: AggregateTransform, builder: DagBuilder, index: int) -> None:
    """``aggregate-prepare`` -(distributed all-to-one)-> ``aggregate`` (parallelism 1);
    one all-to-one stage when the operation has no combine."""
    name, label, op = transform.name, stageName(transform), transform.aggrOp
    inputs = len(builder.graph.upstream[index])
    singleStage = singleStageBecause(op.combineFn is None, rebalanced=False)
    builder.addReason(singleStage or TWO_STAGES)
    if singleStage:
        vertex = builder.addVertex(name, multiInput(AggregateP(op, label), inputs), 1)
        builder.addEdges(index, vertex, lambda e: e.distributed().allToOne(name))
    else:
        prepare = builder.addVertex(
            name + PREPARE_SUFFIX, multiInput(AccumulateP(op, label), inputs), transform.localParallelism, "prepare"
        )
        vertex = builder.addVertex(name, CombineP(op, label), 1)
        builder.addEdges(index, prepare)
        builder.addEdge(Edge.between(prepare, vertex).distributed().allToOne(name))
    builder.setExit(index, vertex)


def multiInput(supplier: StandardProcessorSupplier, inputCount: int) -> StandardProcessorSupplier:
    """A co-aggregation's first vertex folds ``(ordinal, item)`` pairs of all its inputs."""
    return TaggedInputP(supplier) if inputCount > 1 else supplier


@lowerStage.register
def lowerDistinct(transform: DistinctTransform, builder: DagBuilder, index: int) -> None:
    """``distinct-prepare`` (local partitioned in) -(distributed partitioned)-> ``distinct``."""
    name, keyFn, parallelism = transform.name, transform.keyFn, transform.localParallelism
    label = stageName(transform)
    prepare = builder.addVertex(
        name + PREPARE_SUFFIX, DistinctP(keyFn, label, isPrepare=True), parallelism, "prepare"
    )
    vertex = builder.addVertex(name, DistinctP(keyFn, label), parallelism)
    builder.addEdges(index, prepare, lambda e: e.partitioned(keyFn))
    builder.addEdge(Edge.between(prepare, vertex).distributed().partitioned(keyFn))
    builder.setExit(index, vertex)


@lowerStage.register
def lowerSort(transform: SortTransform, builder: DagBuilder, index: int) -> None:
    """``sort`` (each partition) -(distributed all-to-one, ordered)-> ``sort-collect`` (1)."""
    name, keyFn, reverse = transform.name, transform.keyFn, transform.reverse
    sort = builder.addVertex(name, SortP(keyFn, reverse, stageName(transform)), transform.localParallelism)
    collect = builder.addVertex(name + COLLECT_SUFFIX, IdentityP(), 1, "collect")
    builder.addEdges(index, sort)
    builder.addEdge(Edge.between(sort, collect).distributed().allToOne(name).ordered(keyFn, reverse))
    builder.setExit(index, collect)
