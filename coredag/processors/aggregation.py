"""Aggregation processors: accumulate per key or globally, combine partial accumulators.

Each is a fold: an initial state, every input item folded into it, then the state's
output emitted at the end. The fast path folds the whole partition in one loop; the
processor folds item by item and emits from ``complete()``.
"""

import abc
from collections import _count_elements
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier, batched
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation, identity, increment, zero

_MISSING = object()

PREPARE_KEY_LIMIT = 1_000_000
"""Keys a keyed prepare step holds before it emits its partial accumulators early."""


def _call(stageName: str, fn: Callable, item: object, *args):
    """Call a user function, naming the stage and the item if it raises."""
    try:
        return fn(*args)
    except Exception as cause:
        raise UserFunctionError(stageName, shorten(item), cause) from cause


def accumulateByKey(
    op: AggregateOperation, keyFn: Callable, stageName: str, items: Iterable, into: dict
) -> dict:
    """Fold ``items`` into ``into``, one accumulator per ``keyFn(item)``; return ``into``."""
    create, accumulate = op.createFn, op.accumulateFn
    for item in items:
        try:
            key = keyFn(item)
            acc = into.get(key, _MISSING)
            into[key] = accumulate(create() if acc is _MISSING else acc, item)
        except Exception as cause:
            raise UserFunctionError(stageName, shorten(item), cause) from cause
    return into


def combineByKey(op: AggregateOperation, stageName: str, entries: Iterable, into: dict) -> dict:
    """Merge ``(key, accumulator)`` entries into ``into`` with the combine function."""
    combine, create = op.combineFn, op.createFn
    for entry in entries:
        key, acc = entry
        current = into.get(key, _MISSING)
        if current is _MISSING:
            current = _call(stageName, create, entry)
        into[key] = _call(stageName, combine, entry, current, acc)
    return into


def finishedEntries(op: AggregateOperation, stageName: str, accumulators: dict) -> Iterator:
    """Yield ``(key, finish(acc))`` for every key."""
    finish = op.finishFn
    for key, acc in accumulators.items():
        yield key, _call(stageName, finish, (key, acc), acc)


def accumulateAll(op: AggregateOperation, stageName: str, items: Iterable, acc: object) -> object:
    """Fold every item into ``acc`` and return it."""
    accumulate = op.accumulateFn
    for item in items:
        acc = _call(stageName, accumulate, item, acc, item)
    return acc


def combineAll(op: AggregateOperation, stageName: str, accumulators: Iterable, acc: object) -> object:
    """Combine every accumulator into ``acc`` and return it."""
    combine = op.combineFn
    for other in accumulators:
        acc = _call(stageName, combine, other, acc, other)
    return acc


def finishedResult(op: AggregateOperation, stageName: str, acc: object) -> Iterator:
    """Yield ``finish(acc)`` unless it is None."""
    result = _call(stageName, op.finishFn, acc, acc)
    if result is not None:
        yield result


class FoldingSupplier(StandardProcessorSupplier):
    """A vertex that folds all its input into one state and emits from it at the end."""

    op: AggregateOperation
    stageName: str

    @abc.abstractmethod
    def initialState(self) -> object:
        """Return the state before any item."""

    @abc.abstractmethod
    def fold(self, items: Iterable, state: object) -> object:
        """Fold ``items`` into ``state``; return the new state."""

    @abc.abstractmethod
    def emit(self, state: object) -> Iterator:
        """Yield the output for the final state."""

    def foldBatch(self, batch: list, state: object) -> object:
        """Fold one batch of the fast path into ``state``; override for a C-level fold."""
        return self.fold(batch, state)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return one loop folding the partition's batches, then emitting in batches."""
        return self.foldBatches

    def foldBatches(self, batches: Iterable[list]) -> Iterator[list]:
        """Fold every batch into the initial state, then yield the output in batches.

        A prepare step (``acceptsAnyRouting``) whose state grows past ``isFull`` emits its
        partial results early and starts again: the combine step merges them anyway.
        """
        state = self.initialState()
        for batch in batches:
            state = self.foldBatch(batch, state)
            if self.acceptsAnyRouting and self.isFull(state):
                yield from batched(self.emit(state))
                state = self.initialState()
        yield from batched(self.emit(state))

    def isFull(self, state: object) -> bool:
        """Return whether a prepare step should emit ``state`` early to bound its memory."""
        return False

    def __call__(self) -> "FoldingProcessor":
        return FoldingProcessor(self)


class _Keyed(FoldingSupplier):
    def initialState(self) -> dict:
        return {}

    def isFull(self, state: dict) -> bool:
        return len(state) >= PREPARE_KEY_LIMIT


