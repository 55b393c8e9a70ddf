"""Stage handles: immutable views of a pipeline transform, with Jet's fluent API."""

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.tags import ItemsByTag, Tag
from sparkjet.coredag.processors.async_service import (
    DEFAULT_MAX_CONCURRENT_OPS,
    DEFAULT_PRESERVE_ORDER,
    MAX_CONCURRENT_ASYNC_BATCHES,
)
from sparkjet.coredag.processors.coaggregation import TaggedKey, coAggregateOperation
from sparkjet.coredag.processors.keyed import StatefulKind
from sparkjet.pipeline.comparators import ComparatorEx, sortKeyOf
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import (
    acceptsOneArgument,
    checkAggregateOperation,
    checkFunction,
    checkPicklable,
    wholeItem,
)
from sparkjet.pipeline.habits import habitError, notASink
from sparkjet.pipeline.sinks import Sink
from sparkjet.pipeline.transforms import (
    LOCAL_PARALLELISM_USE_DEFAULT,
    AggregateTransform,
    AsyncServiceTransform,
    CustomTransform,
    DistinctTransform,
    FilterTransform,
    FlatMapTransform,
    GroupTransform,
    HashJoinTransform,
    JoinClause,
    MapStatefulTransform,
    MapTransform,
    MergeTransform,
    Peek,
    Rebalancing,
    RollingAggregateTransform,
    ServiceTransform,
    SinkTransform,
    SortTransform,
    Transform,
)

if TYPE_CHECKING:
    from sparkjet.pipeline.pipeline import Pipeline
    from sparkjet.pipeline.stream_stage import StreamStage


@attrs.frozen
class Stage:
    """A transform of a pipeline, by its index; ``setName`` and the like change the pipeline."""

    pipeline: "Pipeline" = attrs.field(repr=False)
    index: int

    def name(self) -> str:
        """Return the stage's name."""
        return self.pipeline.transformAt(self.index).name

    def __getattr__(self, name: str):
        raise habitError(self, name)

    def describe(self) -> str:
        """Return how errors name the stage: ``Stage 'map' (defined at wordcount.py:12)``."""
        return self.pipeline.transformAt(self.index).describe()

    def setName(self, name: str):
        """Name the stage (vertex names and errors use it); return this stage."""
        if not name:
            raise PipelineError(f"{self.describe()}: setName needs a non-empty name")
        if "\x00" in name:
            raise PipelineError(f"{self.describe()}: setName({name!r}): a name cannot hold the NUL character, which DOT cannot write")
        self.pipeline.update(self.index, lambda t: attrs.evolve(t, name=name))
        return self

    def setLocalParallelism(self, localParallelism: int):
        """Set how many processors run the stage (-1: the default); return this stage."""
        if localParallelism != LOCAL_PARALLELISM_USE_DEFAULT and localParallelism <= 0:
            raise PipelineError(
                f"{self.describe()}: Parallelism must be either -1 or a positive number, "
                f"got {localParallelism}"
            )
        self.pipeline.update(
            self.index, lambda t: attrs.evolve(t, localParallelism=localParallelism)
        )
        return self


