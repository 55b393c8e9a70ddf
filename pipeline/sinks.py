"""Sinks: where a pipeline's results go."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.model.user_paths import checkedPath
from sparkjet.coredag.processors.output_paths import unsafeOutputMessage, unsafeOutputReason
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction


@attrs.frozen
class Sink:
    """A destination for items, named as Jet names it."""

    name: str


@attrs.frozen
class ListSink(Sink):
    """The items go to a list the driver reads with ``Jet.getList(listName)``."""

    listName: str


@attrs.frozen
class LoggerSink(Sink):
    """Each item is logged at INFO level."""


@attrs.frozen
class FilesSink(Sink):
    """Each item becomes one ``str(item)`` line of committed part files in a new directory."""

    directory: str


@attrs.frozen
class JsonSink(Sink):
    """Each item becomes one line of standard JSON in committed part files in a new directory;
    NaN and infinities are refused, or written as null if ``nonFiniteAsNull``."""

    directory: str
    nonFiniteAsNull: bool = False


@attrs.frozen
class DataFrameSink(Sink):
    """The items become the rows of a Spark DataFrame that ``Jet.getDataFrame(dataFrameName)`` returns."""

    dataFrameName: str
    schema: object = None


@attrs.frozen
class NoopSink(Sink):
    """The items are discarded."""


@attrs.frozen
class ProcessorSink(Sink):
    """The items go to processors of the user's own (Jet's ``Sinks.fromProcessor``), as many
    as ``preferredLocalParallelism`` (-1: the default) unless the stage sets it."""

    processorSupplier: Callable
    preferredLocalParallelism: int = -1


class Sinks:
    """Factories of sinks."""

    @staticmethod
    def list(name: str) -> ListSink:
        """Collect items into the list ``name`` that ``Jet.getList(name)`` returns."""
        return ListSink(f"listSink({name})", name)

    @staticmethod
    def logger() -> LoggerSink:
        """Log every item at INFO level."""
        return LoggerSink("loggerSink")

    @staticmethod
    def files(directory: str) -> FilesSink:
        """Write ``str(item)`` per line into part files of ``directory`` (a path or a URL such as
        ``hdfs://...``), a new directory the job creates."""
        directory = outputDirectory(directory, "Sinks.files")
        return FilesSink(f"filesSink({directory})", directory)

    @staticmethod
    def json(directory: str, nonFiniteAsNull: bool = False) -> JsonSink:
        """Write each item as one line of standard JSON into part files of ``directory``, a new
        directory the job creates; NaN and infinities fail the job, or are written as null if
        ``nonFiniteAsNull``."""
        directory = outputDirectory(directory, "Sinks.json")
        return JsonSink(f"jsonSink({directory})", directory, nonFiniteAsNull)

    @staticmethod
    def dataframe(name: str, schema=None) -> DataFrameSink:
        """Make the items (dicts, tuples or Rows) the rows of the DataFrame ``Jet.getDataFrame(name)``
        returns; ``schema`` is a pyspark StructType or a DDL string, else Spark infers one."""
        return DataFrameSink(f"dataframeSink({name})", name, schema)

    @staticmethod
    def noop() -> NoopSink:
        """Discard every item."""
        return NoopSink("noop")

    @staticmethod
    def fromProcessor(name: str, processorSupplier: Callable, preferredLocalParallelism: int = -1) -> ProcessorSink:
        """Write the items with processors from ``processorSupplier()``, a sink named ``name``
        (Jet's ``Sinks.fromProcessor``); after a restart a stream job may give them a
        micro-batch's items again, unless they take part in its snapshots."""
        checkFunction(processorSupplier, name, "processorSupplier")
        return ProcessorSink(name, processorSupplier, preferredLocalParallelism)


def outputDirectory(directory, origin: str) -> str:
    """Return ``directory`` (a str or path-like) as a str; refuse one no job may write into, or
    that no file system takes (see ``checkedPath``)."""
    who = f"{origin} (called at {SourceLocation.ofUserCall()})"
    directory = checkedPath(directory, who, "output directory", PipelineError)
    reason = unsafeOutputReason(directory)
    if reason is not None:
        raise PipelineError(unsafeOutputMessage(who, directory, reason))
    return directory
