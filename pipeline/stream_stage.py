"""Stream stages: items of a stream source or with an event time after ``addTimestamps``, and
the windows they aggregate into, with Jet's API (``StreamStage``, ``StreamStageWithKey``,
``StageWithWindow``, ``StageWithKeyAndWindow``).

A timestamped stage's items travel as ``JetEvent``s (the item and its timestamp); the functions
a user gives see the item alone, as Jet's function adapter arranges. Over a bounded source the
stream ends with its input and every window is emitted."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.jet_event import (
    AsyncBatchMappedEvents,
    AsyncMappedEvent,
    FlatMappedEvent,
    MappedEvent,
    OnPayload,
)
from sparkjet.coredag.model.window_result import windowResult
from sparkjet.coredag.processors.async_service import DEFAULT_MAX_CONCURRENT_OPS, DEFAULT_PRESERVE_ORDER
from sparkjet.coredag.processors.coaggregation import coAggregateOperation
from sparkjet.coredag.processors.keyed import AccumulatorHolder, RollingAccumulation, StatefulKind
from sparkjet.pipeline.aggregate_operations import AggregateOperations
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkAggregateOperation, checkFunction, wholeItem
from sparkjet.pipeline.habits import notASink
from sparkjet.pipeline.sinks import Sink
from sparkjet.pipeline.stage import (
    AggregateBuilder,
    AggregateBuilder1,
    BatchStage,
    BatchStageWithKey,
    HashJoinBuilder,
    SinkStage,
    Stage,
    attachFedBy,
)
from sparkjet.pipeline.transforms import (
    FilterTransform,
    FlatMapTransform,
    JoinClause,
    MapTransform,
    Rebalancing,
    SinkTransform,
    StatefulStreamTransform,
    TimestampTransform,
    Transform,
    WindowAggregateTransform,
)
from sparkjet.pipeline.window_definition import SessionWindowDefinition, SlidingWindowDefinition


@attrs.frozen
class StreamStage(Stage):
    """A stage of a stream; where its items have an event time (``timestamped``), ``window``
    groups them into windows."""

    timestamped: bool = True
    rebalancing: Rebalancing | None = None

    def map(self, mapFn: Callable) -> "StreamStage":
        """Map each item with ``mapFn``, keeping its timestamp; a None result drops the item."""
        checkFunction(mapFn, "map", "mapFn")
        return self._attach(MapTransform("map", self._onEvent(MappedEvent, mapFn, 0)))

    def filter(self, filterFn: Callable) -> "StreamStage":
        """Keep the items for which ``filterFn`` returns true."""
        checkFunction(filterFn, "filter", "filterFn")
        return self._attach(FilterTransform("filter", self._onEvent(OnPayload, filterFn, 0)))

    def flatMap(self, flatMapFn: Callable) -> "StreamStage":
        """Map each item to the items of ``flatMapFn(item)``, each with the item's timestamp."""
        checkFunction(flatMapFn, "flat-map", "flatMapFn")
        return self._attach(FlatMapTransform("flat-map", self._onEvent(FlatMappedEvent, flatMapFn, 0)))

    def addTimestamps(self, timestampFn: Callable, allowedLag: int) -> "StreamStage":
        """Give each item of a stream without event time the time ``timestampFn(item)``,
        watermarks lagging ``allowedLag`` behind the top timestamp."""
        if self.timestamped:
            raise PipelineError(f"{self.describe()}: This stage already has timestamps assigned to it")
        return timestamped(self, timestampFn, allowedLag)

    def groupingKey(self, keyFn: Callable) -> "StreamStageWithKey":
        """Return a view of this stage whose windows and state work per ``keyFn(item)``."""
        checkFunction(keyFn, self.name(), "keyFn")
        return StreamStageWithKey(self, keyFn)

    def window(self, windowDefinition) -> "StageWithWindow":
        """Return this stage's items grouped into windows of ``windowDefinition``."""
        return StageWithWindow(self, _checkedWindow(windowDefinition, self))

    def rebalance(self, keyFn: Callable | None = None) -> "StreamStage":
        """Spread this stage's items over the cluster before the next stage: round-robin, or
        partitioned by ``keyFn(item)``; the next stage is not fused with this one."""
        if keyFn is not None:
            checkFunction(keyFn, self.name(), "keyFn")
        return attrs.evolve(self, rebalancing=Rebalancing(keyFn and self._onEvent(OnPayload, keyFn, 0)))

    def peek(self, shouldLogFn: Callable | None = None, toStringFn: Callable | None = None) -> "StreamStage":
        """Log the items this stage emits (those ``shouldLogFn`` accepts, as ``toStringFn``
        renders them; without their timestamps) on the worker, at INFO. Return this stage."""
        if self.timestamped:
            shouldLogFn = shouldLogFn and OnPayload(shouldLogFn)
            toStringFn = OnPayload(toStringFn or str)
        self._asBatch().peek(shouldLogFn, toStringFn)
        return self

    def merge(self, other: "StreamStage") -> "StreamStage":
        """Emit the items of this stream and of ``other``, a stream with event time if this one
        has it (Jet's rule: the merged stages both have timestamps, or neither has)."""
        kind = "a timestamped stream stage" if self.timestamped else "a stream stage without timestamps"
        if not isinstance(other, StreamStage):
            raise PipelineError(f"{self.describe()}: merge() takes {kind}, got {_describeStage(other)}")
        if other.timestamped != self.timestamped:
            untimed = other if self.timestamped else self
            msg = (
                f"{self.describe()}: The merged stages must either both have or both not have timestamp "
                f"definitions: merge() takes {kind}, got {other.describe()}; give {untimed.describe()} "
                "timestamps first, with addTimestamps(timestampFn, allowedLag)"
            )
            raise PipelineError(msg)
        return self._fromBatch(self._asBatch().merge(other._asBatch()))

    def mapStateful(self, createFn: Callable, mapFn: Callable) -> "StreamStage":
        """Map each item with ``mapFn(state, item)``, one state made by ``createFn()`` for all
        items, kept for as long as the job runs (so one processor runs it, as in Jet); a None
        result drops the item."""
        return self._stateful("map-stateful-global", StatefulKind.MAP, createFn, mapFn, "mapFn")

    def filterStateful(self, createFn: Callable, filterFn: Callable) -> "StreamStage":
        """Keep the items for which ``filterFn(state, item)`` is true, one state for all items."""
        return self._stateful("map-stateful-global", StatefulKind.FILTER, createFn, filterFn, "filterFn")

    def flatMapStateful(self, createFn: Callable, flatMapFn: Callable) -> "StreamStage":
        """Emit every item of the iterable ``flatMapFn(state, item)``, one state for all items."""
        return self._stateful("flatmap-stateful-global", StatefulKind.FLAT_MAP, createFn, flatMapFn, "flatMapFn")

    def rollingAggregate(self, aggrOp: AggregateOperation) -> "StreamStage":
        """Emit, for each item, the result so far of aggregating every item (one processor)."""
        return rollingAggregate(self, None, aggrOp)

    def _stateful(self, name: str, kind: StatefulKind, createFn: Callable, fn: Callable, parameter: str) -> "StreamStage":
        checkFunction(createFn, name, "createFn")
        checkFunction(fn, name, parameter)
        return attachStateful(self, StatefulStreamTransform(name, None, createFn, fn, kind, passesKey=False))

    def mapUsingService(self, serviceFactory: ServiceFactory, mapFn: Callable) -> "StreamStage":
        """Map each item with ``mapFn(service, item)``; a None result drops the item."""
        checkFunction(mapFn, "mapUsingService", "mapFn")
        return self._fromBatch(self._asBatch().mapUsingService(serviceFactory, self._onEvent(MappedEvent, mapFn, -1)))

    def filterUsingService(self, serviceFactory: ServiceFactory, filterFn: Callable) -> "StreamStage":
        """Keep the items for which ``filterFn(service, item)`` is true."""
        checkFunction(filterFn, "filterUsingService", "filterFn")
        return self._fromBatch(self._asBatch().filterUsingService(serviceFactory, self._onEvent(OnPayload, filterFn, -1)))

    def flatMapUsingService(self, serviceFactory: ServiceFactory, flatMapFn: Callable) -> "StreamStage":
        """Map each item to the items of ``flatMapFn(service, item)``."""
        checkFunction(flatMapFn, "flatMapUsingService", "flatMapFn")
        adapted = self._onEvent(FlatMappedEvent, flatMapFn, -1)
        return self._fromBatch(self._asBatch().flatMapUsingService(serviceFactory, adapted))

    def mapUsingServiceAsync(
        self, serviceFactory: ServiceFactory, mapAsyncFn: Callable, *,
        maxConcurrentOps: int = DEFAULT_MAX_CONCURRENT_OPS, preserveOrder: bool = DEFAULT_PRESERVE_ORDER,
    ) -> "StreamStage":
        """Map each item with ``mapAsyncFn(service, item)``, which returns an awaitable or a
        ``concurrent.futures.Future``, as ``BatchStage.mapUsingServiceAsync`` does; each result
        keeps its item's timestamp, and watermarks wait behind the calls before them."""
        checkFunction(mapAsyncFn, "mapUsingServiceAsync", "mapAsyncFn")
        adapted = self._onEvent(AsyncMappedEvent, mapAsyncFn, -1)
        return self._fromBatch(self._asBatch().mapUsingServiceAsync(
            serviceFactory, adapted, maxConcurrentOps=maxConcurrentOps, preserveOrder=preserveOrder
        ))

    def mapUsingServiceAsyncBatched(
        self, serviceFactory: ServiceFactory, maxBatchSize: int, mapAsyncFn: Callable
    ) -> "StreamStage":
        """Map lists of up to ``maxBatchSize`` items with ``mapAsyncFn(service, items)``, as
        ``BatchStage.mapUsingServiceAsyncBatched`` does; each result keeps its item's timestamp,
        and watermarks wait behind the calls before them."""
        checkFunction(mapAsyncFn, "mapUsingServiceAsyncBatched", "mapAsyncFn")
        adapted = self._onEvent(AsyncBatchMappedEvents, mapAsyncFn, -1)
        return self._fromBatch(self._asBatch().mapUsingServiceAsyncBatched(serviceFactory, maxBatchSize, adapted))

    def customTransform(self, name: str, processorSupplier: Callable) -> "StreamStage":
        """Run your own processors, named ``name``, on this stage's items; on a stream with event
        time they take and emit ``JetEvent`` items and get its watermarks, as Jet's do."""
        return self._fromBatch(self._asBatch().customTransform(name, processorSupplier))

    def hashJoin(self, other: BatchStage, clause: JoinClause, mapFn: Callable) -> "StreamStage":
        """Emit ``mapFn(item, match)`` for every match in the batch stage ``other`` (``None`` if
        none); ``other`` is read when the job starts a micro-batch, as a hash table every joiner holds."""
        return self._hashJoin((other,), (clause,), mapFn, inner=False)

    def innerHashJoin(self, other: BatchStage, clause: JoinClause, mapFn: Callable) -> "StreamStage":
        """Emit ``mapFn(item, match)`` for every match in the batch stage ``other``; unmatched items drop."""
        return self._hashJoin((other,), (clause,), mapFn, inner=True)

    def hashJoin2(
        self, stage1: BatchStage, clause1: JoinClause, stage2: BatchStage, clause2: JoinClause, mapFn: Callable
    ) -> "StreamStage":
        """Emit ``mapFn(item, match1, match2)`` for every pair of matches (``None`` if none)."""
        return self._hashJoin((stage1, stage2), (clause1, clause2), mapFn, inner=False)

    def innerHashJoin2(
        self, stage1: BatchStage, clause1: JoinClause, stage2: BatchStage, clause2: JoinClause, mapFn: Callable
    ) -> "StreamStage":
        """Emit ``mapFn(item, match1, match2)`` for every pair of matches; others drop."""
        return self._hashJoin((stage1, stage2), (clause1, clause2), mapFn, inner=True)

    def hashJoinBuilder(self) -> HashJoinBuilder:
        """Return a builder joining this stream with any number of batch stages by tag."""
        return HashJoinBuilder(self)

    def _hashJoin(self, others, clauses, mapFn, inner, matchesByTag: bool = False) -> "StreamStage":
        streams = [_describeStage(other) for other in others if not isinstance(other, BatchStage)]
        if streams:
            raise PipelineError(f"{self.describe()}: a stream joins batch stages only, got {', '.join(streams)}")
        checkFunction(mapFn, "hash-join", "mapFn")
        if self.timestamped:
            clauses = tuple(attrs.evolve(clause, leftKeyFn=OnPayload(clause.leftKeyFn)) for clause in clauses)
            mapFn = MappedEvent(mapFn)
        return self._fromBatch(self._asBatch()._hashJoin(others, clauses, mapFn, inner, matchesByTag))

    def apply(self, transformFn: Callable[["StreamStage"], "StreamStage"]) -> "StreamStage":
        """Return ``transformFn(self)``: a reusable piece of pipeline, or an ``Assertions`` check."""
        return transformFn(self)

    def writeTo(self, sink: Sink) -> SinkStage:
        """Send every item to ``sink``, which writes it without its timestamp."""
        if not isinstance(sink, Sink):
            raise notASink(sink, self.describe())
        return SinkStage(self.pipeline, attachFedBy(SinkTransform(sink.name, sink), (self,)))

    def _onEvent(self, adapter: Callable, fn: Callable, position: int) -> Callable:
        """Return ``fn`` as it runs on this stage's items: adapted to see an event's item where
        the stage has event time (the event is its argument at ``position``)."""
        return adapter(fn, position) if self.timestamped else fn

    def _asBatch(self) -> BatchStage:
        return BatchStage(self.pipeline, self.index, self.rebalancing)

    def _fromBatch(self, stage: BatchStage) -> "StreamStage":
        return StreamStage(stage.pipeline, stage.index, self.timestamped)

    def _attach(self, transform: Transform) -> "StreamStage":
        return StreamStage(self.pipeline, attachFedBy(transform, (self,)), self.timestamped)


