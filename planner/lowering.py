"""Lowering: each pipeline stage becomes Core DAG vertices and edges, one function per kind,
registered with ``@lowerStage.register``. ``lowerToDag`` returns the DAG with each vertex's role
and the reason for each choice between one vertex and two. How to add a stage kind:
docs/internals/core-dag-on-spark.md, "Adding a kind of stage"."""

import functools
import operator
from collections.abc import Callable, Mapping

import attrs

from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.errors import DagError, StageName
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.event_time_policy import (
    EventTimePolicy,
    ingestionTimestamp,
    limitingLag,
    limitingRealTimeLag,
)
from sparkjet.coredag.model.jet_dot import PREPARE_SUFFIX
from sparkjet.coredag.model.jet_event import AccumulatePayload, OnPayload, eventTimestamp, jetEvent
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex
from sparkjet.coredag.model.window_result import KeyedWindowResult, TimestampedAtEnd, windowResult
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)
from sparkjet.coredag.processors.async_service import AsyncServiceP
from sparkjet.coredag.processors.built_stream_source import BuiltStreamP
from sparkjet.coredag.processors.coaggregation import TaggedInputP
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from sparkjet.coredag.processors.join import HashJoinCollectP, HashJoinP
from sparkjet.coredag.processors.keyed import DistinctP, GlobalKey, MapStatefulP, RollingAggregateP, StatefulKind
from sparkjet.coredag.processors.peeking import ItemLogger, peeking
from sparkjet.coredag.processors.service import ServiceP
from sparkjet.coredag.processors.session_window import SessionWindowP
from sparkjet.coredag.processors.sinks import (
    AssertionSinkP,
    DataFrameSinkP,
    FilesSinkP,
    JsonFilesSinkP,
    ListSinkP,
    LoggerSinkP,
    NoopSinkP,
)
from sparkjet.coredag.processors.sliding_window import (
    accumulateByFrameP,
    aggregateToSlidingWindowP,
    combineToSlidingWindowP,
    frameResultKey,
)
from sparkjet.coredag.processors.sorting import SortP
from sparkjet.coredag.processors.sources import DataFrameSourceP, ItemsP, ReadFilesP, ReadJsonP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind
from sparkjet.coredag.processors.stream_sources import FileWatcherP, FiniteStreamP, ItemStreamP, SocketP, StreamSourceP
from sparkjet.coredag.processors.transform_stateful import EvictedEvents, TransformStatefulP
from sparkjet.pipeline.assertions import AssertionSink
from sparkjet.pipeline.batch_sources import (
    BatchSource,
    DataFrameSource,
    FilesSource,
    ItemsSource,
    JsonSource,
    ProcessorBatchSource,
)
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.sinks import (
    DataFrameSink,
    FilesSink,
    JsonSink,
    ListSink,
    LoggerSink,
    NoopSink,
    ProcessorSink,
    Sink,
)
from sparkjet.pipeline.source_builder import BuiltStreamSource
from sparkjet.pipeline.stream_sources import (
    FileWatcherSource,
    FiniteStreamSource,
    ItemStreamSource,
    SocketSource,
    StreamSource,
)
from sparkjet.pipeline.transforms import (
    AggregateTransform,
    AsyncServiceTransform,
    CustomTransform,
    DistinctTransform,
    EventTime,
    GroupTransform,
    HashJoinTransform,
    MapStatefulTransform,
    MergeTransform,
    Peek,
    RollingAggregateTransform,
    ServiceTransform,
    SinkTransform,
    SortTransform,
    SourceTransform,
    StatefulStreamTransform,
    StatelessTransform,
    StreamSourceTransform,
    TimestampKind,
    TimestampTransform,
    Transform,
    WindowAggregateTransform,
)
from sparkjet.pipeline.window_definition import SessionWindowDefinition
from sparkjet.planner.errors import PlanningError
from sparkjet.planner.fusion import FusedTransform
from sparkjet.planner.watermark_stride import watermarkStride

EdgeCustomizer = Callable[[Edge], Edge]
COLLECT_SUFFIX = "-collect"
_entryKey = operator.itemgetter(0)


