"""Lowering the stages that keep state per key: ``mapStateful`` and the like, in a batch and in a
stream, and ``rollingAggregate``, each one vertex behind a distributed partitioned edge."""

from collections.abc import Callable

from sparkjet.coredag.processors.keyed import GlobalKey, MapStatefulP, RollingAggregateP, StatefulKind
from sparkjet.coredag.processors.transform_stateful import EvictedEvents, TransformStatefulP
from sparkjet.pipeline.transforms import MapStatefulTransform, RollingAggregateTransform, StatefulStreamTransform
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage, stageName


@lowerStage.register
def lowerMapStateful(transform: MapStatefulTransform, builder: DagBuilder, index: int) -> None:
    """``mapStateful``, ``filterStateful``, ``flatMapStateful``: one vertex behind a distributed
    partitioned edge (global state: one processor)."""
    keyFn = transform.keyFn or GlobalKey()
    supplier = MapStatefulP(
        keyFn, transform.createFn, transform.fn, stageName(transform), transform.kind, transform.passesKey
    )
    addKeyedVertex(builder, index, supplier, keyFn)


@lowerStage.register
def lowerRollingAggregate(transform: RollingAggregateTransform, builder: DagBuilder, index: int) -> None:
    """``rollingAggregate``: one vertex behind a distributed partitioned edge (global: one processor)."""
    keyFn = transform.keyFn or GlobalKey()
    supplier = RollingAggregateP(keyFn, transform.aggrOp, stageName(transform), emitsKey=transform.keyFn is not None)
    addKeyedVertex(builder, index, supplier, keyFn)


@lowerStage.register
def lowerStatefulStream(transform: StatefulStreamTransform, builder: DagBuilder, index: int) -> None:
    """A stream's ``mapStateful`` and the like: Jet's ``TransformStatefulP``, one vertex behind a
    distributed partitioned edge, whose states live across micro-batches (global: one processor)."""
    keyFn = transform.keyFn or GlobalKey()
    step = MapStatefulP(keyFn, transform.createFn, transform.fn, stageName(transform), transform.kind, transform.passesKey)
    onEvict = None
    if transform.onEvictFn is not None:
        onEvict = EvictedEvents(transform.onEvictFn, flat=transform.kind is StatefulKind.FLAT_MAP)
    addKeyedVertex(builder, index, TransformStatefulP(step, transform.ttl, onEvict), keyFn)


def addKeyedVertex(builder: DagBuilder, index: int, supplier: Callable, keyFn: Callable) -> None:
    """Add stage ``index``'s one vertex, each input distributed and partitioned by ``keyFn``; a
    stage's global state (``GlobalKey``) lives in one processor, as in Jet."""
    transform = builder.graph.transforms[index]
    parallelism = transform.localParallelism
    if isinstance(keyFn, GlobalKey):
        parallelism = 1
        builder.addReason("one state for all items, so one processor (parallelism 1) gets every item, as in Jet")
    vertex = builder.addVertex(transform.name, supplier, parallelism)
    builder.addEdges(index, vertex, lambda e: e.distributed().partitioned(keyFn))
    builder.setExit(index, vertex)