def attachStateful(stage: StreamStage, transform: StatefulStreamTransform) -> StreamStage:
    """Attach a stateful stage after ``stage``, its functions adapted to events where it has event time."""
    if transform.ttl and not stage.timestamped:
        raise PipelineError(f"{transform.describe()}: Cannot use time-to-live on a non-timestamped stream")
    if stage.timestamped:
        adapter = {StatefulKind.MAP: MappedEvent, StatefulKind.FILTER: OnPayload, StatefulKind.FLAT_MAP: FlatMappedEvent}
        transform = attrs.evolve(transform, fn=adapter[transform.kind](transform.fn, -1))
        if transform.keyFn is not None:
            transform = attrs.evolve(transform, keyFn=OnPayload(transform.keyFn))
    return stage._attach(transform)


def rollingAggregate(stage: StreamStage, keyFn: Callable | None, aggrOp: AggregateOperation) -> StreamStage:
    """Attach Jet's rolling aggregation of a stream: a stateful map holding each key's accumulator."""
    name = "rolling-aggregate"
    checkAggregateOperation(aggrOp, name)
    accumulation = RollingAccumulation(aggrOp, emitsKey=keyFn is not None)
    transform = StatefulStreamTransform(name, keyFn, AccumulatorHolder(aggrOp), accumulation, passesKey=True)
    return attachStateful(stage, transform)