class _Global(FoldingSupplier):
    def initialState(self) -> object:
        return _call(self.stageName, self.op.createFn, None)


@attrs.frozen
class AccumulateByKeyP(_Keyed):
    """First stage of a keyed aggregation: emits ``(key, accumulator)`` per key seen."""

    acceptsAnyRouting = True
    keyFn: Callable
    op: AggregateOperation
    stageName: str

    def fold(self, items: Iterable, state: dict) -> dict:
        """Accumulate each item into its key's accumulator."""
        return accumulateByKey(self.op, self.keyFn, self.stageName, items, state)

    def foldBatch(self, batch: list, state: dict) -> dict:
        """Count in C when the operation is counting; otherwise accumulate item by item."""
        if self.op.accumulateFn is not increment or self.op.createFn is not zero:
            return self.fold(batch, state)
        try:
            _count_elements(state, batch if self.keyFn is identity else map(self.keyFn, batch))
        except Exception:
            self.fold(batch, {})
            raise
        return state

    def emit(self, state: dict) -> Iterator:
        """Yield the ``(key, accumulator)`` entries."""
        return iter(state.items())


@attrs.frozen
class CombineByKeyP(_Keyed):
    """Second stage of a keyed aggregation: combines accumulators, emits ``(key, result)``."""

    op: AggregateOperation
    stageName: str

    def fold(self, entries: Iterable, state: dict) -> dict:
        """Combine each ``(key, accumulator)`` entry into the key's accumulator."""
        return combineByKey(self.op, self.stageName, entries, state)

    def emit(self, state: dict) -> Iterator:
        """Yield ``(key, finish(accumulator))``."""
        return finishedEntries(self.op, self.stageName, state)


@attrs.frozen
class AggregateByKeyP(_Keyed):
    """Single-stage keyed aggregation: accumulates and finishes, emits ``(key, result)``."""

    keyFn: Callable
    op: AggregateOperation
    stageName: str

    def fold(self, items: Iterable, state: dict) -> dict:
        """Accumulate each item into its key's accumulator."""
        return accumulateByKey(self.op, self.keyFn, self.stageName, items, state)

    def emit(self, state: dict) -> Iterator:
        """Yield ``(key, finish(accumulator))``."""
        return finishedEntries(self.op, self.stageName, state)


@attrs.frozen
class AccumulateP(_Global):
    """First stage of a global aggregation: emits its partition's accumulator."""

    acceptsAnyRouting = True
    op: AggregateOperation
    stageName: str

    def fold(self, items: Iterable, state: object) -> object:
        """Accumulate every item."""
        return accumulateAll(self.op, self.stageName, items, state)

    def emit(self, state: object) -> Iterator:
        """Yield the accumulator itself."""
        return iter((state,))


@attrs.frozen
class CombineP(_Global):
    """Second stage of a global aggregation: combines accumulators, emits the result."""

    op: AggregateOperation
    stageName: str

    def fold(self, accumulators: Iterable, state: object) -> object:
        """Combine every accumulator."""
        return combineAll(self.op, self.stageName, accumulators, state)

    def emit(self, state: object) -> Iterator:
        """Yield ``finish(state)`` unless it is None."""
        return finishedResult(self.op, self.stageName, state)


@attrs.frozen
class AggregateP(_Global):
    """Single-stage global aggregation: accumulates everything, emits the result."""

    op: AggregateOperation
    stageName: str

    def fold(self, items: Iterable, state: object) -> object:
        """Accumulate every item."""
        return accumulateAll(self.op, self.stageName, items, state)

    def emit(self, state: object) -> Iterator:
        """Yield ``finish(state)`` unless it is None."""
        return finishedResult(self.op, self.stageName, state)


class FoldingProcessor(AbstractProcessor):
    """The cooperative form of a FoldingSupplier: folds item by item, emits on ``complete()``."""

    def __init__(self, supplier: FoldingSupplier) -> None:
        self._supplier = supplier
        self._state = _MISSING
        self._output: Iterator | None = None

    def tryProcess0(self, item) -> bool:
        """Fold ``item`` into the state."""
        self._state = self._supplier.fold((item,), self._currentState())
        return True

    def complete(self) -> bool:
        """Emit from the final state; False while the outbox refuses."""
        if self._output is None:
            self._output = self._supplier.emit(self._currentState())
        return self.emitFromTraverser(self._output)

    def _currentState(self) -> object:
        if self._state is _MISSING:
            self._state = self._supplier.initialState()
        return self._state
