"""Lowering: each pipeline stage becomes Core DAG vertices and edges, one function per kind."""

import operator
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.errors import DagError, StageName
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import PREPARE_SUFFIX
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex
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
from sparkjet.coredag.processors.join import HashJoinCollectP, HashJoinP
from sparkjet.coredag.processors.keyed import DistinctP, MapStatefulP, RollingAggregateP
from sparkjet.coredag.processors.peeking import ItemLogger, peeking
from sparkjet.coredag.processors.service import ServiceP
from sparkjet.coredag.processors.sinks import (
    DataFrameSinkP,
    FilesSinkP,
    JsonFilesSinkP,
    ListSinkP,
    LoggerSinkP,
    NoopSinkP,
)
from sparkjet.coredag.processors.sorting import SortP
from sparkjet.coredag.processors.sources import DataFrameSourceP, ItemsP, ReadFilesP, ReadJsonP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.sinks import DataFrameSink, FilesSink, JsonSink, ListSink, LoggerSink, NoopSink
from sparkjet.pipeline.sources import DataFrameSource, FilesSource, ItemsSource, JsonSource
from sparkjet.pipeline.transforms import (
    AggregateTransform,
    CustomTransform,
    DistinctTransform,
    FilterTransform,
    FlatMapTransform,
    GroupTransform,
    HashJoinTransform,
    MapStatefulTransform,
    MapTransform,
    MergeTransform,
    Peek,
    RollingAggregateTransform,
    ServiceTransform,
    SinkTransform,
    SortTransform,
    SourceTransform,
    Transform,
)
from sparkjet.planner.fusion import STATELESS, FusedTransform

EdgeCustomizer = Callable[[Edge], Edge]
COLLECT_SUFFIX = "-collect"
_entryKey = operator.itemgetter(0)


class DagBuilder:
    """The vertices and edges lowered so far, the stage being lowered (``current``) and the
    stage that made each vertex, the vertex each stage emits from, and the next free outbound
    ordinal of each vertex."""

    def __init__(self, graph: PipelineGraph) -> None:
        self.graph = graph
        self.current: Transform | None = None
        self._vertices: dict[str, Vertex] = {}
        self._madeBy: dict[str, Transform] = {}
        self._edges: list[Edge] = []
        self._exits: dict[int, Vertex] = {}
        self._nextOrdinal: dict[str, int] = {}

    def addVertex(self, name: str, supplier, localParallelism: int) -> Vertex:
        """Add a vertex of the stage being lowered and return it."""
        vertex = Vertex(name, supplier, localParallelism, definedAt=self.current.definedAt)
        if name in self._vertices:
            raise DagError(
                f"Vertex {name} is already defined. {self.current.describe()} and "
                f"{self._madeBy[name].describe()} both need a vertex named '{name}'; "
                "rename one of them with setName()"
            )
        self._vertices[name] = vertex
        self._madeBy[name] = self.current
        return vertex

    def setExit(self, index: int, vertex: Vertex) -> None:
        """Record ``vertex`` as the one stage ``index`` emits from; a peeked stage's vertex
        logs what it emits."""
        transform = self.graph.transforms[index]
        if transform.peek is not None and not isinstance(transform, (*STATELESS, FusedTransform)):
            logger = itemLogger(transform.name, transform.peek)
            vertex = attrs.evolve(vertex, processorSupplier=peeking(vertex.processorSupplier, logger))
            self._vertices[vertex.name] = vertex
        self._exits[index] = vertex

    def build(self) -> DAG:
        """Return the DAG of everything added, checked edge by edge."""
        dag = DAG()
        for vertex in self._vertices.values():
            dag.vertex(vertex)
        for edge in self._edges:
            dag.edge(edge)
        return dag

    def addEdges(self, index: int, vertex: Vertex, customize: EdgeCustomizer = lambda e: e) -> None:
        """Connect the stages feeding stage ``index`` to ``vertex``, at ordinals 0, 1, ...;
        a rebalanced input becomes distributed (and partitioned by its key, if it has one)."""
        transform = self.graph.transforms[index]
        for destOrdinal, upstream in enumerate(self.graph.upstream[index]):
            edge = rebalanced(self.edgeFrom(upstream).to(vertex, destOrdinal), transform)
            self.addEdge(customize(edge))

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