def _describeStage(stage: object) -> str:
    return stage.describe() if isinstance(stage, Stage) else type(stage).__name__


def timestamped(stage: Stage, timestampFn: Callable, allowedLag: int) -> StreamStage:
    """Return the ``add-timestamps`` stage after ``stage``: its items get the event time
    ``timestampFn(item)``, watermarks lagging ``allowedLag`` behind the top timestamp."""
    transform = TimestampTransform("add-timestamps", timestampFn, checkedLag(stage, allowedLag))
    checkFunction(timestampFn, transform.name, "timestampFn")
    index = attachFedBy(transform, (stage,)) if isinstance(stage, BatchStage) else stage.pipeline.attach(transform, (stage.index,))
    return StreamStage(stage.pipeline, index)


def checkedLag(stage: Stage, allowedLag: int) -> int:
    """Return ``allowedLag`` if it is a lag (0 or more); else raise naming ``stage``."""
    if isinstance(allowedLag, bool) or not isinstance(allowedLag, int) or allowedLag < 0:
        raise PipelineError(f"{stage.describe()}: the allowed lag must be 0 or more, got {allowedLag!r}")
    return allowedLag


@attrs.frozen
class StreamStageWithKey:
    """A stream stage with a grouping key."""

    stage: StreamStage
    keyFn: Callable

    def window(self, windowDefinition) -> "StageWithKeyAndWindow":
        """Return this stage's items grouped into windows of ``windowDefinition`` per key."""
        return StageWithKeyAndWindow(self.stage, _checkedWindow(windowDefinition, self.stage), self.keyFn)

    def mapStateful(self, *arguments) -> StreamStage:
        """Jet's two forms: ``mapStateful(createFn, mapFn)`` maps each item with ``mapFn(state,
        key, item)``, a state per key made by ``createFn()`` (a None result drops the item);
        ``mapStateful(ttl, createFn, mapFn, onEvictFn)`` evicts a key's state once the watermark
        passes its last event by more than ``ttl`` ms, emitting ``onEvictFn(state, key, watermark)``
        (None: nothing) then."""
        return self._stateful("map-stateful-keyed", StatefulKind.MAP, arguments, ("mapFn", "onEvictFn"))

    def filterStateful(self, *arguments) -> StreamStage:
        """Keep the items for which ``filterFn(state, item)`` is true, a state per key:
        ``filterStateful(createFn, filterFn)`` or ``filterStateful(ttl, createFn, filterFn)``."""
        return self._stateful("map-stateful-keyed", StatefulKind.FILTER, arguments, ("filterFn",))

    def flatMapStateful(self, *arguments) -> StreamStage:
        """Emit every item of ``flatMapFn(state, key, item)``, a state per key:
        ``flatMapStateful(createFn, flatMapFn)`` or ``flatMapStateful(ttl, createFn, flatMapFn,
        onEvictFn)``, where ``onEvictFn(state, key, watermark)`` returns the items to emit."""
        return self._stateful("flatmap-stateful-keyed", StatefulKind.FLAT_MAP, arguments, ("flatMapFn", "onEvictFn"))

    def rollingAggregate(self, aggrOp: AggregateOperation) -> StreamStage:
        """Emit, for each item, ``(key, result so far)`` of its key's aggregation."""
        return rollingAggregate(self.stage, self.keyFn, aggrOp)

    def mapUsingService(self, serviceFactory: ServiceFactory, mapFn: Callable) -> StreamStage:
        """Map each item with ``mapFn(service, key, item)``, each key's items meeting one service."""
        return self._usingService("mapUsingService", serviceFactory, mapFn, MappedEvent, "mapFn")

    def filterUsingService(self, serviceFactory: ServiceFactory, filterFn: Callable) -> StreamStage:
        """Keep the items for which ``filterFn(service, key, item)`` is true."""
        return self._usingService("filterUsingService", serviceFactory, filterFn, OnPayload, "filterFn")

    def flatMapUsingService(self, serviceFactory: ServiceFactory, flatMapFn: Callable) -> StreamStage:
        """Map each item to the items of ``flatMapFn(service, key, item)``."""
        return self._usingService("flatMapUsingService", serviceFactory, flatMapFn, FlatMappedEvent, "flatMapFn")

    def mapUsingServiceAsync(
        self, serviceFactory: ServiceFactory, mapAsyncFn: Callable, *,
        maxConcurrentOps: int = DEFAULT_MAX_CONCURRENT_OPS, preserveOrder: bool = DEFAULT_PRESERVE_ORDER,
    ) -> StreamStage:
        """Map each item with ``mapAsyncFn(service, key, item)``, a future per item, each key's
        items meeting one service."""
        checkFunction(mapAsyncFn, "mapUsingPartitionedServiceAsync", "mapAsyncFn")
        adapted = self.stage._onEvent(AsyncMappedEvent, mapAsyncFn, -1)
        return self.stage._fromBatch(self._asBatchWithKey().mapUsingServiceAsync(
            serviceFactory, adapted, maxConcurrentOps=maxConcurrentOps, preserveOrder=preserveOrder
        ))

    def mapUsingServiceAsyncBatched(
        self, serviceFactory: ServiceFactory, maxBatchSize: int, mapAsyncFn: Callable
    ) -> StreamStage:
        """Map lists of up to ``maxBatchSize`` items with ``mapAsyncFn(service, keys, items)``,
        each result keeping its item's timestamp, each key's items meeting one service."""
        checkFunction(mapAsyncFn, "mapUsingPartitionedServiceAsyncBatched", "mapAsyncFn")
        adapted = self.stage._onEvent(AsyncBatchMappedEvents, mapAsyncFn, -1)
        return self.stage._fromBatch(
            self._asBatchWithKey().mapUsingServiceAsyncBatched(serviceFactory, maxBatchSize, adapted)
        )

    def customTransform(self, name: str, processorSupplier: Callable) -> StreamStage:
        """Run your own processors, each key's items all reaching the same processor."""
        return self.stage._fromBatch(self._asBatchWithKey().customTransform(name, processorSupplier))

    def _usingService(self, method: str, serviceFactory, fn: Callable, adapter: Callable, parameter: str) -> StreamStage:
        checkFunction(fn, method, parameter)
        batch = getattr(self._asBatchWithKey(), method)(serviceFactory, self.stage._onEvent(adapter, fn, -1))
        return self.stage._fromBatch(batch)

    def _asBatchWithKey(self) -> BatchStageWithKey:
        stage = self.stage
        return BatchStageWithKey(stage.pipeline, stage.index, stage._onEvent(OnPayload, self.keyFn, 0), stage.rebalancing)

    def _stateful(self, name: str, kind: StatefulKind, arguments: tuple, parameters: tuple[str, ...]) -> StreamStage:
        ttl, createFn, fn, onEvictFn = _statefulArguments(self.stage, name, arguments, parameters)
        checkFunction(createFn, name, "createFn")
        checkFunction(fn, name, parameters[0])
        if onEvictFn is not None:
            checkFunction(onEvictFn, name, "onEvictFn")
        transform = StatefulStreamTransform(
            name, self.keyFn, createFn, fn, kind, passesKey=kind is not StatefulKind.FILTER, ttl=ttl, onEvictFn=onEvictFn
        )
        return attachStateful(self.stage, transform)


