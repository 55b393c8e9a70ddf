"""Lowering the stages that keep no state: map, filter and flat-map (alone or fused into one
vertex), merge, the user's own processors and the stages using a service."""

from collections.abc import Callable

from sparkjet.coredag.processors.async_service import AsyncServiceP
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.service import ServiceP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind
from sparkjet.pipeline.transforms import (
    AsyncServiceTransform,
    CustomTransform,
    MergeTransform,
    ServiceTransform,
    StatelessTransform,
)
from sparkjet.planner.fusion import FusedTransform
from sparkjet.planner.lowering_dispatch import DagBuilder, itemLogger, lowerStage, stageName


def statelessSteps(transform: StatelessTransform) -> tuple[StatelessStep, ...]:
    """Return the steps that run one map, filter or flat-map stage, and its peek if any."""
    label = stageName(transform)
    step = StatelessStep(transform.stepKind, transform.fn, label)
    if transform.peek is None:
        return (step,)
    return step, StatelessStep(StepKind.PEEK, itemLogger(transform.name, transform.peek), label)


@lowerStage.register
def lowerStateless(transform: StatelessTransform, builder: DagBuilder, index: int) -> None:
    """A map, filter or flat-map stage is one vertex; its peek is one of its steps."""
    addStatelessVertex(builder, index, (transform,))


@lowerStage.register
def lowerFused(transform: FusedTransform, builder: DagBuilder, index: int) -> None:
    """A fused chain of stateless stages is one vertex running them all in one loop."""
    addStatelessVertex(builder, index, transform.stages)


def addStatelessVertex(builder: DagBuilder, index: int, stages: tuple[StatelessTransform, ...]) -> None:
    """Add the one vertex running ``stages`` (and their peeks) in order, fed by stage ``index``'s inputs."""
    transform = builder.graph.transforms[index]
    supplier = StatelessChainP(tuple(step for stage in stages for step in statelessSteps(stage)))
    parallelism, ordered = builder.orderKept(index, transform.localParallelism)
    vertex = builder.addVertex(transform.name, supplier, parallelism, stages=tuple(stage.name for stage in stages))
    builder.addEdges(index, vertex, ordered)
    builder.setExit(index, vertex, logsItsPeek=True)


@lowerStage.register
def lowerMerge(transform: MergeTransform, builder: DagBuilder, index: int) -> None:
    """A merge is one ``merge`` vertex with an input per merged stage."""
    vertex = builder.addVertex(transform.name, IdentityP(), transform.localParallelism)
    builder.addEdges(index, vertex)
    builder.setExit(index, vertex)


@lowerStage.register
def lowerCustom(transform: CustomTransform, builder: DagBuilder, index: int) -> None:
    """The user's processors in one vertex; keyed: behind a distributed partitioned edge."""
    addOneVertex(builder, index, transform.processorSupplier, transform.keyFn)


@lowerStage.register
def lowerService(transform: ServiceTransform, builder: DagBuilder, index: int) -> None:
    """A map, filter or flat-map using a service is one vertex (not fused); keyed, behind a
    distributed partitioned edge."""
    supplier = ServiceP(transform.kind, transform.serviceFactory, transform.fn, stageName(transform), transform.keyFn)
    addOneVertex(builder, index, supplier, transform.keyFn, KEYED_SERVICE)


@lowerStage.register
def lowerAsyncService(transform: AsyncServiceTransform, builder: DagBuilder, index: int) -> None:
    """``mapUsingServiceAsync`` is one vertex (not fused); keyed, behind a distributed partitioned edge."""
    supplier = AsyncServiceP(
        transform.serviceFactory, transform.fn, transform.maxConcurrentOps, transform.preserveOrder,
        stageName(transform), transform.keyFn, transform.maxBatchSize,
    )
    addOneVertex(builder, index, supplier, transform.keyFn, KEYED_SERVICE)


KEYED_SERVICE = "a keyed service: each key's items go to one processor's service (distributed partitioned)"
"""Why a keyed service's vertex has a distributed partitioned input, as the plan says."""


def addOneVertex(
    builder: DagBuilder, index: int, supplier: Callable, keyFn: Callable | None, keyedReason: str | None = None
) -> None:
    """Add stage ``index``'s one vertex: with a key, behind a distributed partitioned edge, each
    key's items reaching one processor (``keyedReason``, if given, saying so in the plan), as
    Jet's partitioned services do; without, as ``orderKept`` places it."""
    transform = builder.graph.transforms[index]
    if keyFn is None:
        parallelism, customize = builder.orderKept(index, transform.localParallelism)
    else:
        parallelism, customize = transform.localParallelism, lambda e: e.distributed().partitioned(keyFn)
        if keyedReason is not None:
            builder.addReason(keyedReason)
    vertex = builder.addVertex(transform.name, supplier, parallelism)
    builder.addEdges(index, vertex, customize)
    builder.setExit(index, vertex)