@attrs.frozen
class BatchStage(Stage):
    """A stage emitting a finite stream of items."""

    rebalancing: Rebalancing | None = None

    def rebalance(self, keyFn: Callable | None = None) -> "BatchStage":
        """Spread this stage's items over the cluster before the next stage: round-robin,
        or partitioned by ``keyFn``; the next stage is not fused with this one."""
        if keyFn is not None:
            checkFunction(keyFn, self.name(), "keyFn")
        return attrs.evolve(self, rebalancing=Rebalancing(keyFn))

    def peek(self, shouldLogFn: Callable | None = None, toStringFn: Callable | None = None) -> "BatchStage":
        """Log the items this stage emits (those ``shouldLogFn`` accepts, as ``toStringFn``
        renders them) on the worker, at INFO; adds no vertex. Return this stage. Refused right
        after ``rebalance()``, as Jet refuses it."""
        if self.rebalancing is not None:
            msg = (
                f"{self.describe()}: peek() not supported after rebalance(), as in Jet; "
                "call peek() before rebalance(): stage.peek().rebalance()"
            )
            raise PipelineError(msg)
        checkPicklable((shouldLogFn, toStringFn), self.name(), "shouldLogFn and toStringFn")
        self.pipeline.update(self.index, lambda t: attrs.evolve(t, peek=Peek(shouldLogFn, toStringFn)))
        return self

    def map(self, mapFn: Callable) -> "BatchStage":
        """Map each item with ``mapFn``; a None result drops the item."""
        return self._attach(MapTransform("map", mapFn), mapFn, "mapFn")

    def filter(self, filterFn: Callable) -> "BatchStage":
        """Keep the items for which ``filterFn`` returns true."""
        return self._attach(FilterTransform("filter", filterFn), filterFn, "filterFn")

    def flatMap(self, flatMapFn: Callable) -> "BatchStage":
        """Map each item to the items of the iterable ``flatMapFn`` returns."""
        return self._attach(FlatMapTransform("flat-map", flatMapFn), flatMapFn, "flatMapFn")

    def groupingKey(self, keyFn: Callable) -> "BatchStageWithKey":
        """Return a view of this stage whose aggregations work per ``keyFn(item)``."""
        checkFunction(keyFn, self.name(), "keyFn")
        return BatchStageWithKey(self.pipeline, self.index, keyFn, self.rebalancing)

    def aggregate(self, aggrOp: AggregateOperation) -> "BatchStage":
        """Aggregate all items into one result."""
        transform = AggregateTransform("aggregate", aggrOp)
        checkAggregateOperation(aggrOp, transform.name)
        return BatchStage(self.pipeline, self.attachDownstream(transform))

    def aggregate2(self, first, second, aggrOp1: AggregateOperation | None = None) -> "BatchStage":
        """Jet's two forms: ``aggregate2(aggrOp0, stage1, aggrOp1)`` emits ``(r0, r1)``;
        ``aggregate2(stage1, aggrOp2)`` aggregates both stages with one two-input operation
        (see ``AggregateOperations.aggregateOperation2``) and emits its result."""
        if aggrOp1 is None:
            return self._coAggregateWith((self, first), second)
        return self._coAggregate((self, second), (first, aggrOp1))

    def aggregate3(self, first, second, third, stage2=None, aggrOp2: AggregateOperation | None = None) -> "BatchStage":
        """Jet's two forms: ``aggregate3(aggrOp0, stage1, aggrOp1, stage2, aggrOp2)`` emits
        ``(r0, r1, r2)``; ``aggregate3(stage1, stage2, aggrOp3)`` aggregates the three stages with
        one three-input operation and emits its result."""
        if stage2 is None:
            return self._coAggregateWith((self, first, second), third)
        return self._coAggregate((self, second, stage2), (first, third, aggrOp2))

    def aggregateBuilder(self, aggrOp0: AggregateOperation | None = None):
        """Return a builder co-aggregating this stage with any number of others: with
        ``aggrOp0``, each stage gets its operation (``add(stage, aggrOp)`` returns the tag of its
        result); without, ``add(stage)`` returns the stage's input tag and ``build(aggrOp)`` takes
        one operation of that many inputs (``AggregateOperations.coAggregateOperationBuilder``)."""
        return AggregateBuilder(self, aggrOp0) if aggrOp0 is not None else AggregateBuilder1(self)

    def _coAggregate(self, stages, operations, outputFn: Callable = tuple) -> "BatchStage":
        name = f"{len(stages)}-way co-aggregate"
        for aggrOp in operations:
            checkAggregateOperation(aggrOp, name)
        return self._coAggregateWith(stages, coAggregateOperation(tuple(operations), outputFn))

    def _coAggregateWith(self, stages, aggrOp: AggregateOperation) -> "BatchStage":
        name = f"{len(stages)}-way co-aggregate"
        checkAggregateOperation(aggrOp, name, arity=len(stages))
        return BatchStage(self.pipeline, attachFedBy(AggregateTransform(name, aggrOp), tuple(stages)))

    def writeTo(self, sink: Sink) -> "SinkStage":
        """Send every item to ``sink``."""
        if not isinstance(sink, Sink):
            raise notASink(sink, self.describe())
        return SinkStage(self.pipeline, self.attachDownstream(SinkTransform(sink.name, sink)))

    def merge(self, other: "BatchStage") -> "BatchStage":
        """Emit the items of this stage and of ``other``."""
        return BatchStage(self.pipeline, attachFedBy(MergeTransform("merge"), (self, other)))

    def distinct(self) -> "BatchStage":
        """Emit each distinct item once."""
        return self.groupingKey(wholeItem()).distinct()

    def sort(
        self, key: "Callable | ComparatorEx | None" = None, reverse: bool = False, *, comparator: Callable | None = None
    ) -> "BatchStage":
        """Emit all items in one total order: by ``key(item)``, by ``comparator(a, b)`` (a
        ``ComparatorEx``, given first as in Jet's ``sort(comparator)``, or any comparison function),
        or the items' own order. Items that tie come in no fixed order, as in Jet: for one order at
        every parallelism, order without ties, e.g. ``lambda entry: (-entry[1], entry[0])``."""
        transform = SortTransform("sort", None, reverse)
        if isinstance(key, ComparatorEx):
            key, comparator = None, key
        if key is not None:
            _checkSortKey(key, transform.name)
        if comparator is not None:
            if key is not None:
                raise PipelineError(f"{transform.describe()}: sort takes a key or a comparator, not both")
            checkFunction(comparator, transform.name, "comparator")
            key, comparatorReverses = sortKeyOf(comparator)
            reverse = reverse != comparatorReverses
        return BatchStage(self.pipeline, self.attachDownstream(attrs.evolve(transform, keyFn=key, reverse=reverse)))

    def addTimestamps(self, timestampFn: Callable, allowedLag: int) -> "StreamStage":
        """Give each item the event time ``timestampFn(item)``, watermarks lagging ``allowedLag``
        behind the top timestamp; return the stream stage that can ``window`` its items."""
        return self.pipeline.timestamped(self, timestampFn, allowedLag)

    def mapStateful(self, createFn: Callable, mapFn: Callable) -> "BatchStage":
        """Map each item with ``mapFn(state, item)``, one state made by ``createFn()`` for all
        items (so one processor runs it, as in Jet); a None result drops the item."""
        return self._stateful("map-stateful-global", createFn, mapFn, StatefulKind.MAP, "mapFn")

    def filterStateful(self, createFn: Callable, filterFn: Callable) -> "BatchStage":
        """Keep the items for which ``filterFn(state, item)`` is true, one state for all items."""
        return self._stateful("map-stateful-global", createFn, filterFn, StatefulKind.FILTER, "filterFn")

    def flatMapStateful(self, createFn: Callable, flatMapFn: Callable) -> "BatchStage":
        """Emit every item of the iterable ``flatMapFn(state, item)``, one state for all items."""
        return self._stateful("flatmap-stateful-global", createFn, flatMapFn, StatefulKind.FLAT_MAP, "flatMapFn")

    def rollingAggregate(self, aggrOp: AggregateOperation) -> "BatchStage":
        """Emit, for each item, the result so far of aggregating every item (one processor)."""
        transform = RollingAggregateTransform("rolling-aggregate", None, aggrOp)
        checkAggregateOperation(aggrOp, transform.name)
        return BatchStage(self.pipeline, self.attachDownstream(transform))

    def _stateful(self, name: str, createFn: Callable, fn: Callable, kind: StatefulKind, parameter: str) -> "BatchStage":
        checkFunction(createFn, name, "createFn")
        return self._attach(MapStatefulTransform(name, None, createFn, fn, kind, passesKey=False), fn, parameter)

    def hashJoin(self, other: "BatchStage", clause: JoinClause, mapFn: Callable) -> "BatchStage":
        """Emit ``mapFn(item, match)`` for every match in ``other`` (``None`` if none)."""
        return self._hashJoin((other,), (clause,), mapFn, inner=False)

    def innerHashJoin(self, other: "BatchStage", clause: JoinClause, mapFn: Callable) -> "BatchStage":
        """Emit ``mapFn(item, match)`` for every match in ``other``; unmatched items drop."""
        return self._hashJoin((other,), (clause,), mapFn, inner=True)

    def hashJoin2(
        self, stage1: "BatchStage", clause1: JoinClause, stage2: "BatchStage", clause2: JoinClause,
        mapFn: Callable,
    ) -> "BatchStage":
        """Emit ``mapFn(item, match1, match2)`` for every pair of matches (``None`` if none)."""
        return self._hashJoin((stage1, stage2), (clause1, clause2), mapFn, inner=False)

    def innerHashJoin2(
        self, stage1: "BatchStage", clause1: JoinClause, stage2: "BatchStage", clause2: JoinClause,
        mapFn: Callable,
    ) -> "BatchStage":
        """Emit ``mapFn(item, match1, match2)`` for every pair of matches; others drop."""
        return self._hashJoin((stage1, stage2), (clause1, clause2), mapFn, inner=True)

    def hashJoinBuilder(self) -> "HashJoinBuilder":
        """Return a builder joining this stage with any number of others by tag."""
        return HashJoinBuilder(self)

    def customTransform(self, name: str, processorSupplier: Callable) -> "BatchStage":
        """Run your own processors, named ``name``, on this stage's items."""
        return self._attach(CustomTransform(name, processorSupplier), processorSupplier, "processorSupplier")

    def mapUsingService(self, serviceFactory: ServiceFactory, mapFn: Callable) -> "BatchStage":
        """Map each item with ``mapFn(service, item)``; a None result drops the item."""
        return self._usingService("map", serviceFactory, mapFn)

    def filterUsingService(self, serviceFactory: ServiceFactory, filterFn: Callable) -> "BatchStage":
        """Keep the items for which ``filterFn(service, item)`` is true."""
        return self._usingService("filter", serviceFactory, filterFn)

    def flatMapUsingService(self, serviceFactory: ServiceFactory, flatMapFn: Callable) -> "BatchStage":
        """Map each item to the items of ``flatMapFn(service, item)``."""
        return self._usingService("flatMap", serviceFactory, flatMapFn)

    def mapUsingServiceAsync(
        self, serviceFactory: ServiceFactory, mapAsyncFn: Callable, *,
        maxConcurrentOps: int = DEFAULT_MAX_CONCURRENT_OPS, preserveOrder: bool = DEFAULT_PRESERVE_ORDER,
    ) -> "BatchStage":
        """Map each item with ``mapAsyncFn(service, item)``, which returns an awaitable (a
        coroutine, say) or a ``concurrent.futures.Future``; at most ``maxConcurrentOps`` run at
        once per processor, results in input order unless ``preserveOrder`` is False; a None
        future or result drops the item."""
        return self._attach(
            _asyncTransform("mapUsingServiceAsync", serviceFactory, mapAsyncFn, maxConcurrentOps, preserveOrder),
            mapAsyncFn, "mapAsyncFn",
        )

    def mapUsingServiceAsyncBatched(
        self, serviceFactory: ServiceFactory, maxBatchSize: int, mapAsyncFn: Callable
    ) -> "BatchStage":
        """Map lists of up to ``maxBatchSize`` items with ``mapAsyncFn(service, items)``, whose
        awaitable or ``concurrent.futures.Future`` gives a list of one result per item (None
        drops its item); two calls in flight per processor, results in input order, as Jet's."""
        return self._attach(
            _batchedTransform("mapUsingServiceAsyncBatched", serviceFactory, mapAsyncFn, maxBatchSize),
            mapAsyncFn, "mapAsyncFn",
        )

    def apply(self, transformFn: Callable[["BatchStage"], "BatchStage"]) -> "BatchStage":
        """Return ``transformFn(self)``: a reusable piece of pipeline."""
        return transformFn(self)

    def attachDownstream(self, transform: Transform) -> int:
        """Add ``transform`` fed by this stage (rebalanced if asked); return its index."""
        return attachFedBy(transform, (self,))

    def _attach(self, transform: Transform, fn: Callable, parameter: str) -> "BatchStage":
        checkFunction(fn, transform.name, parameter)
        return BatchStage(self.pipeline, self.attachDownstream(transform))

    def _usingService(self, kind: str, serviceFactory: ServiceFactory, fn: Callable) -> "BatchStage":
        transform = ServiceTransform(f"{kind}UsingService", kind, serviceFactory, fn)
        checkPicklable(serviceFactory, transform.name, "serviceFactory")
        return self._attach(transform, fn, f"{kind}Fn")

    def _hashJoin(self, others, clauses, mapFn, inner: bool | tuple[bool, ...], matchesByTag: bool = False) -> "BatchStage":
        name = f"{len(others) + 1}-way hash-join"
        innerSides = inner if isinstance(inner, tuple) else (inner,) * len(clauses)
        transform = HashJoinTransform(name, tuple(clauses), mapFn, innerSides, matchesByTag)
        checkPicklable(transform, name, "clauses and mapFn")
        return BatchStage(self.pipeline, attachFedBy(transform, (self, *others)))