def _statefulArguments(stage: StreamStage, name: str, arguments: tuple, parameters: tuple[str, ...]) -> tuple:
    """Return ``(ttl, createFn, fn, onEvictFn)`` of a keyed stateful stage's two forms."""
    short = ("createFn", parameters[0])
    long = ("ttl", "createFn", *parameters)
    if len(arguments) == len(short) and not isinstance(arguments[0], int):
        return (0, *arguments, None)
    if len(arguments) == len(long) and isinstance(arguments[0], int) and not isinstance(arguments[0], bool):
        if arguments[0] < 0:
            raise PipelineError(f"{stage.describe()}: {name}'s ttl must be 0 or more milliseconds, got {arguments[0]}")
        return (*arguments, None) if len(long) == 3 else tuple(arguments)
    raise PipelineError(
        f"{stage.describe()}: {name} takes ({', '.join(short)}) or ({', '.join(long)}), "
        f"got {len(arguments)} argument(s)"
    )


@attrs.frozen
class WindowedAggregations:
    """What a stream stage's windows aggregate into, alone or with other streams' items in the
    same windows (Jet's ``aggregate2``, ``aggregate3``, ``aggregateBuilder``), and ``distinct``."""

    stage: StreamStage
    windowDefinition: SlidingWindowDefinition | SessionWindowDefinition

    def aggregate(self, aggrOp: AggregateOperation) -> StreamStage:
        """Aggregate each window's items (per key, where keyed) into one result."""
        return self._coAggregateWith((self,), aggrOp)

    def aggregate2(self, first, second, aggrOp1: AggregateOperation | None = None) -> StreamStage:
        """Jet's two forms: ``aggregate2(aggrOp0, stage1, aggrOp1)``, each stream's items in a
        window aggregated by its operation, the result ``(r0, r1)``; ``aggregate2(stage1, aggrOp2)``,
        one operation of two inputs (``AggregateOperations.aggregateOperation2``)."""
        if aggrOp1 is None:
            return self._coAggregateWith((self, first), second)
        return self._coAggregate((self, second), (first, aggrOp1))

    def aggregate3(self, first, second, third, stage2=None, aggrOp2: AggregateOperation | None = None) -> StreamStage:
        """Jet's two forms: ``aggregate3(aggrOp0, stage1, aggrOp1, stage2, aggrOp2)``, the result
        ``(r0, r1, r2)``; ``aggregate3(stage1, stage2, aggrOp3)``, one operation of three inputs."""
        if stage2 is None:
            return self._coAggregateWith((self, first, second), third)
        return self._coAggregate((self, second, stage2), (first, third, aggrOp2))

    def aggregateBuilder(self, aggrOp0: AggregateOperation | None = None):
        """Return a builder aggregating this stage's windows with any number of other streams'
        items in the same windows (see ``BatchStage.aggregateBuilder``)."""
        return AggregateBuilder(self, aggrOp0) if aggrOp0 is not None else AggregateBuilder1(self)

    def distinct(self) -> StreamStage:
        """Emit, per window, one item of each key as ``KeyedWindowResult(start, end, key, item)``;
        where not keyed, each distinct item as ``WindowResult(start, end, item)``, as Jet's do."""
        if not isinstance(self, StageWithKeyAndWindow):
            keyed = self.groupingKey(wholeItem())
            return _windowAggregate((keyed,), self.windowDefinition, AggregateOperations.pickAny(), windowResult)
        return _windowAggregate((self,), self.windowDefinition, AggregateOperations.pickAny())

    def _coAggregate(self, stages: tuple, operations: tuple, outputFn: Callable = tuple) -> StreamStage:
        for aggrOp in operations:
            checkAggregateOperation(aggrOp, _windowStageName(self.windowDefinition))
        return self._coAggregateWith(stages, coAggregateOperation(tuple(operations), outputFn))

    def _coAggregateWith(self, stages: tuple, aggrOp: AggregateOperation) -> StreamStage:
        return _windowAggregate(stages, self.windowDefinition, aggrOp)


