"""Fused map / filter / flat-map stages: one vertex, each stage still named in errors."""

import enum
import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import UserFunctionError, shorten


class StepKind(enum.Enum):
    """What a stateless stage does with its function's result."""

    MAP = "map"
    FILTER = "filter"
    FLAT_MAP = "flat-map"
    PEEK = "peek"


@attrs.frozen
class StatelessStep:
    """One user stage: its kind, its function and the name errors report."""

    kind: StepKind
    fn: Callable
    stageName: str

    def over(self, items: Iterable) -> Iterator:
        """Apply the stage to a stream of items; a map returning None drops the item."""
        return _STEP_LOOPS[self.kind](self.fn, self.stageName, items)

    def composed(self, items: Iterator) -> Iterator:
        """Apply the stage with C-level iterators only; errors do not name the stage."""
        return _C_LEVEL[self.kind](self.fn, items)


def _failure(stageName: str, item: object, cause: Exception) -> UserFunctionError:
    return UserFunctionError(stageName, shorten(item), cause)


def _mapLoop(fn: Callable, stageName: str, items: Iterable) -> Iterator:
    for item in items:
        try:
            result = fn(item)
        except Exception as cause:
            raise _failure(stageName, item, cause) from cause
        if result is not None:
            yield result


def _filterLoop(fn: Callable, stageName: str, items: Iterable) -> Iterator:
    for item in items:
        try:
            keep = fn(item)
        except Exception as cause:
            raise _failure(stageName, item, cause) from cause
        if keep:
            yield item


def _flatMapLoop(fn: Callable, stageName: str, items: Iterable) -> Iterator:
    for item in items:
        try:
            yield from fn(item)
        except Exception as cause:
            raise _failure(stageName, item, cause) from cause


def _peekLoop(fn: Callable, stageName: str, items: Iterable) -> Iterator:
    for item in items:
        try:
            yield fn(item)
        except Exception as cause:
            raise _failure(stageName, item, cause) from cause


_STEP_LOOPS = {
    StepKind.MAP: _mapLoop,
    StepKind.FILTER: _filterLoop,
    StepKind.FLAT_MAP: _flatMapLoop,
    StepKind.PEEK: _peekLoop,
}

_isNotNone = functools.partial(operator.is_not, None)

_C_LEVEL = {
    StepKind.MAP: lambda fn, items: filter(_isNotNone, map(fn, items)),
    StepKind.FILTER: filter,
    StepKind.FLAT_MAP: lambda fn, items: itertools.chain.from_iterable(map(fn, items)),
    StepKind.PEEK: map,
}


@attrs.frozen
class StatelessChainP(StandardProcessorSupplier):
    """Runs a chain of map / filter / flat-map stages over each item."""

    steps: tuple[StatelessStep, ...]

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop running the stages over each batch with C-level iterators, counting
        each stage's items per batch when the job is measured."""
        if context.metrics is None:
            return functools.partial(self.overBatches, None)
        names = tuple(step.stageName for step in self.steps)
        return functools.partial(self.overBatches, context.metrics.stageCounts(context.vertexName, names))

    def overBatches(self, counts: list[int] | None, batches: Iterable[list]) -> Iterator[list]:
        """Run the stages over each batch; on a failure, replay the batch to name the stage.

        ``counts``, if given, gains the batch's items into the first stage and out of each."""
        for batch in batches:
            try:
                output = self.composed(batch) if counts is None else self.counted(batch, counts)
            except Exception:
                list(self.over(batch))
                raise
            if output:
                yield output

    def composed(self, batch: list) -> list:
        """Run every stage over ``batch`` with C-level iterators only."""
        items = iter(batch)
        for step in self.steps:
            items = step.composed(items)
        return list(items)

    def counted(self, batch: list, counts: list[int]) -> list:
        """Run every stage over ``batch`` as ``composed`` does, counting each stage's output."""
        counts[0] += len(batch)
        items = batch
        for number, step in enumerate(self.steps, start=1):
            items = list(step.composed(iter(items)))
            counts[number] += len(items)
        return items

    def over(self, items: Iterable) -> Iterator:
        """Run every stage, in order, over a stream of items."""
        for step in self.steps:
            items = step.over(items)
        return iter(items)

    def __call__(self) -> "StatelessChainProcessor":
        return StatelessChainProcessor(self)


class StatelessChainProcessor(AbstractProcessor):
    """The cooperative form of a stateless chain: a flat-mapper over the fused stages."""

    def __init__(self, chain: StatelessChainP) -> None:
        self._flatMapper = self.flatMapper(lambda item: chain.over((item,)))

    def tryProcess0(self, item) -> bool:
        """Emit what the chain makes of ``item``."""
        return self._flatMapper.tryProcess(item)