@attrs.frozen
class VertexRole:
    """What a vertex runs: pipeline stages (several when fused; none for a vertex added by
    hand), whole or one step of them (``prepare``, ``collect``, ``joiner``, ``collector1``)."""

    stages: tuple[str, ...]
    step: str | None = None


NO_STAGE = VertexRole(())
"""The role of a vertex that lowering did not make: it runs no stage of the pipeline."""


@attrs.frozen
class LoweredDag:
    """What lowering made: the DAG, each vertex's role by vertex name, and the reason for each
    choice it made between one vertex and two, in the order of the stages."""

    dag: DAG
    roles: Mapping[str, VertexRole]
    reasons: tuple[str, ...]


class DagBuilder:
    """The vertices and edges lowered so far, the stage being lowered (``current``) and the
    stage that made each vertex and its role, the vertex each stage emits from, the next free
    outbound ordinal of each vertex, and the reasons given so far."""

    def __init__(self, graph: PipelineGraph) -> None:
        self.graph = graph
        self.current: Transform | None = None
        self._vertices: dict[str, Vertex] = {}
        self._madeBy: dict[str, Transform] = {}
        self._roles: dict[str, VertexRole] = {}
        self._reasons: list[str] = []
        self._edges: list[Edge] = []
        self._exits: dict[int, Vertex] = {}
        self._nextOrdinal: dict[str, int] = {}

    def addVertex(
        self, name: str, supplier, localParallelism: int, step: str | None = None,
        stages: tuple[str, ...] | None = None,
    ) -> Vertex:
        """Add a vertex running ``step`` of the stage being lowered (the whole stage if None),
        or of ``stages`` (a fused chain's) if given, and return it."""
        vertex = Vertex(name, supplier, localParallelism, definedAt=self.current.definedAt)
        if name in self._vertices:
            raise DagError(
                f"Vertex {name} is already defined. {self.current.describe()} and "
                f"{self._madeBy[name].describe()} both need a vertex named '{name}'; "
                "rename one of them with setName()"
            )
        self._vertices[name] = vertex
        self._madeBy[name] = self.current
        self._roles[name] = VertexRole(stages or (self.current.name,), step)
        return vertex

    def addReason(self, reason: str) -> None:
        """Record why the stage being lowered got the vertices it got."""
        self._reasons.append(f"`{self.current.name}`: {reason}")

    def setExit(self, index: int, vertex: Vertex, logsItsPeek: bool = False) -> None:
        """Record ``vertex`` as the one stage ``index`` emits from; a peeked stage's vertex
        logs what it emits (unless its steps already do: ``logsItsPeek``)."""
        transform = self.graph.transforms[index]
        if transform.peek is not None and not logsItsPeek:
            logger = itemLogger(transform.name, transform.peek)
            vertex = attrs.evolve(vertex, processorSupplier=peeking(vertex.processorSupplier, logger))
            self._vertices[vertex.name] = vertex
        self._exits[index] = vertex

    def emittingStage(self, index: int) -> str:
        """Return the name of the stage whose items stage ``index`` emits: the last of a fused chain."""
        return self._roles[self._exits[index].name].stages[-1]

    def build(self) -> LoweredDag:
        """Return the DAG of everything added, checked edge by edge, with roles and reasons;
        each edge joins the final vertices of its names (``setExit`` replaces a peeked one)."""
        dag = DAG()
        for vertex in self._vertices.values():
            dag.vertex(vertex)
        for edge in self._edges:
            source, destination = self._vertices[edge.sourceName], self._vertices[edge.destName]
            dag.edge(attrs.evolve(edge, source=source, destination=destination))
        return LoweredDag(dag, dict(self._roles), tuple(self._reasons))

    def addEdges(self, index: int, vertex: Vertex, customize: EdgeCustomizer = lambda e: e) -> None:
        """Connect the stages feeding stage ``index`` to ``vertex``, at ordinals 0, 1, ...;
        a rebalanced input becomes distributed (and partitioned by its key, if it has one)."""
        transform = self.graph.transforms[index]
        for destOrdinal, upstream in enumerate(self.graph.upstream[index]):
            edge = rebalanced(self.edgeFrom(upstream).to(vertex, destOrdinal), transform)
            self.addEdge(customize(edge))

    def upstreamParallelism(self, index: int) -> int:
        """Return the parallelism of the vertex stage ``index``'s first input comes from, as planned."""
        return self._exits[self.graph.upstream[index][0]].localParallelism

    def orderKept(self, index: int, localParallelism: int) -> tuple[int, EdgeCustomizer]:
        """Return the parallelism and the input edges of unkeyed stateless stage ``index``: where
        the pipeline preserves order, as Jet's planner gives them, its upstream's parallelism
        (the lower of both where it has its own) behind isolated edges (a rebalanced input stays
        distributed), so each upstream processor's items reach one processor in their order."""
        if not self.graph.preserveOrder:
            return localParallelism, lambda e: e
        upstreams = [self._exits[up].localParallelism for up in self.graph.upstream[index]]
        upstream = min((p for p in upstreams if p > 0), default=LOCAL_PARALLELISM_USE_DEFAULT)
        if upstream != LOCAL_PARALLELISM_USE_DEFAULT:
            localParallelism = upstream if localParallelism <= 0 else min(upstream, localParallelism)
        self.addReason("the pipeline preserves order: its upstream's parallelism, behind isolated edges")
        return localParallelism, lambda e: e if e.isDistributed else e.isolated()

    def edgeFrom(self, upstream: int) -> Edge:
        """Return a half-built edge from the next free ordinal of stage ``upstream``'s vertex."""
        source = self._exits[upstream]
        return Edge.from_(source, self._nextOrdinal.get(source.name, 0))

    def addEdge(self, edge: Edge) -> None:
        """Add an edge, counting its source ordinal as used."""
        self._nextOrdinal[edge.sourceName] = max(self._nextOrdinal.get(edge.sourceName, 0), edge.sourceOrdinal + 1)
        self._edges.append(edge)