@attrs.frozen
class StageWithWindow(WindowedAggregations):
    """A stream stage's items in windows; ``aggregate`` emits a ``WindowResult(start, end,
    result, isEarly)`` per window."""

    def groupingKey(self, keyFn: Callable) -> "StageWithKeyAndWindow":
        """Return the windows per ``keyFn(item)``."""
        checkFunction(keyFn, self.stage.name(), "keyFn")
        return StageWithKeyAndWindow(self.stage, self.windowDefinition, keyFn)


@attrs.frozen
class StageWithKeyAndWindow(WindowedAggregations):
    """A stream stage's items in windows per key; ``aggregate`` emits a
    ``KeyedWindowResult(start, end, key, result, isEarly)`` per key and window."""

    keyFn: Callable


def _streamAndKey(stage: object, keyed: bool, windowName: str) -> tuple[StreamStage, Callable | None]:
    """Return the stream and key function of one input of a window aggregation: a windowed
    stage, or a stream stage (keyed where the windows are)."""
    if isinstance(stage, WindowedAggregations):
        return stage.stage, getattr(stage, "keyFn", None)
    if keyed and isinstance(stage, StreamStageWithKey):
        return stage.stage, stage.keyFn
    if not keyed and isinstance(stage, StreamStage):
        return stage, None
    wanted = "a stream stage with a grouping key (groupingKey)" if keyed else "a stream stage without a grouping key"
    raise PipelineError(f"Stage '{windowName}': its windows are {'' if keyed else 'not '}keyed, so each input is {wanted}, got {_describeStage(stage)}")


