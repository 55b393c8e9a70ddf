"""Sink processors and the terminal outputs a job hands back to its driver."""

import functools
import itertools
import json
import logging
import math
import sys
from collections.abc import Iterator

import attrs

from sparkjet.coredag.api.capabilities import Capabilities
from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import JobError, OutputError, describeStage, shorten
from sparkjet.coredag.model.assertion import AssertionCheck
from sparkjet.coredag.model.jet_event import itemOf, itemsOf
from sparkjet.coredag.processors.output_paths import (
    checkLocalTarget,
    localPathOf,
    unsafeOutputMessage,
    unsafeOutputReason,
)


@attrs.frozen
class CollectToList:
    """Terminal output: the driver appends the sink's items to the named list."""

    listName: str


@attrs.frozen
class SaveAsTextFiles:
    """Terminal output: Spark writes the sink's lines as committed part files in a directory
    the job creates; ``origin`` (``Sinks.files``...) names the sink in errors."""

    directory: str
    origin: str
    resumes: bool = False
    """A restarted stream job's: the directory is the one its earlier run claimed."""


@attrs.frozen
class CreateDataFrame:
    """Terminal output: the sink's items become the DataFrame ``name`` that ``Jet.getDataFrame``
    returns, with ``schema`` (a StructType or DDL string) or the one Spark infers."""

    name: str
    schema: object = None


@attrs.frozen
class CollectForAssertion:
    """Terminal output: the driver runs ``check`` over the sink's items."""

    check: AssertionCheck


TerminalOutput = CollectToList | CollectForAssertion | SaveAsTextFiles | CreateDataFrame | None


class SinkSupplier(StandardProcessorSupplier):
    """A sink; its processors hand items to ``terminalOutput`` through outbox bucket 0. Every
    sink writes the items of a timestamped stage without their timestamps, as Jet's do."""

    terminalOutput: TerminalOutput = None
    exactlyOnce = False
    """True for a sink that repeats no item after a restart."""

    def capabilities(self) -> Capabilities:
        """Return a standard supplier's capabilities with where its items go and whether it is exactly once."""
        return attrs.evolve(super().capabilities(), output=self.terminalOutput, exactlyOnce=self.exactlyOnce)


class DriverSinkP(SinkSupplier):
    """A sink whose items themselves go to the driver (a restarted driver's list starts empty)."""

    exactlyOnce = True

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the items themselves: they go to the driver."""
        return itemsOf

    def __call__(self) -> "ForwardingSinkProcessor":
        return ForwardingSinkProcessor(itemOf)


@attrs.frozen
class ListSinkP(DriverSinkP):
    """Appends every item to the list ``listName`` that ``Jet.getList`` returns."""

    listName: str

    @property
    def terminalOutput(self) -> CollectToList:
        """Return where the items go: the driver's list."""
        return CollectToList(self.listName)


@attrs.frozen
class AssertionSinkP(DriverSinkP):
    """Hands every item to the driver, which runs an assertion over them (one processor, as Jet's)."""

    check: AssertionCheck

    @property
    def terminalOutput(self) -> CollectForAssertion:
        """Return where the items go: the driver's assertion."""
        return CollectForAssertion(self.check)


@attrs.frozen
class FilesSinkP(SinkSupplier):
    """Writes ``str(item)`` per line into part files of a new directory, committed by Spark; a
    restarted stream job ``resumes`` writing into the directory its earlier run claimed."""

    directory: str
    resumes: bool = attrs.field(default=False, kw_only=True)

    origin = "Sinks.files"
    exactlyOnce = True
    """A micro-batch run again rewrites its files under the same names."""

    @property
    def terminalOutput(self) -> SaveAsTextFiles:
        """Return where the lines go: committed part files."""
        return SaveAsTextFiles(self.directory, self.origin, self.resumes)

    def preflight(self) -> "FilesSinkP":
        """Refuse an unsafe or existing local output directory, before anything runs (the job
        checks a directory of another file system when it claims it); a resumed one exists."""
        reason = unsafeOutputReason(self.directory)
        if reason is not None:
            raise OutputError(unsafeOutputMessage(self.origin, self.directory, reason))
        if localPathOf(self.directory) is not None and not self.resumes:
            checkLocalTarget(self.directory, self.origin)
        return self

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function turning each item into its line."""
        return lambda batches: (list(map(str, batch)) for batch in itemsOf(batches))

    def __call__(self) -> "ForwardingSinkProcessor":
        return ForwardingSinkProcessor(_line)


@attrs.frozen
class JsonFilesSinkP(FilesSinkP):
    """Writes each item as one line of standard JSON into part files of a new directory,
    committed by Spark; NaN and infinities fail the job, or become null if ``nonFiniteAsNull``."""

    nonFiniteAsNull: bool = False

    origin = "Sinks.json"

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function turning each item into its JSON line."""
        jsonLine = functools.partial(self.jsonLine, context.vertexName)
        return lambda batches: (list(map(jsonLine, batch)) for batch in itemsOf(batches))

    def jsonLine(self, stageName: str, item) -> str:
        """Return ``item`` as one line of JSON; raise a JobError naming the stage and the item if
        it has none."""
        try:
            return json.dumps(item, ensure_ascii=False, allow_nan=False)
        except ValueError as cause:
            if self.nonFiniteAsNull:
                return json.dumps(_nonFiniteAsNull(item), ensure_ascii=False, allow_nan=False)
            reason = "NaN and infinities are not standard JSON; write them as null with Sinks.json(directory, nonFiniteAsNull=True)"
            raise self._cannotWrite(stageName, item, reason) from cause
        except TypeError as cause:
            raise self._cannotWrite(stageName, item, str(cause)) from cause

    def _cannotWrite(self, stageName: str, item, reason: str) -> JobError:
        stage = describeStage(str(stageName), getattr(stageName, "definedAt", None))
        return JobError(f"{stage}: cannot write {shorten(item)} as JSON: {reason}")

    def __call__(self) -> "JsonLinesProcessor":
        return JsonLinesProcessor(self.jsonLine)