def itemLogger(stageName: str, peek: Peek) -> ItemLogger:
    """Return the per-item logger of a peeked stage."""
    return ItemLogger(stageName, peek.shouldLogFn, peek.toStringFn)


def rebalanced(edge: Edge, transform: Transform) -> Edge:
    """Apply ``rebalance()`` of the destination's input: distributed, maybe partitioned."""
    rebalancing = transform.rebalancing(edge.destOrdinal)
    if rebalancing is None:
        return edge
    edge = edge.distributed()
    return edge.partitioned(rebalancing.keyFn) if rebalancing.keyFn else edge


def lowerToDag(graph: PipelineGraph) -> LoweredDag:
    """Lower every stage, in creation order, into one Core DAG with each vertex's role:
    ``source -> fused(map, filter) -> count -> sink`` becomes ``source -> fused(map, filter)
    -> count-prepare -> count -> sink``, ``count-prepare`` the prepare step of ``count``."""
    builder = DagBuilder(graph)
    for index, transform in enumerate(graph.transforms):
        builder.current = transform
        lowerStage(transform, builder, index)
    return builder.build()


@functools.singledispatch
def lowerStage(transform: Transform, builder: DagBuilder, index: int) -> None:
    """Add the vertices and edges of stage ``index``; one registered function per kind (a
    subclass of a kind is lowered as that kind)."""
    kind = type(transform)
    raise PlanningError(
        f"Unknown transform: kind '{kind.__module__}.{kind.__qualname__}' of "
        f"{transform.describe()} has no lowering; register one with "
        "@sparkjet.planner.lowering.lowerStage.register"
    )


def stageName(transform: Transform) -> StageName:
    """Return the name a stage's processors report in errors, knowing where it was defined."""
    return StageName(transform.name, transform.definedAt)


@lowerStage.register
def lowerSource(transform: SourceTransform, builder: DagBuilder, index: int) -> None:
    """A source is one vertex with no input."""
    supplier = sourceSupplier(transform.source)
    parallelism = transform.localParallelism
    parallelism = parallelism if parallelism > 0 else transform.source.preferredLocalParallelism
    builder.setExit(index, builder.addVertex(transform.name, supplier, parallelism))


@functools.singledispatch
def sourceSupplier(source: BatchSource) -> StandardProcessorSupplier:
    """Return the processors reading ``source``; one registered function per kind of source."""
    raise PlanningError(f"Unknown source: '{type(source).__qualname__}' ({source.name}) has no processors")


