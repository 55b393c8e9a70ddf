"""Sinks: where a pipeline's results go."""

import attrs


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
    """Each item becomes one ``json.dumps(item)`` line of committed part files in a new directory."""

    directory: str


@attrs.frozen
class DataFrameSink(Sink):
    """The items become the rows of a Spark DataFrame that ``Jet.getDataFrame(dataFrameName)`` returns."""

    dataFrameName: str
    schema: object = None


@attrs.frozen
class NoopSink(Sink):
    """The items are discarded."""


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
        """Write ``str(item)`` per line into part files of ``directory``, which must not exist."""
        return FilesSink(f"filesSink({directory})", directory)

    @staticmethod
    def json(directory: str) -> JsonSink:
        """Write ``json.dumps(item)`` per line into part files of ``directory``, which must not exist."""
        return JsonSink(f"jsonSink({directory})", directory)

    @staticmethod
    def dataframe(name: str, schema=None) -> DataFrameSink:
        """Make the items (dicts, tuples or Rows) the rows of the DataFrame ``Jet.getDataFrame(name)``
        returns; ``schema`` is a pyspark StructType or a DDL string, else Spark infers one."""
        return DataFrameSink(f"dataframeSink({name})", name, schema)

    @staticmethod
    def noop() -> NoopSink:
        """Discard every item."""
        return NoopSink("noop")