def attachFedBy(transform: Transform, stages: tuple["BatchStage", ...]) -> int:
    """Add ``transform`` fed by ``stages`` (at ordinals 0, 1, ...); return its index."""
    if not stages:
        raise PipelineError(f"{transform.describe()} needs at least one stage to take items from")
    pipeline = stages[0].pipeline
    foreign = [stage.name() for stage in stages if stage.pipeline is not pipeline]
    if foreign:
        raise PipelineError(
            f"{transform.describe()}: the stages {foreign} belong to another pipeline"
        )
    if any(stage.rebalancing is not None for stage in stages):
        transform = attrs.evolve(transform, inputRebalancing=tuple(s.rebalancing for s in stages))
    return pipeline.attach(transform, tuple(stage.index for stage in stages))


def _asyncTransform(name, serviceFactory, fn, maxConcurrentOps, preserveOrder, keyFn=None) -> AsyncServiceTransform:
    transform = AsyncServiceTransform(name, serviceFactory, fn, maxConcurrentOps, preserveOrder, keyFn)
    if not isinstance(maxConcurrentOps, int) or maxConcurrentOps < 1:
        raise PipelineError(f"{transform.describe()}: maxConcurrentOps must be at least 1, got {maxConcurrentOps!r}")
    checkPicklable(serviceFactory, name, "serviceFactory")
    return transform