sourceSupplier.register(FilesSource, lambda source: ReadFilesP(source.directory, source.glob, source.charset))
sourceSupplier.register(JsonSource, lambda source: ReadJsonP(source.directory, source.glob, source.charset))
sourceSupplier.register(DataFrameSource, lambda source: DataFrameSourceP(source.dataFrame))
sourceSupplier.register(ItemsSource, lambda source: ItemsP(source.items))
sourceSupplier.register(ProcessorBatchSource, lambda source: source.processorSupplier)


@lowerStage.register
def lowerStreamSource(transform: StreamSourceTransform, builder: DagBuilder, index: int) -> None:
    """A stream source is one vertex reading Spark's stream; with event time, Jet's
    ``<source>-add-timestamps`` inserts watermarks behind an isolated edge, at its parallelism
    (Spark's reader cannot emit watermarks itself, so a source with native timestamps has it too).

    Its parallelism is 1 unless the stage sets it, as for Jet's non-distributed sources: Spark
    deals a micro-batch's rows to the processors anew each time, so a processor is no stable
    source partition, and one that got no rows would hold every watermark back."""
    eventTime = transform.eventTime
    native = eventTime is not None and eventTime.kind is TimestampKind.NATIVE
    supplier = streamSourceSupplier(transform.source, transform.name, native)
    parallelism = transform.localParallelism if transform.localParallelism > 0 else 1
    source = builder.addVertex(transform.name, supplier, parallelism)
    if eventTime is None or eventTime.kind is TimestampKind.NONE:
        builder.setExit(index, source)
        return
    policy = _sourceEventTimePolicy(eventTime, transform.source.partitionIdleTimeout, watermarkStride(builder.graph))
    stamping = builder.addVertex(f"{transform.name}-add-timestamps", InsertWatermarksP(policy), parallelism)
    builder.addEdge(Edge.between(source, stamping).isolated())
    builder.setExit(index, stamping)


def _sourceEventTimePolicy(eventTime: EventTime, idleTimeout: int, stride: int) -> EventTimePolicy:
    """Return Jet's policy for a stream source stage's choice of event time, its watermarks
    throttled to the pipeline's ``stride``."""
    if eventTime.kind is TimestampKind.NATIVE:
        return EventTimePolicy(eventTimestamp, limitingLag(eventTime.allowedLag), stride, 0, idleTimeout)
    if eventTime.kind is TimestampKind.INGESTION:
        return EventTimePolicy(ingestionTimestamp, limitingRealTimeLag(0), stride, 0, idleTimeout, wrapFn=jetEvent)
    return EventTimePolicy(
        eventTime.timestampFn, limitingLag(eventTime.allowedLag), stride, 0, idleTimeout, wrapFn=jetEvent
    )


