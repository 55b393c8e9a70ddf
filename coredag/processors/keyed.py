"""Keyed streaming processors: distinct, stateful map, filter and flat-map, rolling aggregation.

Each keeps per-key state and emits as items arrive; the fast path and the processor share
one per-item step function. A stage with global state is one key (``GlobalKey``) on one processor.
"""

import abc
import enum
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.saves_changes import SavesChanges, TouchedKeys
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation

_MISSING = object()


class KeyedStepSupplier(StandardProcessorSupplier):
    """A vertex that maps each item, with its key's state, to at most one output item."""

    keyFn: Callable
    stageName: str

    @abc.abstractmethod
    def step(self, states: dict, key: object, item: object) -> Iterable:
        """Return the outputs for ``item`` (often one or none), updating ``states``."""

    def outputs(self, items: Iterable, states: dict, touched: TouchedKeys | None = None) -> list:
        """Return the outputs of ``items``, naming the stage if a user function raises; note
        each item's key in ``touched``, if given."""
        keyFn, step, outputs = self.keyFn, self.step, []
        for item in items:
            try:
                key = keyFn(item)
                outputs.extend(step(states, key, item))
            except Exception as cause:
                raise UserFunctionError(self.stageName, shorten(item), cause) from cause
            if touched is not None:
                touched.touch(key)
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


class KeyedStepProcessor(AbstractProcessor, SavesChanges):
    """The cooperative form of a keyed step; its snapshot holds each key's state (or each
    touched key's, saving only changes)."""

    def __init__(self, supplier: KeyedStepSupplier) -> None:
        self._states: dict = {}
        self._touched = TouchedKeys()
        self._flatMapper = self.flatMapper(lambda item: supplier.outputs((item,), self._states, self._touched))

    def tryProcess0(self, item) -> bool:
        """Emit the step's output for ``item``."""
        return self._flatMapper.tryProcess(item)

    def saveToSnapshot(self) -> bool:
        """Save each key's state."""
        self._touched.clear()
        return self.emitFromTraverserToSnapshot(iter(self._states.items()))

    def saveChangesToSnapshot(self) -> bool:
        """Save the state of each key touched since the last snapshot."""
        return self.emitFromTraverserToSnapshot(self._touched.changes(self._states, self._states.__getitem__))

    def restoreFromSnapshot(self, key: object, value: object) -> None:
        """Take back one key's state."""
        self._states[key] = value

    def forgetFromSnapshot(self, key: object) -> None:
        """Drop one key's state."""
        self._states.pop(key, None)


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

    def step(self, states: dict, key: object, item: object) -> Iterable:
        """Emit ``item`` if its key is new."""
        if key in states:
            return ()
        states[key] = True
        return (item,)


class StatefulKind(enum.Enum):
    """What a stateful stage's function returns: the output, whether to keep the item, or outputs."""

    MAP = "map"
    FILTER = "filter"
    FLAT_MAP = "flat-map"


@attrs.frozen
class GlobalKey:
    """The one key of a stage with global state: every item goes to one processor."""

    def __call__(self, item: object) -> int:
        return 0


@attrs.frozen
class MapStatefulP(KeyedStepSupplier):
    """Runs ``fn`` on each item with its key's state (made by ``createFn()`` at the key's first
    item): ``fn(state, key, item)``, or ``fn(state, item)`` where ``passesKey`` is False. By
    ``kind``, it emits the result (None: nothing), the item if the result is true, or every item
    of the result."""

    keyFn: Callable
    createFn: Callable
    fn: Callable
    stageName: str
    kind: StatefulKind = StatefulKind.MAP
    passesKey: bool = True

    def step(self, states: dict, key: object, item: object) -> Iterable:
        """Run ``fn`` on ``item`` with its key's state."""
        state = states.get(key, _MISSING)
        if state is _MISSING:
            state = states[key] = self.createFn()
        result = self.fn(state, key, item) if self.passesKey else self.fn(state, item)
        if self.kind is StatefulKind.MAP:
            return () if result is None else (result,)
        if self.kind is StatefulKind.FILTER:
            return (item,) if result else ()
        return result


@attrs.frozen
class RollingAggregateP(KeyedStepSupplier):
    """Emits ``(key, export(acc))`` (``export(acc)`` alone where not ``emitsKey``) after
    accumulating each item into its key's accumulator."""

    keyFn: Callable
    op: AggregateOperation
    stageName: str
    emitsKey: bool = True

    def step(self, states: dict, key: object, item: object) -> Iterable:
        """Accumulate ``item`` and emit the running result."""
        acc = states.get(key, _MISSING)
        acc = states[key] = self.op.accumulateFn(self.op.createFn() if acc is _MISSING else acc, item)
        result = self.op.exportFn(acc)
        return ((key, result) if self.emitsKey else result,)


@attrs.frozen
class AccumulatorHolder:
    """Makes a rolling aggregation's state on a stream: a one-item list holding a new accumulator."""

    op: AggregateOperation

    def __call__(self) -> list:
        return [self.op.createFn()]


@attrs.frozen
class RollingAccumulation:
    """A stream's rolling aggregation as a stateful map (as Jet's is): accumulates the item into
    its key's held accumulator and returns ``(key, result so far)`` (the result alone where not
    ``emitsKey``)."""

    op: AggregateOperation
    emitsKey: bool = True

    def __call__(self, holder: list, key: object, item: object) -> object:
        holder[0] = self.op.accumulateFn(holder[0], item)
        result = self.op.exportFn(holder[0])
        return (key, result) if self.emitsKey else result