def _batchedTransform(name, serviceFactory, fn, maxBatchSize, keyFn=None) -> AsyncServiceTransform:
    transform = _asyncTransform(name, serviceFactory, fn, MAX_CONCURRENT_ASYNC_BATCHES, True, keyFn)
    if not isinstance(maxBatchSize, int) or maxBatchSize < 1:
        raise PipelineError(f"{transform.describe()}: maxBatchSize must be at least 1, got {maxBatchSize!r}")
    return attrs.evolve(transform, maxBatchSize=maxBatchSize)


_CMP_TO_KEY = type(functools.cmp_to_key(lambda a, b: 0))
"""What ``functools.cmp_to_key`` returns: unpicklable, and hiding its comparison function."""


def _checkSortKey(key: Callable, stageName: str) -> None:
    if isinstance(key, _CMP_TO_KEY):
        raise PipelineError(
            f"Stage '{stageName}': a functools.cmp_to_key(...) key cannot be pickled, so Spark cannot "
            "send it to its workers; give the comparison function itself: sort(comparator=compareFn)"
        )
    checkFunction(key, stageName, "key")
    if not acceptsOneArgument(key):
        raise PipelineError(
            f"Stage '{stageName}': sort's key takes one item; to compare two items, give "
            "sort(comparator=compareFn) or sort(ComparatorEx.of(compareFn))"
        )


