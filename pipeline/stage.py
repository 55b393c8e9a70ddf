"""Stage handles: immutable views of a pipeline transform, with Jet's fluent API."""

from collections.abc import Callable

import attrs

from coredag.aggregate_operation import AggregateOperation
from pipeline.errors import PipelineError
from pipeline.functions import checkPicklable
from pipeline.pipeline import Pipeline
from pipeline.sinks import Sink
from pipeline.transforms import (
    LOCAL_PARALLELISM_USE_DEFAULT,
    AggregateTransform,
    FilterTransform,
    FlatMapTransform,
    GroupTransform,
    MapTransform,
    Rebalancing,
    SinkTransform,
    Transform,
)


@attrs.frozen
class Stage:
    """A transform of a pipeline, by its index; ``setName`` and the like change the pipeline."""

    pipeline: Pipeline = attrs.field(repr=False)
    index: int

    def name(self) -> str:
        """Return the stage's name."""
        return self.pipeline.transformAt(self.index).name

    def setName(self, name: str):
        """Name the stage (vertex names and errors use it); return this stage."""
        if not name:
            raise PipelineError(f"Stage '{self.name()}': setName needs a non-empty name")
        self.pipeline.update(self.index, lambda t: attrs.evolve(t, name=name))
        return self

    def setLocalParallelism(self, localParallelism: int):
        """Set how many processors run the stage (-1: the default); return this stage."""
        if localParallelism != LOCAL_PARALLELISM_USE_DEFAULT and localParallelism <= 0:
            raise PipelineError(
                f"Stage '{self.name()}': Parallelism must be either -1 or a positive number, "
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
            checkPicklable(keyFn, self.name(), "keyFn")
        return attrs.evolve(self, rebalancing=Rebalancing(keyFn))

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
        checkPicklable(keyFn, self.name(), "keyFn")
        return BatchStageWithKey(self.pipeline, self.index, keyFn, self.rebalancing)

    def aggregate(self, aggrOp: AggregateOperation) -> "BatchStage":
        """Aggregate all items into one result."""
        return self._attach(AggregateTransform("aggregate", aggrOp), aggrOp, "aggrOp")

    def writeTo(self, sink: Sink) -> "SinkStage":
        """Send every item to ``sink``."""
        return SinkStage(self.pipeline, self.attachDownstream(SinkTransform(sink.name, sink)))

    def attachDownstream(self, transform: Transform) -> int:
        """Add ``transform`` fed by this stage (rebalanced if asked); return its index."""
        if self.rebalancing is not None:
            transform = attrs.evolve(transform, inputRebalancing=(self.rebalancing,))
        return self.pipeline.attach(transform, (self.index,))

    def _attach(self, transform: Transform, fn: object, parameter: str) -> "BatchStage":
        checkPicklable(fn, transform.name, parameter)
        return BatchStage(self.pipeline, self.attachDownstream(transform))


@attrs.frozen
class BatchStageWithKey:
    """A stage with a grouping key: its aggregations emit ``(key, result)`` per key."""

    pipeline: Pipeline = attrs.field(repr=False)
    index: int
    keyFn: Callable
    rebalancing: Rebalancing | None = None

    def aggregate(self, aggrOp: AggregateOperation) -> BatchStage:
        """Aggregate the items of each key; emit ``(key, result)`` tuples."""
        transform = GroupTransform("group-and-aggregate", self.keyFn, aggrOp)
        checkPicklable(aggrOp, transform.name, "aggrOp")
        return self._attach(transform)

    def _attach(self, transform: Transform) -> BatchStage:
        upstream = BatchStage(self.pipeline, self.index, self.rebalancing)
        return BatchStage(self.pipeline, upstream.attachDownstream(transform))


class SinkStage(Stage):
    """The stage writing to a sink; nothing attaches to it."""
