"""Lowering sources: a batch source is one vertex; a stream source one vertex reading Spark's
stream, with Jet's ``<source>-add-timestamps`` behind it for event time."""

import functools

from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.event_time_policy import (
    EventTimePolicy,
    ingestionTimestamp,
    limitingLag,
    limitingRealTimeLag,
)
from sparkjet.coredag.model.jet_event import eventTimestamp, jetEvent
from sparkjet.coredag.processors.built_stream_source import BuiltStreamP
from sparkjet.coredag.processors.insert_watermarks import InsertWatermarksP
from sparkjet.coredag.processors.sources import DataFrameSourceP, ItemsP, ReadFilesP, ReadJsonP
from sparkjet.coredag.processors.stream_sources import FileWatcherP, FiniteStreamP, ItemStreamP, SocketP, StreamSourceP
from sparkjet.pipeline.source_builder import BuiltStreamSource
from sparkjet.pipeline.batch_sources import (
    BatchSource,
    DataFrameSource,
    FilesSource,
    ItemsSource,
    JsonSource,
    ProcessorBatchSource,
)
from sparkjet.pipeline.stream_sources import (
    FileWatcherSource,
    FiniteStreamSource,
    ItemStreamSource,
    SocketSource,
    StreamSource,
)
from sparkjet.pipeline.transforms import EventTime, SourceTransform, StreamSourceTransform, TimestampKind
from sparkjet.planner.errors import PlanningError
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage
from sparkjet.planner.watermark_stride import watermarkStride


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