class AggregateBuilder:
    """Collects stages to co-aggregate, each with its operation; ``add`` returns the tag of its
    result, as Jet's ``AggregateBuilder`` and ``GroupAggregateBuilder`` do."""

    def __init__(self, first, aggrOp0: AggregateOperation) -> None:
        self._stages, self._operations = [first], [aggrOp0]

    def tag0(self) -> Tag:
        """Return the tag of the first stage's result."""
        return Tag.tag0()

    def add(self, stage, aggrOp: AggregateOperation) -> Tag:
        """Co-aggregate ``stage`` with ``aggrOp``; return the tag of its result."""
        self._stages.append(stage)
        self._operations.append(aggrOp)
        return Tag(len(self._stages) - 1)

    def build(self, outputFn: Callable | None = None):
        """Emit the results as ``ItemsByTag``, or ``outputFn(itemsByTag)`` (keyed stages:
        ``(key, ...)`` per key)."""
        byTag = ItemsByTag.ofResults if outputFn is None else functools.partial(_tagged, outputFn)
        return self._stages[0]._coAggregate(tuple(self._stages), tuple(self._operations), byTag)


def _tagged(outputFn: Callable, results: tuple):
    return outputFn(ItemsByTag.ofResults(results))


class AggregateBuilder1:
    """Collects stages to co-aggregate with one operation of as many inputs (Jet's
    ``AggregateBuilder1``); ``add`` returns each stage's input tag."""

    def __init__(self, first) -> None:
        self._stages = [first]

    def tag0(self) -> Tag:
        """Return the input tag of the first stage."""
        return Tag.tag0()

    def add(self, stage) -> Tag:
        """Add ``stage``; return its input tag, for ``coAggregateOperationBuilder().add``."""
        self._stages.append(stage)
        return Tag(len(self._stages) - 1)

    def build(self, aggrOp: AggregateOperation):
        """Emit the result of ``aggrOp`` over the stages (keyed stages: ``(key, result)``)."""
        return self._stages[0]._coAggregateWith(tuple(self._stages), aggrOp)