def _nonFiniteAsNull(value):
    """Return ``value`` with every NaN and infinity inside it, at any depth, made None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _nonFiniteAsNull(element) for key, element in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nonFiniteAsNull(element) for element in value]
    return value


@attrs.frozen
class DataFrameSinkP(SinkSupplier):
    """Hands every item to Spark, which makes them the rows of the DataFrame ``name``."""

    name: str
    schema: object = None

    @property
    def terminalOutput(self) -> CreateDataFrame:
        """Return where the items go: a DataFrame."""
        return CreateDataFrame(self.name, self.schema)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the items themselves: they become rows."""
        return itemsOf

    def __call__(self) -> "ForwardingSinkProcessor":
        return ForwardingSinkProcessor(itemOf)


@attrs.frozen
class NoopSinkP(SinkSupplier):
    """Discards every item."""

    exactlyOnce = True

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop that consumes the batches and emits nothing."""
        return _discardAll

    def __call__(self) -> "DiscardingProcessor":
        return DiscardingProcessor()


def _discardAll(batches) -> Iterator:
    for _ in batches:
        pass
    yield from ()


@attrs.frozen
class LoggerSinkP(SinkSupplier):
    """Logs every item at INFO level to the logger ``sparkjet.loggerSink`` on the worker."""

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop that logs each item and emits nothing."""
        logger = workerLogger(context.logger)
        return lambda batches: _logEach(logger, itertools.chain.from_iterable(itemsOf(batches)))

    def __call__(self) -> "LoggingProcessor":
        return LoggingProcessor()


def workerLogger(logger: logging.Logger) -> logging.Logger:
    """Return ``logger``, set to print INFO to stderr if nothing configured logging."""
    root = logging.getLogger()
    if not root.handlers and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return logger


def _logEach(logger: logging.Logger, items) -> Iterator:
    for item in items:
        logger.info("%s", item)
    yield from ()


def _line(item) -> str:
    """Return the line a files sink writes of ``item``."""
    return str(itemOf(item))


class ForwardingSinkProcessor(AbstractProcessor):
    """Offers each item, converted, to bucket 0: the vertex's terminal output."""

    def __init__(self, convert) -> None:
        self._convert = convert

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Forward ``item`` of any ordinal to the terminal output; alone, the idle hook."""
        return True if ordinal is None else self.tryEmit(self._convert(item), 0)


class JsonLinesProcessor(ForwardingSinkProcessor):
    """Offers each item as its JSON line to bucket 0, naming the stage if it has none."""

    def __init__(self, jsonLine) -> None:
        self._jsonLine = jsonLine

    def onInit(self, context: ProcessorContext) -> None:
        """Name the stage in the errors of the JSON conversion."""
        jsonLine = functools.partial(self._jsonLine, context.vertexName)
        self._convert = lambda item: jsonLine(itemOf(item))


class DiscardingProcessor(AbstractProcessor):
    """Takes each item and does nothing with it."""

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Accept ``item`` of any ordinal; alone, the idle hook."""
        return True


class LoggingProcessor(AbstractProcessor):
    """Logs each item."""

    def onInit(self, context: ProcessorContext) -> None:
        """Set up the logger."""
        self._logger = workerLogger(context.logger)

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Log ``item`` of any ordinal; alone, the idle hook."""
        if ordinal is not None:
            self._logger.info("%s", itemOf(item))
        return True
