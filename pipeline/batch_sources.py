"""Batch sources: the finite sources a pipeline reads, as Jet names them, and the checks of a
files source's arguments."""

from collections.abc import Callable, Iterable

import attrs

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.model.user_paths import checkedPath
from sparkjet.coredag.processors.sources import charsetProblem
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkPicklable


@attrs.frozen
class BatchSource:
    """A finite source of items, named as Jet names it; its vertex has
    ``preferredLocalParallelism`` processors unless the stage sets it (-1: the default)."""

    name: str
    preferredLocalParallelism: int = attrs.field(default=-1, kw_only=True)


@attrs.frozen
class ProcessorBatchSource(BatchSource):
    """The items processors of the user's own emit (Jet's ``Sources.batchFromProcessor``)."""

    processorSupplier: Callable


@attrs.frozen
class FilesSource(BatchSource):
    """The lines of the files in a directory that match a glob."""

    directory: str
    glob: str
    charset: str


@attrs.frozen
class JsonSource(FilesSource):
    """The JSON objects, as dicts, of the non-blank lines of the files that match a glob."""


@attrs.frozen
class DataFrameSource(BatchSource):
    """The rows, as dicts, of an existing Spark DataFrame."""

    dataFrame: object


@attrs.frozen
class ItemsSource(BatchSource):
    """Items given in the program."""

    items: tuple


def itemsSource(items: Iterable) -> ItemsSource:
    """Return the source of the given items (``Sources.items``); they must be picklable."""
    values = tuple(items)
    checkPicklable(values, "items", "items")
    return ItemsSource("items", values)


def inputPaths(directory, glob, origin: str) -> tuple[str, str]:
    """Return a source's ``directory`` (a str or a path) and ``glob`` as str; refuse what no
    file system takes (see ``checkedPath``), naming ``origin`` and the line of the user's call."""
    who = f"{origin} (called at {SourceLocation.ofUserCall()})"
    return checkedPath(directory, who, "directory", PipelineError), checkedPath(glob, who, "glob", PipelineError)


def readableCharset(charset: str, origin: str) -> str:
    """Return ``charset`` if files in it can be split into lines by byte; else raise a
    PipelineError naming ``origin`` and the line of the user's call."""
    problem = charsetProblem(charset)
    if problem is not None:
        msg = f"{origin} (called at {SourceLocation.ofUserCall()}): {problem}"
        raise PipelineError(msg)
    return charset