@functools.singledispatch
def streamSourceSupplier(source: StreamSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    """Return the processors reading stream ``source``; one registered function per kind."""
    raise PlanningError(f"Unknown stream source: '{type(source).__qualname__}' ({source.name}) has no processors")


@streamSourceSupplier.register
def _fileWatcher(source: FileWatcherSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    return FileWatcherP(
        source.directory, source.glob, source.charset, ignoreMissingFiles=source.ignoreMissingFiles,
        maxLineBytes=source.maxLineBytes, sourceId=sourceId,
    )


@streamSourceSupplier.register
def _socket(source: SocketSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    return SocketP(source.host, source.port, sourceId=sourceId)


@streamSourceSupplier.register
def _itemStream(source: ItemStreamSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    return ItemStreamP(
        source.itemsPerSecond, source.generatorFn, source.initialDelayMillis, sourceId=sourceId,
        nativeTimestamps=nativeTimestamps,
    )


@streamSourceSupplier.register
def _builtStream(source: BuiltStreamSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    return BuiltStreamP(
        source.createFn, source.fillBufferFn, source.destroyFn, source.supportsNativeTimestamps,
        createSnapshotFn=source.createSnapshotFn, restoreSnapshotFn=source.restoreSnapshotFn,
        sourceId=sourceId, nativeTimestamps=nativeTimestamps,
    )


@streamSourceSupplier.register
def _finiteStream(source: FiniteStreamSource, sourceId: str, nativeTimestamps: bool) -> StreamSourceP:
    return FiniteStreamP(source.events, source.itemsPerBatch, sourceId=sourceId, nativeTimestamps=nativeTimestamps)


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


def multiInput(supplier: StandardProcessorSupplier, inputCount: int) -> StandardProcessorSupplier:
    """A co-aggregation's first vertex folds ``(ordinal, item)`` pairs of all its inputs."""
    return TaggedInputP(supplier) if inputCount > 1 else supplier


@lowerStage.register
def lowerSink(transform: SinkTransform, builder: DagBuilder, index: int) -> None:
    """A sink is one vertex; list, logger and noop sinks default to parallelism 1, as in Jet."""
    supplier, defaultParallelism = sinkSupplier(transform.sink)
    parallelism = transform.localParallelism
    vertex = builder.addVertex(
        transform.name, supplier, parallelism if parallelism > 0 else defaultParallelism
    )
    builder.addEdges(index, vertex)


@functools.singledispatch
def sinkSupplier(sink: Sink) -> tuple[StandardProcessorSupplier, int]:
    """Return the processors writing to ``sink`` and their default local parallelism; one
    registered function per kind of sink."""
    raise PlanningError(f"Unknown sink: '{type(sink).__qualname__}' ({sink.name}) has no processors")


sinkSupplier.register(ListSink, lambda sink: (ListSinkP(sink.listName), 1))
sinkSupplier.register(LoggerSink, lambda sink: (LoggerSinkP(), 1))
sinkSupplier.register(FilesSink, lambda sink: (FilesSinkP(sink.directory), LOCAL_PARALLELISM_USE_DEFAULT))
sinkSupplier.register(
    JsonSink, lambda sink: (JsonFilesSinkP(sink.directory, sink.nonFiniteAsNull), LOCAL_PARALLELISM_USE_DEFAULT)
)
sinkSupplier.register(
    DataFrameSink, lambda sink: (DataFrameSinkP(sink.dataFrameName, sink.schema), LOCAL_PARALLELISM_USE_DEFAULT)
)
sinkSupplier.register(NoopSink, lambda sink: (NoopSinkP(), 1))
sinkSupplier.register(AssertionSink, lambda sink: (AssertionSinkP(sink.check), 1))
sinkSupplier.register(ProcessorSink, lambda sink: (sink.processorSupplier, sink.preferredLocalParallelism))


@lowerStage.register
def lowerMerge(transform: MergeTransform, builder: DagBuilder, index: int) -> None:
    """A merge is one ``merge`` vertex with an input per merged stage."""
    vertex = builder.addVertex(transform.name, IdentityP(), transform.localParallelism)
    builder.addEdges(index, vertex)
    builder.setExit(index, vertex)


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


@lowerStage.register
def lowerHashJoin(transform: HashJoinTransform, builder: DagBuilder, index: int) -> None:
    """Each joined stage -(distributed broadcast)-> ``<name>-collector<i>`` (parallelism 1)
    -(broadcast, priority -1)-> ``<name>-joiner``, which gets the primary stage at ordinal 0."""
    name, label, clauses = transform.name, stageName(transform), transform.clauses
    joiner = builder.addVertex(
        f"{name}-joiner",
        HashJoinP(tuple(c.leftKeyFn for c in clauses), transform.mapFn, transform.inner, transform.matchesByTag, label),
        transform.localParallelism,
        "joiner",
    )
    primary, *sides = builder.graph.upstream[index]
    builder.addEdge(rebalanced(builder.edgeFrom(primary).to(joiner, 0), transform))
    for ordinal, (side, clause) in enumerate(zip(sides, clauses), start=1):
        sideName = builder.emittingStage(side)
        supplier = HashJoinCollectP(clause.rightKeyFn, clause.rightProjectFn, label, sideName, clause.broadcastLimit)
        collector = builder.addVertex(f"{name}-collector{ordinal}", supplier, 1, f"collector{ordinal}")
        builder.addEdge(builder.edgeFrom(side).to(collector).distributed().broadcast())
        builder.addEdge(Edge.from_(collector).to(joiner, ordinal).broadcast().priority(-1))
    builder.setExit(index, joiner)


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
