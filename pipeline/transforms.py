"""The nodes of a pipeline graph: one frozen value per kind of stage."""

from collections.abc import Callable

import attrs

from coredag.aggregate_operation import AggregateOperation
from pipeline.sinks import Sink
from pipeline.sources import BatchSource

LOCAL_PARALLELISM_USE_DEFAULT = -1


@attrs.frozen
class Rebalancing:
    """An input that ``rebalance()`` spreads over the cluster: round-robin, or by ``keyFn``."""

    keyFn: Callable | None = None


@attrs.frozen
class Transform:
    """A stage of the pipeline: its name, local parallelism and how each input is routed."""

    name: str
    localParallelism: int = attrs.field(default=LOCAL_PARALLELISM_USE_DEFAULT, kw_only=True)
    inputRebalancing: tuple[Rebalancing | None, ...] = attrs.field(default=(), kw_only=True)

    def rebalancing(self, ordinal: int) -> Rebalancing | None:
        """Return how input ``ordinal`` is rebalanced, None if it is not."""
        return self.inputRebalancing[ordinal] if ordinal < len(self.inputRebalancing) else None


@attrs.frozen
class SourceTransform(Transform):
    """Reads items from a source."""

    source: BatchSource


@attrs.frozen
class MapTransform(Transform):
    """Maps each item; a None result drops the item."""

    mapFn: Callable


@attrs.frozen
class FilterTransform(Transform):
    """Keeps the items the predicate accepts."""

    filterFn: Callable


@attrs.frozen
class FlatMapTransform(Transform):
    """Maps each item to any number of items."""

    flatMapFn: Callable


@attrs.frozen
class GroupTransform(Transform):
    """Aggregates the items of each key; emits ``(key, result)``."""

    keyFn: Callable
    aggrOp: AggregateOperation


@attrs.frozen
class AggregateTransform(Transform):
    """Aggregates all items into one result."""

    aggrOp: AggregateOperation


@attrs.frozen
class SinkTransform(Transform):
    """Writes items to a sink."""

    sink: Sink