def lowerToDag(graph: PipelineGraph) -> DAG:
    """Lower every stage, in creation order, into one Core DAG."""
    builder = DagBuilder(graph)
    for index, transform in enumerate(graph.transforms):
        builder.current = transform
        _LOWERINGS[type(transform)](builder, index, transform)
    return builder.build()


def stageName(transform: Transform) -> StageName:
    """Return the name a stage's processors report in errors, knowing where it was defined."""
    return StageName(transform.name, transform.definedAt)


def lowerSource(builder: DagBuilder, index: int, transform: SourceTransform) -> None:
    """A source is one vertex with no input."""
    supplier = _SOURCE_SUPPLIERS[type(transform.source)](transform.source)
    builder.setExit(index, builder.addVertex(transform.name, supplier, transform.localParallelism))


def statelessSteps(transform: Transform) -> tuple[StatelessStep, ...]:
    """Return the steps that run one map, filter or flat-map stage, and its peek if any."""
    label = stageName(transform)
    if isinstance(transform, MapTransform):
        step = StatelessStep(StepKind.MAP, transform.mapFn, label)
    elif isinstance(transform, FilterTransform):
        step = StatelessStep(StepKind.FILTER, transform.filterFn, label)
    else:
        step = StatelessStep(StepKind.FLAT_MAP, transform.flatMapFn, label)
    if transform.peek is None:
        return (step,)
    return step, StatelessStep(StepKind.PEEK, itemLogger(transform.name, transform.peek), label)


def lowerStateless(builder: DagBuilder, index: int, transform: Transform) -> None:
    """A map, filter or flat-map stage, or a fused chain of them, is one vertex."""
    stages = transform.stages if isinstance(transform, FusedTransform) else (transform,)
    supplier = StatelessChainP(tuple(step for stage in stages for step in statelessSteps(stage)))
    vertex = builder.addVertex(transform.name, supplier, transform.localParallelism)
    builder.addEdges(index, vertex)
    builder.setExit(index, vertex)


def lowerGroup(builder: DagBuilder, index: int, transform: GroupTransform) -> None:
    """``group-and-aggregate-prepare`` -(distributed partitioned)-> ``group-and-aggregate``;
    one distributed partitioned stage when the operation has no combine or after rebalance().
    Co-grouping takes each input partitioned by its own key."""
    name, label, op, keyFn = transform.name, stageName(transform), transform.aggrOp, transform.keyFn
    parallelism, inputs = transform.localParallelism, len(builder.graph.upstream[index])
    inputKey = (lambda e: transform.inputKeyFns[e.destOrdinal]) if transform.inputKeyFns else (lambda e: keyFn)
    if op.combineFn is None or any(map(transform.rebalancing, range(inputs))):
        vertex = builder.addVertex(name, multiInput(AggregateByKeyP(keyFn, op, label), inputs), parallelism)
        builder.addEdges(index, vertex, lambda e: e.distributed().partitioned(inputKey(e)))
    else:
        prepare = builder.addVertex(
            name + PREPARE_SUFFIX, multiInput(AccumulateByKeyP(keyFn, op, label), inputs), parallelism
        )
        vertex = builder.addVertex(name, CombineByKeyP(op, label), parallelism)
        builder.addEdges(index, prepare, lambda e: e.partitioned(inputKey(e)))
        builder.addEdge(Edge.between(prepare, vertex).distributed().partitioned(_entryKey))
    builder.setExit(index, vertex)