def _windowStageName(windowDefinition) -> str:
    return "session-window" if isinstance(windowDefinition, SessionWindowDefinition) else "sliding-window"


def _windowAggregate(
    stages: tuple, windowDefinition, aggrOp: AggregateOperation, outputFn: Callable | None = None
) -> StreamStage:
    """Attach the window aggregation of ``stages`` (the windowed stage first, then any other
    stream's) with one operation of as many inputs."""
    name = _windowStageName(windowDefinition)
    checkAggregateOperation(aggrOp, name, arity=len(stages))
    keyed = isinstance(stages[0], StageWithKeyAndWindow)
    inputs = [_streamAndKey(stage, keyed, name) for stage in stages]
    for stream, _ in inputs[1:]:
        _checkedWindow(windowDefinition, stream)
    keyFns = tuple(keyFn for _, keyFn in inputs) if keyed else ()
    transform = WindowAggregateTransform(name, windowDefinition, aggrOp, keyFns, outputFn)
    streams = tuple(stream for stream, _ in inputs)
    return StreamStage(streams[0].pipeline, attachFedBy(transform, streams))


def _checkedWindow(windowDefinition, stage: StreamStage):
    if not stage.timestamped:
        raise PipelineError(
            f"{stage.describe()}: window() needs event time, and this stream has none: choose "
            "withTimestamps, withNativeTimestamps or withIngestionTimestamps on its source, or addTimestamps"
        )
    if not isinstance(windowDefinition, SlidingWindowDefinition | SessionWindowDefinition):
        raise PipelineError(
            f"{stage.describe()}: window() takes a WindowDefinition (tumbling, sliding or session), "
            f"got {type(windowDefinition).__name__}"
        )
    return windowDefinition
