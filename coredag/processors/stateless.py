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


_isNotNone = functools.partial(operator.is_not, None)


def _mapComposed(fn: Callable, items: Iterator) -> Iterator:
    return filter(_isNotNone, map(fn, items))


def _flatMapComposed(fn: Callable, items: Iterator) -> Iterator:
    return itertools.chain.from_iterable(map(fn, items))


@attrs.frozen
class StepLoops:
    """How one kind of step runs: ``loop(fn, stageName, items)`` names the stage in errors,
    ``composed(fn, items)`` uses C-level iterators only."""

    label: str
    loop: Callable[[Callable, str, Iterable], Iterator]
    composed: Callable[[Callable, Iterator], Iterator]


class StepKind(enum.Enum):
    """What a stateless stage does with its function's result; each kind carries its loops, so
    a new kind is one member here (and its stage's ``stepKind``)."""

    MAP = StepLoops("map", _mapLoop, _mapComposed)
    FILTER = StepLoops("filter", _filterLoop, filter)
    FLAT_MAP = StepLoops("flat-map", _flatMapLoop, _flatMapComposed)
    PEEK = StepLoops("peek", _peekLoop, map)

    def __reduce_ex__(self, protocol: int) -> tuple:
        """Pickle by name: a worker finds the same member, loops and all."""
        return getattr, (StepKind, self.name)


@attrs.frozen
class StatelessStep:
    """One user stage: its kind, its function and the name errors report."""

    kind: StepKind
    fn: Callable
    stageName: str

    def over(self, items: Iterable) -> Iterator:
        """Apply the stage to a stream of items; a map returning None drops the item."""
        return self.kind.value.loop(self.fn, self.stageName, items)

    def composed(self, items: Iterator) -> Iterator:
        """Apply the stage with C-level iterators only; errors do not name the stage."""
        return self.kind.value.composed(self.fn, items)


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
