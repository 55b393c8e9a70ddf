"""Fused map / filter / flat-map stages: one vertex, each stage still named in errors."""

import enum
from collections.abc import Callable, Iterable, Iterator

import attrs

from coredag.errors import UserFunctionError, shorten
from coredag.processor import AbstractProcessor, ProcessorContext
from coredag.standard import PartitionFunction, StandardProcessorSupplier


class StepKind(enum.Enum):
    """What a stateless stage does with its function's result."""

    MAP = "map"
    FILTER = "filter"
    FLAT_MAP = "flat-map"


@attrs.frozen
class StatelessStep:
    """One user stage: its kind, its function and the name errors report."""

    kind: StepKind
    fn: Callable
    stageName: str

    def over(self, items: Iterable) -> Iterator:
        """Apply the stage to a stream of items; a map returning None drops the item."""
        return _STEP_LOOPS[self.kind](self.fn, self.stageName, items)


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


_STEP_LOOPS = {
    StepKind.MAP: _mapLoop,
    StepKind.FILTER: _filterLoop,
    StepKind.FLAT_MAP: _flatMapLoop,
}


@attrs.frozen
class StatelessChainP(StandardProcessorSupplier):
    """Runs a chain of map / filter / flat-map stages over each item."""

    steps: tuple[StatelessStep, ...]

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return the stages composed into one generator pipeline."""
        return self.over

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
