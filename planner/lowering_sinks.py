"""Lowering sinks: one vertex each, with the default parallelism of its kind."""

import functools

from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT
from sparkjet.coredag.processors.sinks import (
    AssertionSinkP,
    DataFrameSinkP,
    FilesSinkP,
    JsonFilesSinkP,
    ListSinkP,
    LoggerSinkP,
    NoopSinkP,
)
from sparkjet.pipeline.assertions import AssertionSink
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
from sparkjet.pipeline.transforms import SinkTransform
from sparkjet.planner.errors import PlanningError
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage


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
