"""Keyed streaming processors: distinct, stateful mapping and rolling aggregation.

Each keeps per-key state and emits as items arrive; the fast path and the processor share
one per-item step function.
"""

import abc
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation

_MISSING = object()


class KeyedStepSupplier(StandardProcessorSupplier):
    """A vertex that maps each item, with its key's state, to at most one output item."""

    keyFn: Callable
    stageName: str

    @abc.abstractmethod
    def step(self, states: dict, key: object, item: object) -> object:
        """Return the output for ``item`` (``_MISSING`` for none), updating ``states``."""

    def outputs(self, items: Iterable, states: dict) -> list:
        """Return the outputs of ``items``, naming the stage if a user function raises."""
        keyFn, step, outputs = self.keyFn, self.step, []
        for item in items:
            try:
                output = step(states, keyFn(item), item)
            except Exception as cause:
                raise UserFunctionError(self.stageName, shorten(item), cause) from cause
            if output is not _MISSING:
                outputs.append(output)
        return outputs

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop running the step over every batch with one dict of states."""
        return self._overBatches

    def _overBatches(self, batches: Iterable[list]) -> Iterator[list]:
        states: dict = {}
        for batch in batches:
            outputs = self.outputs(batch, states)
            if outputs:
                yield outputs

    def __call__(self) -> "KeyedStepProcessor":
        return KeyedStepProcessor(self)


class KeyedStepProcessor(AbstractProcessor):
    """The cooperative form of a keyed step."""

    def __init__(self, supplier: KeyedStepSupplier) -> None:
        self._states: dict = {}
        self._flatMapper = self.flatMapper(lambda item: supplier.outputs((item,), self._states))

    def tryProcess0(self, item) -> bool:
        """Emit the step's output for ``item``."""
        return self._flatMapper.tryProcess(item)


@attrs.frozen
class DistinctP(KeyedStepSupplier):
    """Emits the first item of each key; the prepare step may see any subset of the keys."""

    keyFn: Callable
    stageName: str
    isPrepare: bool = False

    @property
    def acceptsAnyRouting(self) -> bool:
        """A prepare step's duplicates are removed again downstream."""
        return self.isPrepare

    def step(self, states: dict, key: object, item: object) -> object:
        """Emit ``item`` if its key is new."""
        if key in states:
            return _MISSING
        states[key] = True
        return item


@attrs.frozen
class MapStatefulP(KeyedStepSupplier):
    """Emits ``mapFn(state, key, item)`` with a state per key made by ``createFn()``."""

    keyFn: Callable
    createFn: Callable
    mapFn: Callable
    stageName: str

    def step(self, states: dict, key: object, item: object) -> object:
        """Map ``item`` with its key's state; None emits nothing."""
        state = states.get(key, _MISSING)
        if state is _MISSING:
            state = states[key] = self.createFn()
        output = self.mapFn(state, key, item)
        return _MISSING if output is None else output


@attrs.frozen
class RollingAggregateP(KeyedStepSupplier):
    """Emits ``(key, export(acc))`` after accumulating each item into its key's accumulator."""

    keyFn: Callable
    op: AggregateOperation
    stageName: str

    def step(self, states: dict, key: object, item: object) -> object:
        """Accumulate ``item`` and emit the running result."""
        acc = states.get(key, _MISSING)
        acc = states[key] = self.op.accumulateFn(self.op.createFn() if acc is _MISSING else acc, item)
        return key, self.op.exportFn(acc)
