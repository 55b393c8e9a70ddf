"""Stream stages: items of a stream source or with an event time after ``addTimestamps``, and
the windows they aggregate into, with Jet's API (``StreamStage``, ``StreamStageWithKey``,
``StageWithWindow``, ``StageWithKeyAndWindow``).

A timestamped stage's items travel as ``JetEvent``s (the item and its timestamp); the functions
a user gives see the item alone, as Jet's function adapter arranges. Over a bounded source the
stream ends with its input and every window is emitted."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.jet_event import FlatMappedEvent, MappedEvent, OnPayload, payloadOf
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkAggregateOperation, checkFunction
from sparkjet.pipeline.sinks import Sink
from sparkjet.pipeline.stage import BatchStage, SinkStage, Stage, attachFedBy
from sparkjet.pipeline.transforms import (
    FilterTransform,
    FlatMapTransform,
    MapTransform,
    SinkTransform,
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

    def map(self, mapFn: Callable) -> "StreamStage":
        """Map each item with ``mapFn``, keeping its timestamp; a None result drops the item."""
        checkFunction(mapFn, "map", "mapFn")
        return self._attach(MapTransform("map", MappedEvent(mapFn) if self.timestamped else mapFn))

    def filter(self, filterFn: Callable) -> "StreamStage":
        """Keep the items for which ``filterFn`` returns true."""
        checkFunction(filterFn, "filter", "filterFn")
        return self._attach(FilterTransform("filter", OnPayload(filterFn) if self.timestamped else filterFn))

    def flatMap(self, flatMapFn: Callable) -> "StreamStage":
        """Map each item to the items of ``flatMapFn(item)``, each with the item's timestamp."""
        checkFunction(flatMapFn, "flat-map", "flatMapFn")
        return self._attach(FlatMapTransform("flat-map", FlatMappedEvent(flatMapFn) if self.timestamped else flatMapFn))

    def addTimestamps(self, timestampFn: Callable, allowedLag: int) -> "StreamStage":
        """Give each item of a stream without event time the time ``timestampFn(item)``,
        watermarks lagging ``allowedLag`` behind the top timestamp."""
        if self.timestamped:
            raise PipelineError(f"{self.describe()}: This stage already has timestamps assigned to it")
        return timestamped(self, timestampFn, allowedLag)

    def groupingKey(self, keyFn: Callable) -> "StreamStageWithKey":
        """Return a view of this stage whose windows work per ``keyFn(item)``."""
        checkFunction(keyFn, self.name(), "keyFn")
        return StreamStageWithKey(self, keyFn)

    def window(self, windowDefinition) -> "StageWithWindow":
        """Return this stage's items grouped into windows of ``windowDefinition``."""
        return StageWithWindow(self, _checkedWindow(windowDefinition, self))

    def writeTo(self, sink: Sink) -> SinkStage:
        """Send every item (without its timestamp) to ``sink``."""
        items = self._attach(MapTransform("remove-timestamps", payloadOf)) if self.timestamped else self
        return SinkStage(self.pipeline, self.pipeline.attach(SinkTransform(sink.name, sink), (items.index,)))

    def _attach(self, transform: Transform) -> "StreamStage":
        return StreamStage(self.pipeline, self.pipeline.attach(transform, (self.index,)), self.timestamped)


def timestamped(stage: Stage, timestampFn: Callable, allowedLag: int) -> StreamStage:
    """Return the ``add-timestamps`` stage after ``stage``: its items get the event time
    ``timestampFn(item)``, watermarks lagging ``allowedLag`` behind the top timestamp."""
    transform = TimestampTransform("add-timestamps", timestampFn, checkedLag(stage, allowedLag))
    checkFunction(timestampFn, transform.name, "timestampFn")
    index = attachFedBy(transform, (stage,)) if isinstance(stage, BatchStage) else stage.pipeline.attach(transform, (stage.index,))
    return StreamStage(stage.pipeline, index)


def checkedLag(stage: Stage, allowedLag: int) -> int:
    """Return ``allowedLag`` if it is a lag (0 or more); else raise naming ``stage``."""
    if not isinstance(allowedLag, int) or allowedLag < 0:
        raise PipelineError(f"{stage.describe()}: the allowed lag must be 0 or more, got {allowedLag!r}")
    return allowedLag


@attrs.frozen
class StreamStageWithKey:
    """A stream stage with a grouping key."""

    stage: StreamStage
    keyFn: Callable

    def window(self, windowDefinition) -> "StageWithKeyAndWindow":
        """Return this stage's items grouped into windows of ``windowDefinition`` per key."""
        return StageWithKeyAndWindow(self.stage, self.keyFn, _checkedWindow(windowDefinition, self.stage))


@attrs.frozen
class StageWithWindow:
    """A stream stage's items in windows; ``aggregate`` emits a ``WindowResult`` per window."""

    stage: StreamStage
    windowDefinition: SlidingWindowDefinition | SessionWindowDefinition

    def groupingKey(self, keyFn: Callable) -> "StageWithKeyAndWindow":
        """Return the windows per ``keyFn(item)``."""
        checkFunction(keyFn, self.stage.name(), "keyFn")
        return StageWithKeyAndWindow(self.stage, keyFn, self.windowDefinition)

    def aggregate(self, aggrOp: AggregateOperation) -> StreamStage:
        """Aggregate each window's items; emit ``WindowResult(start, end, result, isEarly)``."""
        return _windowAggregate(self.stage, self.windowDefinition, aggrOp, None)


@attrs.frozen
class StageWithKeyAndWindow:
    """A stream stage's items in windows per key; ``aggregate`` emits a ``KeyedWindowResult``
    per key and window."""

    stage: StreamStage
    keyFn: Callable
    windowDefinition: SlidingWindowDefinition | SessionWindowDefinition

    def aggregate(self, aggrOp: AggregateOperation) -> StreamStage:
        """Aggregate each key's items per window; emit ``KeyedWindowResult(start, end, key, result, isEarly)``."""
        return _windowAggregate(self.stage, self.windowDefinition, aggrOp, self.keyFn)


def _windowAggregate(stage: StreamStage, windowDefinition, aggrOp: AggregateOperation, keyFn) -> StreamStage:
    name = "session-window" if isinstance(windowDefinition, SessionWindowDefinition) else "sliding-window"
    checkAggregateOperation(aggrOp, name)
    transform = WindowAggregateTransform(name, windowDefinition, aggrOp, keyFn)
    return StreamStage(stage.pipeline, stage.pipeline.attach(transform, (stage.index,)), timestamped=False)


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