class HashJoinBuilder:
    """Collects the stages to join with a primary stage; ``add`` and ``addInner`` return each
    one's tag, as Jet's ``HashJoinBuilder``."""

    def __init__(self, primary: BatchStage) -> None:
        self._primary = primary
        self._sides: list[tuple[BatchStage, JoinClause, bool]] = []

    def add(self, stage: BatchStage, clause: JoinClause) -> Tag:
        """Join ``stage`` by ``clause`` (outer: an item without a match gets None there);
        return the tag of its matches."""
        return self._add(stage, clause, inner=False)

    def addInner(self, stage: BatchStage, clause: JoinClause) -> Tag:
        """Join ``stage`` by ``clause`` (inner: an item without a match there is dropped);
        return the tag of its matches."""
        return self._add(stage, clause, inner=True)

    def _add(self, stage: BatchStage, clause: JoinClause, inner: bool) -> Tag:
        self._sides.append((stage, clause, inner))
        return Tag(len(self._sides) - 1)

    def build(self, mapFn: Callable) -> BatchStage:
        """Emit ``mapFn(item, itemsByTag)`` per combination of matches."""
        stages, clauses, inner = zip(*self._sides) if self._sides else ((), (), ())
        return self._primary._hashJoin(stages, clauses, mapFn, inner=tuple(inner), matchesByTag=True)