def lowerAggregate(builder: DagBuilder, index: int, transform: AggregateTransform) -> None:
    """``aggregate-prepare`` -(distributed all-to-one)-> ``aggregate`` (parallelism 1);
    one all-to-one stage when the operation has no combine."""
    name, label, op = transform.name, stageName(transform), transform.aggrOp
    inputs = len(builder.graph.upstream[index])
    if op.combineFn is None:
        vertex = builder.addVertex(name, multiInput(AggregateP(op, label), inputs), 1)
        builder.addEdges(index, vertex, lambda e: e.distributed().allToOne(name))
    else:
        prepare = builder.addVertex(
            name + PREPARE_SUFFIX, multiInput(AccumulateP(op, label), inputs), transform.localParallelism
        )
        vertex = builder.addVertex(name, CombineP(op, label), 1)
        builder.addEdges(index, prepare)
        builder.addEdge(Edge.between(prepare, vertex).distributed().allToOne(name))
    builder.setExit(index, vertex)


def multiInput(supplier: StandardProcessorSupplier, inputCount: int) -> StandardProcessorSupplier:
    """A co-aggregation's first vertex folds ``(ordinal, item)`` pairs of all its inputs."""
    return TaggedInputP(supplier) if inputCount > 1 else supplier


def lowerSink(builder: DagBuilder, index: int, transform: SinkTransform) -> None:
    """A sink is one vertex; list, logger and noop sinks default to parallelism 1, as in Jet."""
    supplier, defaultParallelism = _SINK_SUPPLIERS[type(transform.sink)](transform.sink)
    parallelism = transform.localParallelism
    vertex = builder.addVertex(
        transform.name, supplier, parallelism if parallelism > 0 else defaultParallelism
    )
    builder.addEdges(index, vertex)


_SOURCE_SUPPLIERS = {
    FilesSource: lambda source: ReadFilesP(source.directory, source.glob, source.charset),
    JsonSource: lambda source: ReadJsonP(source.directory, source.glob, source.charset),
    DataFrameSource: lambda source: DataFrameSourceP(source.dataFrame),
    ItemsSource: lambda source: ItemsP(source.items),
}

_SINK_SUPPLIERS = {
    ListSink: lambda sink: (ListSinkP(sink.listName), 1),
    LoggerSink: lambda sink: (LoggerSinkP(), 1),
    FilesSink: lambda sink: (FilesSinkP(sink.directory), LOCAL_PARALLELISM_USE_DEFAULT),
    JsonSink: lambda sink: (JsonFilesSinkP(sink.directory, sink.nonFiniteAsNull), LOCAL_PARALLELISM_USE_DEFAULT),
    DataFrameSink: lambda sink: (DataFrameSinkP(sink.dataFrameName, sink.schema), LOCAL_PARALLELISM_USE_DEFAULT),
    NoopSink: lambda sink: (NoopSinkP(), 1),
}


def lowerMerge(builder: DagBuilder, index: int, transform: MergeTransform) -> None:
    """A merge is one ``merge`` vertex with an input per merged stage."""
    vertex = builder.addVertex(transform.name, IdentityP(), transform.localParallelism)
    builder.addEdges(index, vertex)
    builder.setExit(index, vertex)


def lowerDistinct(builder: DagBuilder, index: int, transform: DistinctTransform) -> None:
    """``distinct-prepare`` (local partitioned in) -(distributed partitioned)-> ``distinct``."""
    name, keyFn, parallelism = transform.name, transform.keyFn, transform.localParallelism
    label = stageName(transform)
    prepare = builder.addVertex(name + PREPARE_SUFFIX, DistinctP(keyFn, label, isPrepare=True), parallelism)
    vertex = builder.addVertex(name, DistinctP(keyFn, label), parallelism)
    builder.addEdges(index, prepare, lambda e: e.partitioned(keyFn))
    builder.addEdge(Edge.between(prepare, vertex).distributed().partitioned(keyFn))
    builder.setExit(index, vertex)


def lowerSort(builder: DagBuilder, index: int, transform: SortTransform) -> None:
    """``sort`` (each partition) -(distributed all-to-one, ordered)-> ``sort-collect`` (1)."""
    name, keyFn, reverse = transform.name, transform.keyFn, transform.reverse
    sort = builder.addVertex(name, SortP(keyFn, reverse, stageName(transform)), transform.localParallelism)
    collect = builder.addVertex(name + COLLECT_SUFFIX, IdentityP(), 1)
    builder.addEdges(index, sort)
    builder.addEdge(Edge.between(sort, collect).distributed().allToOne(name).ordered(keyFn, reverse))
    builder.setExit(index, collect)


