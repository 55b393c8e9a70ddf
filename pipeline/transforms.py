"""The nodes of a pipeline graph: one frozen value per kind of stage."""

import enum
import operator
from collections.abc import Callable
from typing import ClassVar

import attrs

from sparkjet.coredag.errors import SourceLocation, describeStage
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.processors.join import BROADCAST_LIMIT
from sparkjet.coredag.processors.keyed import StatefulKind
from sparkjet.coredag.processors.stateless import StepKind
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.sinks import Sink
from sparkjet.pipeline.batch_sources import BatchSource

LOCAL_PARALLELISM_USE_DEFAULT = -1


@attrs.frozen
class Rebalancing:
    """An input that ``rebalance()`` spreads over the cluster: round-robin, or by ``keyFn``."""

    keyFn: Callable | None = None


@attrs.frozen
class Peek:
    """What ``peek()`` logs of a stage's output: ``toStringFn(item)`` where ``shouldLogFn(item)``."""

    shouldLogFn: Callable | None = None
    toStringFn: Callable | None = None


@attrs.frozen
class Transform:
    """A stage of the pipeline: its name, local parallelism, how each input is routed, whether
    its output is peeked at, and the line of the user's code that defined it (which errors
    name, and which equality ignores)."""

    name: str
    localParallelism: int = attrs.field(default=LOCAL_PARALLELISM_USE_DEFAULT, kw_only=True)
    inputRebalancing: tuple[Rebalancing | None, ...] = attrs.field(default=(), kw_only=True)
    peek: Peek | None = attrs.field(default=None, kw_only=True)
    definedAt: SourceLocation | None = attrs.field(
        factory=SourceLocation.ofUserCall, kw_only=True, eq=False, repr=str
    )

    def describe(self) -> str:
        """Return how errors name the stage: ``Stage 'flat-map' (defined at wordcount.py:12)``."""
        return describeStage(self.name, self.definedAt)

    def rebalancing(self, ordinal: int) -> Rebalancing | None:
        """Return how input ``ordinal`` is rebalanced, None if it is not."""
        return self.inputRebalancing[ordinal] if ordinal < len(self.inputRebalancing) else None


@attrs.frozen
class SourceTransform(Transform):
    """Reads items from a source."""

    source: BatchSource


class TimestampKind(enum.Enum):
    """Where a stream source's items get their event time."""

    FUNCTION = "withTimestamps"
    NATIVE = "withNativeTimestamps"
    INGESTION = "withIngestionTimestamps"
    NONE = "withoutTimestamps"


@attrs.frozen
class EventTime:
    """A stream source stage's choice of event time: ``kind``, with ``timestampFn`` and
    ``allowedLag`` where it has them."""

    kind: TimestampKind
    timestampFn: Callable | None = None
    allowedLag: int = 0


@attrs.frozen
class StreamSourceTransform(SourceTransform):
    """Reads a stream source; ``eventTime`` is what its stage chose (None: nothing yet)."""

    eventTime: EventTime | None = None


@attrs.frozen
class StatelessTransform(Transform):
    """A stage that handles each item on its own with ``fn``; its kind's ``stepKind`` says how,
    so the planner fuses and lowers every such kind alike. A new stateless kind is a subclass
    naming its step kind (and a ``StepKind`` member in coredag/processors/stateless.py)."""

    stepKind: ClassVar[StepKind]
    fn: Callable


@attrs.frozen
class MapTransform(StatelessTransform):
    """Maps each item; a None result drops the item."""

    stepKind = StepKind.MAP

    @property
    def mapFn(self) -> Callable:
        """Return the mapping function."""
        return self.fn


@attrs.frozen
class FilterTransform(StatelessTransform):
    """Keeps the items the predicate accepts."""

    stepKind = StepKind.FILTER

    @property
    def filterFn(self) -> Callable:
        """Return the predicate."""
        return self.fn


@attrs.frozen
class FlatMapTransform(StatelessTransform):
    """Maps each item to any number of items."""

    stepKind = StepKind.FLAT_MAP

    @property
    def flatMapFn(self) -> Callable:
        """Return the function giving each item's items."""
        return self.fn


@attrs.frozen
class GroupTransform(Transform):
    """Aggregates the items of each key; emits ``(key, result)``. With several inputs
    (co-grouping) ``inputKeyFns`` has each input's key and ``keyFn`` reads ``(ordinal, item)``."""

    keyFn: Callable
    aggrOp: AggregateOperation
    inputKeyFns: tuple[Callable, ...] = ()


@attrs.frozen
class AggregateTransform(Transform):
    """Aggregates all items into one result."""

    aggrOp: AggregateOperation


@attrs.frozen
class SinkTransform(Transform):
    """Writes items to a sink."""

    sink: Sink


@attrs.frozen
class MergeTransform(Transform):
    """Emits the items of all its inputs."""


@attrs.frozen
class DistinctTransform(Transform):
    """Emits the first item seen of each key."""

    keyFn: Callable


@attrs.frozen
class SortTransform(Transform):
    """Emits all items in one total order, by ``keyFn`` (the items themselves if None)."""

    keyFn: Callable | None
    reverse: bool


