"""Aggregation processors: accumulate per key or globally, combine partial accumulators."""

from collections.abc import Callable, Iterable, Iterator

import attrs

from coredag.aggregate_operation import AggregateOperation
from coredag.errors import UserFunctionError, shorten
from coredag.processor import AbstractProcessor, ProcessorContext
from coredag.standard import PartitionFunction, StandardProcessorSupplier

_MISSING = object()


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
    combine = op.combineFn
    for entry in entries:
        key, acc = entry
        current = into.get(key, _MISSING)
        into[key] = acc if current is _MISSING else _call(stageName, combine, entry, current, acc)
    return into


def finishedEntries(op: AggregateOperation, stageName: str, accumulators: dict) -> Iterator:
    """Yield ``(key, finish(acc))`` for every key."""
    finish = op.finishFn
    for key, acc in accumulators.items():
        yield key, _call(stageName, finish, (key, acc), acc)


@attrs.frozen
class AccumulateByKeyP(StandardProcessorSupplier):
    """First stage of a keyed aggregation: emits ``(key, accumulator)`` per key seen."""

    keyFn: Callable
    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that accumulates the partition and emits its accumulators."""
        return lambda items: iter(
            accumulateByKey(self.op, self.keyFn, self.stageName, items, {}).items()
        )

    def __call__(self) -> "KeyedStateProcessor":
        return KeyedStateProcessor(
            lambda item, state: accumulateByKey(self.op, self.keyFn, self.stageName, (item,), state),
            lambda state: iter(state.items()),
        )


@attrs.frozen
class CombineByKeyP(StandardProcessorSupplier):
    """Second stage of a keyed aggregation: combines accumulators, emits ``(key, result)``."""

    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that combines the partition's accumulators and finishes them."""
        return lambda entries: finishedEntries(
            self.op, self.stageName, combineByKey(self.op, self.stageName, entries, {})
        )

    def __call__(self) -> "KeyedStateProcessor":
        return KeyedStateProcessor(
            lambda entry, state: combineByKey(self.op, self.stageName, (entry,), state),
            lambda state: finishedEntries(self.op, self.stageName, state),
        )


@attrs.frozen
class AggregateByKeyP(StandardProcessorSupplier):
    """Single-stage keyed aggregation: accumulates and finishes, emits ``(key, result)``."""

    keyFn: Callable
    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that accumulates the partition and emits finished results."""
        return lambda items: finishedEntries(
            self.op,
            self.stageName,
            accumulateByKey(self.op, self.keyFn, self.stageName, items, {}),
        )

    def __call__(self) -> "KeyedStateProcessor":
        return KeyedStateProcessor(
            lambda item, state: accumulateByKey(self.op, self.keyFn, self.stageName, (item,), state),
            lambda state: finishedEntries(self.op, self.stageName, state),
        )


class KeyedStateProcessor(AbstractProcessor):
    """Folds every item into a dict of per-key state, emits from it on ``complete()``."""

    def __init__(self, fold: Callable[[object, dict], dict], emit: Callable[[dict], Iterator]):
        self._fold, self._emit = fold, emit
        self._state: dict = {}
        self._output: Iterator | None = None

    def tryProcess0(self, item) -> bool:
        """Fold ``item`` into the state."""
        self._fold(item, self._state)
        return True

    def complete(self) -> bool:
        """Emit the state's entries; False while the outbox refuses some."""
        if self._output is None:
            self._output = self._emit(self._state)
        return self.emitFromTraverser(self._output)


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


@attrs.frozen
class AccumulateP(StandardProcessorSupplier):
    """First stage of a global aggregation: emits its partition's accumulator."""

    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that accumulates the partition into one accumulator."""
        return lambda items: iter(
            (accumulateAll(self.op, self.stageName, items, self._create()),)
        )

    def _create(self) -> object:
        return _call(self.stageName, self.op.createFn, None)

    def __call__(self) -> "GlobalStateProcessor":
        return GlobalStateProcessor(
            self._create,
            lambda item, acc: accumulateAll(self.op, self.stageName, (item,), acc),
            lambda acc: iter((acc,)),
        )


@attrs.frozen
class CombineP(StandardProcessorSupplier):
    """Second stage of a global aggregation: combines accumulators, emits the result."""

    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that combines all accumulators and emits the finished result."""
        return lambda accumulators: finishedResult(
            self.op,
            self.stageName,
            combineAll(self.op, self.stageName, accumulators, self._create()),
        )

    def _create(self) -> object:
        return _call(self.stageName, self.op.createFn, None)

    def __call__(self) -> "GlobalStateProcessor":
        return GlobalStateProcessor(
            self._create,
            lambda other, acc: combineAll(self.op, self.stageName, (other,), acc),
            lambda acc: finishedResult(self.op, self.stageName, acc),
        )


@attrs.frozen
class AggregateP(StandardProcessorSupplier):
    """Single-stage global aggregation: accumulates everything, emits the result."""

    op: AggregateOperation
    stageName: str

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return a loop that accumulates all items and emits the finished result."""
        return lambda items: finishedResult(
            self.op,
            self.stageName,
            accumulateAll(self.op, self.stageName, items, self._create()),
        )

    def _create(self) -> object:
        return _call(self.stageName, self.op.createFn, None)

    def __call__(self) -> "GlobalStateProcessor":
        return GlobalStateProcessor(
            self._create,
            lambda item, acc: accumulateAll(self.op, self.stageName, (item,), acc),
            lambda acc: finishedResult(self.op, self.stageName, acc),
        )


class GlobalStateProcessor(AbstractProcessor):
    """Folds every item into one state value, emits from it on ``complete()``."""

    def __init__(
        self,
        create: Callable[[], object],
        fold: Callable[[object, object], object],
        emit: Callable[[object], Iterator],
    ) -> None:
        self._create, self._fold, self._emit = create, fold, emit
        self._state = _MISSING
        self._output: Iterator | None = None

    def tryProcess0(self, item) -> bool:
        """Fold ``item`` into the state."""
        self._state = self._fold(item, self._currentState())
        return True

    def complete(self) -> bool:
        """Emit from the state; False while the outbox refuses."""
        if self._output is None:
            self._output = self._emit(self._currentState())
        return self.emitFromTraverser(self._output)

    def _currentState(self) -> object:
        if self._state is _MISSING:
            self._state = self._create()
        return self._state