def lowerHashJoin(builder: DagBuilder, index: int, transform: HashJoinTransform) -> None:
    """Each joined stage -(distributed broadcast)-> ``<name>-collector<i>`` (parallelism 1)
    -(broadcast, priority -1)-> ``<name>-joiner``, which gets the primary stage at ordinal 0."""
    name, label, clauses = transform.name, stageName(transform), transform.clauses
    joiner = builder.addVertex(
        f"{name}-joiner",
        HashJoinP(tuple(c.leftKeyFn for c in clauses), transform.mapFn, transform.inner, transform.matchesByTag, label),
        transform.localParallelism,
    )
    primary, *sides = builder.graph.upstream[index]
    builder.addEdge(rebalanced(builder.edgeFrom(primary).to(joiner, 0), transform))
    for ordinal, (side, clause) in enumerate(zip(sides, clauses), start=1):
        sideName = emittingStageName(builder.graph.transforms[side])
        supplier = HashJoinCollectP(clause.rightKeyFn, clause.rightProjectFn, label, sideName, clause.broadcastLimit)
        collector = builder.addVertex(f"{name}-collector{ordinal}", supplier, 1)
        builder.addEdge(builder.edgeFrom(side).to(collector).distributed().broadcast())
        builder.addEdge(Edge.from_(collector).to(joiner, ordinal).broadcast().priority(-1))
    builder.setExit(index, joiner)


def emittingStageName(transform: Transform) -> str:
    """Return the name of the stage whose items ``transform`` emits: the last of a fused chain."""
    return transform.stages[-1].name if isinstance(transform, FusedTransform) else transform.name


def lowerCustom(builder: DagBuilder, index: int, transform: CustomTransform) -> None:
    """The user's processors in one vertex; keyed: behind a distributed partitioned edge."""
    vertex = builder.addVertex(transform.name, transform.processorSupplier, transform.localParallelism)
    keyFn = transform.keyFn
    builder.addEdges(index, vertex, (lambda e: e.distributed().partitioned(keyFn)) if keyFn else (lambda e: e))
    builder.setExit(index, vertex)


def lowerService(builder: DagBuilder, index: int, transform: ServiceTransform) -> None:
    """A map, filter or flat-map using a service is one vertex (not fused)."""
    supplier = ServiceP(transform.kind, transform.serviceFactory, transform.fn, stageName(transform))
    vertex = builder.addVertex(transform.name, supplier, transform.localParallelism)
    builder.addEdges(index, vertex)
    builder.setExit(index, vertex)


def lowerKeyedStep(builder: DagBuilder, index: int, transform: Transform) -> None:
    """``mapStateful`` and ``rollingAggregate``: one vertex behind a distributed partitioned edge."""
    if isinstance(transform, MapStatefulTransform):
        supplier = MapStatefulP(transform.keyFn, transform.createFn, transform.mapFn, stageName(transform))
    else:
        supplier = RollingAggregateP(transform.keyFn, transform.aggrOp, stageName(transform))
    vertex = builder.addVertex(transform.name, supplier, transform.localParallelism)
    builder.addEdges(index, vertex, lambda e: e.distributed().partitioned(transform.keyFn))
    builder.setExit(index, vertex)


_LOWERINGS = {
    SourceTransform: lowerSource,
    MapTransform: lowerStateless,
    FilterTransform: lowerStateless,
    FlatMapTransform: lowerStateless,
    FusedTransform: lowerStateless,
    GroupTransform: lowerGroup,
    AggregateTransform: lowerAggregate,
    SinkTransform: lowerSink,
    MergeTransform: lowerMerge,
    DistinctTransform: lowerDistinct,
    SortTransform: lowerSort,
    HashJoinTransform: lowerHashJoin,
    CustomTransform: lowerCustom,
    ServiceTransform: lowerService,
    MapStatefulTransform: lowerKeyedStep,
    RollingAggregateTransform: lowerKeyedStep,
}