@attrs.frozen
class BatchStageWithKey:
    """A stage with a grouping key: its aggregations emit ``(key, result)`` per key."""

    pipeline: "Pipeline" = attrs.field(repr=False)
    index: int
    keyFn: Callable
    rebalancing: Rebalancing | None = None

    def aggregate(self, aggrOp: AggregateOperation) -> BatchStage:
        """Aggregate the items of each key; emit ``(key, result)`` tuples."""
        transform = GroupTransform("group-and-aggregate", self.keyFn, aggrOp)
        checkAggregateOperation(aggrOp, transform.name)
        return self._attach(transform)

    def aggregate2(self, first, second, aggrOp1: AggregateOperation | None = None) -> BatchStage:
        """Co-group this stage and a keyed ``stage1`` by key: ``aggregate2(aggrOp0, stage1,
        aggrOp1)`` emits ``(key, (r0, r1))``, ``aggregate2(stage1, aggrOp2)`` ``(key, result)``."""
        if aggrOp1 is None:
            return self._coAggregateWith((self, first), second)
        return self._coAggregate((self, second), (first, aggrOp1))

    def aggregate3(self, first, second, third, stage2=None, aggrOp2: AggregateOperation | None = None) -> BatchStage:
        """Co-group three keyed stages: ``aggregate3(aggrOp0, stage1, aggrOp1, stage2, aggrOp2)``
        emits ``(key, (r0, r1, r2))``, ``aggregate3(stage1, stage2, aggrOp3)`` ``(key, result)``."""
        if stage2 is None:
            return self._coAggregateWith((self, first, second), third)
        return self._coAggregate((self, second, stage2), (first, third, aggrOp2))

    def aggregateBuilder(self, aggrOp0: AggregateOperation | None = None):
        """Return a builder co-grouping this stage with any number of keyed stages (see
        ``BatchStage.aggregateBuilder``)."""
        return AggregateBuilder(self, aggrOp0) if aggrOp0 is not None else AggregateBuilder1(self)

    def _coAggregate(self, stages, operations, outputFn: Callable = tuple) -> BatchStage:
        name = f"{len(stages)}-way cogroup-and-aggregate"
        for aggrOp in operations:
            checkAggregateOperation(aggrOp, name)
        return self._coAggregateWith(stages, coAggregateOperation(tuple(operations), outputFn))

    def _coAggregateWith(self, stages, aggrOp: AggregateOperation) -> BatchStage:
        name = f"{len(stages)}-way cogroup-and-aggregate"
        checkAggregateOperation(aggrOp, name, arity=len(stages))
        keyFns = tuple(stage.keyFn for stage in stages)
        if len(stages) == 1:  # a builder given no other stage: the items come untagged
            transform = GroupTransform(name, self.keyFn, aggrOp)
        else:
            transform = GroupTransform(name, TaggedKey(keyFns), aggrOp, keyFns)
        upstream = tuple(BatchStage(s.pipeline, s.index, s.rebalancing) for s in stages)
        return BatchStage(self.pipeline, attachFedBy(transform, upstream))

    def __getattr__(self, name: str):
        raise habitError(self, name)

    def mapUsingService(self, serviceFactory: ServiceFactory, mapFn: Callable) -> BatchStage:
        """Map each item with ``mapFn(service, key, item)``, each key's items meeting one service;
        a None result drops the item."""
        return self._usingService("map", serviceFactory, mapFn)

    def filterUsingService(self, serviceFactory: ServiceFactory, filterFn: Callable) -> BatchStage:
        """Keep the items for which ``filterFn(service, key, item)`` is true."""
        return self._usingService("filter", serviceFactory, filterFn)

    def flatMapUsingService(self, serviceFactory: ServiceFactory, flatMapFn: Callable) -> BatchStage:
        """Map each item to the items of ``flatMapFn(service, key, item)``."""
        return self._usingService("flatMap", serviceFactory, flatMapFn)

    def mapUsingServiceAsync(
        self, serviceFactory: ServiceFactory, mapAsyncFn: Callable, *,
        maxConcurrentOps: int = DEFAULT_MAX_CONCURRENT_OPS, preserveOrder: bool = DEFAULT_PRESERVE_ORDER,
    ) -> BatchStage:
        """Map each item with ``mapAsyncFn(service, key, item)``, a future per item, as
        ``BatchStage.mapUsingServiceAsync`` does, each key's items meeting one service."""
        transform = _asyncTransform(
            "mapUsingPartitionedServiceAsync", serviceFactory, mapAsyncFn, maxConcurrentOps, preserveOrder, self.keyFn
        )
        checkFunction(mapAsyncFn, transform.name, "mapAsyncFn")
        return self._attach(transform)

    def mapUsingServiceAsyncBatched(
        self, serviceFactory: ServiceFactory, maxBatchSize: int, mapAsyncFn: Callable
    ) -> BatchStage:
        """Map lists of up to ``maxBatchSize`` items with ``mapAsyncFn(service, keys, items)``
        (the key at index n is item n's), as ``BatchStage.mapUsingServiceAsyncBatched`` does,
        each key's items meeting one service."""
        transform = _batchedTransform(
            "mapUsingPartitionedServiceAsyncBatched", serviceFactory, mapAsyncFn, maxBatchSize, self.keyFn
        )
        checkFunction(mapAsyncFn, transform.name, "mapAsyncFn")
        return self._attach(transform)

    def _usingService(self, kind: str, serviceFactory: ServiceFactory, fn: Callable) -> BatchStage:
        transform = ServiceTransform(f"{kind}UsingPartitionedService", kind, serviceFactory, fn, self.keyFn)
        checkPicklable(serviceFactory, transform.name, "serviceFactory")
        checkFunction(fn, transform.name, f"{kind}Fn")
        return self._attach(transform)

    def distinct(self) -> BatchStage:
        """Emit the first item seen of each key."""
        return self._attach(DistinctTransform("distinct", self.keyFn))

    def mapStateful(self, createFn: Callable, mapFn: Callable) -> BatchStage:
        """Map each item with ``mapFn(state, key, item)``, a state per key made by ``createFn()``;
        a None result drops the item. Mutate the state in place to keep what you learn."""
        return self._stateful("map-stateful-keyed", createFn, mapFn, StatefulKind.MAP, "mapFn")

    def filterStateful(self, createFn: Callable, filterFn: Callable) -> BatchStage:
        """Keep the items for which ``filterFn(state, item)`` is true, a state per key."""
        return self._stateful("map-stateful-keyed", createFn, filterFn, StatefulKind.FILTER, "filterFn", passesKey=False)

    def flatMapStateful(self, createFn: Callable, flatMapFn: Callable) -> BatchStage:
        """Emit every item of the iterable ``flatMapFn(state, key, item)``, a state per key."""
        return self._stateful("flatmap-stateful-keyed", createFn, flatMapFn, StatefulKind.FLAT_MAP, "flatMapFn")

    def _stateful(self, name, createFn, fn, kind, parameter: str, passesKey: bool = True) -> BatchStage:
        transform = MapStatefulTransform(name, self.keyFn, createFn, fn, kind, passesKey)
        checkFunction(createFn, name, "createFn")
        checkFunction(fn, name, parameter)
        return self._attach(transform)

    def rollingAggregate(self, aggrOp: AggregateOperation) -> BatchStage:
        """Emit, for each item, ``(key, result so far)`` of its key's aggregation."""
        transform = RollingAggregateTransform("rolling-aggregate", self.keyFn, aggrOp)
        checkAggregateOperation(aggrOp, transform.name)
        return self._attach(transform)

    def customTransform(self, name: str, processorSupplier: Callable) -> BatchStage:
        """Run your own processors, each key's items all reaching the same processor."""
        checkFunction(processorSupplier, name, "processorSupplier")
        return self._attach(CustomTransform(name, processorSupplier, self.keyFn))

    def _attach(self, transform: Transform) -> BatchStage:
        upstream = BatchStage(self.pipeline, self.index, self.rebalancing)
        return BatchStage(self.pipeline, upstream.attachDownstream(transform))


class SinkStage(Stage):
    """The stage writing to a sink; nothing attaches to it."""