@attrs.frozen
class JoinClause:
    """How a hash join matches: ``leftKeyFn(primary) == rightKeyFn(other)``; the matched
    item is ``rightProjectFn(other)``; the other stage's items, projected, may pickle to at
    most ``broadcastLimit`` bytes, as every joiner keeps a copy of them."""

    leftKeyFn: Callable
    rightKeyFn: Callable
    rightProjectFn: Callable | None = None
    broadcastLimit: int = BROADCAST_LIMIT

    @classmethod
    def onKeys(cls, leftKeyFn: Callable, rightKeyFn: Callable) -> "JoinClause":
        """Match primary items and other items whose keys are equal."""
        return cls(leftKeyFn, rightKeyFn)

    @classmethod
    def joinMapEntries(cls, leftKeyFn: Callable) -> "JoinClause":
        """Match primary items with ``(key, value)`` entries (a keyed aggregation's results, a
        dict's items) whose key is ``leftKeyFn(primary)``; the matched item is the entry's
        value, as Jet's ``joinMapEntries`` does with a map's entries."""
        return cls(leftKeyFn, operator.itemgetter(0), operator.itemgetter(1))

    def projecting(self, rightProjectFn: Callable) -> "JoinClause":
        """Return this clause with the matched item mapped by ``rightProjectFn``."""
        return attrs.evolve(self, rightProjectFn=rightProjectFn)

    def withBroadcastLimit(self, limit: int) -> "JoinClause":
        """Return this clause letting the other stage's items pickle to ``limit`` bytes (default
        ``BROADCAST_LIMIT``, 512 MiB); past it the job fails, naming the stage."""
        if type(limit) is not int or limit <= 0:
            raise PipelineError(
                f"JoinClause.withBroadcastLimit: expected a positive number of bytes, got {limit!r}"
            )
        return attrs.evolve(self, broadcastLimit=limit)


@attrs.frozen
class HashJoinTransform(Transform):
    """Enriches each primary item (input 0) with the matching items of the other inputs."""

    clauses: tuple[JoinClause, ...]
    mapFn: Callable
    inner: tuple[bool, ...]
    """Per clause: whether a primary item without a match there is dropped (else matched None)."""
    matchesByTag: bool = False


@attrs.frozen
class CustomTransform(Transform):
    """Runs the user's processors; partitioned by ``keyFn`` when it is set."""

    processorSupplier: Callable
    keyFn: Callable | None = None


@attrs.frozen
class ServiceTransform(Transform):
    """A map, filter or flat-map whose function also gets a service made once per processor
    (and, with a ``keyFn``, the item's key: each key's items meet one service)."""

    kind: str
    serviceFactory: object
    fn: Callable
    keyFn: Callable | None = None


@attrs.frozen
class AsyncServiceTransform(Transform):
    """A map whose function returns a future per item (per list of up to ``maxBatchSize``
    items where batched), ``maxConcurrentOps`` in flight per processor, in input order where
    ``preserveOrder``; keyed with a ``keyFn``."""

    serviceFactory: object
    fn: Callable
    maxConcurrentOps: int
    preserveOrder: bool
    keyFn: Callable | None = None
    maxBatchSize: int | None = None


@attrs.frozen
class MapStatefulTransform(Transform):
    """Runs ``fn`` on each item with a state kept per ``keyFn(item)`` (None: one state for all
    items): ``fn(state, key, item)``, or ``fn(state, item)`` where not ``passesKey``; ``kind``
    says whether it maps, filters or flat-maps."""

    keyFn: Callable | None
    createFn: Callable
    fn: Callable
    kind: StatefulKind = StatefulKind.MAP
    passesKey: bool = True


@attrs.frozen
class StatefulStreamTransform(MapStatefulTransform):
    """A stateful map, filter or flat-map of a stream: each key's state lives across
    micro-batches and, given a ``ttl`` in event time, is evicted once the watermark passes its
    last event by more than that, ``onEvictFn(state, key, watermark)`` giving what to emit."""

    ttl: int = 0
    onEvictFn: Callable | None = None


@attrs.frozen
class RollingAggregateTransform(Transform):
    """Emits, for each item, ``(key, export(acc))`` of its key's running accumulator (no key:
    ``export(acc)`` of the one accumulator of all items)."""

    keyFn: Callable | None
    aggrOp: AggregateOperation


@attrs.frozen
class TimestampTransform(Transform):
    """Gives each item its event time ``timestampFn(item)`` and inserts watermarks lagging
    ``allowedLag`` behind the top timestamp (Jet's ``addTimestamps``)."""

    timestampFn: Callable
    allowedLag: int


@attrs.frozen
class WindowAggregateTransform(Transform):
    """Aggregates the timestamped items of its inputs per window of ``windowDefinition`` (and
    per key, input ``i``'s items keyed by ``keyFns[i]``; none: one result per window), into
    ``KeyedWindowResult``/``WindowResult``, or what ``outputFn(start, end, key, result, isEarly)``
    makes of them."""

    windowDefinition: object
    aggrOp: AggregateOperation
    keyFns: tuple[Callable, ...] = ()
    outputFn: Callable | None = None
