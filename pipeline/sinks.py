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
