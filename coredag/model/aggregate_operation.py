"""AggregateOperation: Jet's create / accumulate / combine / deduct / export / finish."""

import functools
from collections.abc import Callable
from typing import Self

import attrs

from sparkjet.coredag.errors import PipelineError

_Unary = Callable[[object], object]
_Binary = Callable[[object, object], object]


def identity(value):
    """Return ``value`` unchanged."""
    return value


def zero() -> int:
    """Return 0: the accumulator of counting and summing before any item."""
    return 0


def increment(count: int, item: object) -> int:
    """Return ``count + 1``: counting's accumulate function (the fast path recognizes it)."""
    return count + 1


@attrs.frozen
class AggregateOperation:
    """How to aggregate items: an accumulator made by ``createFn`` and folded by the others.

    ``accumulateFn(acc, item)`` and ``combineFn(left, right)`` return the accumulator, so
    immutable values such as ints work; ``combineFn`` may mutate only its left argument.
    Without ``combineFn`` the planner aggregates in one stage. ``exportFn`` reads a result
    without consuming the accumulator; ``finishFn`` (``exportFn`` unless given) is the last
    call on it.
    """

    createFn: Callable[[], object]
    accumulateFn: Callable[[object, object], object]
    combineFn: Callable[[object, object], object] | None = None
    deductFn: Callable[[object, object], object] | None = None
    exportFn: Callable[[object], object] = identity
    finishFn: Callable[[object], object] = attrs.field(
        default=attrs.Factory(lambda self: self.exportFn, takes_self=True)
    )
    arity: int = attrs.field(default=1, kw_only=True)
    """How many inputs it aggregates; above 1, ``accumulateFn`` takes ``(ordinal, item)`` pairs."""

    @staticmethod
    def withCreate(createFn: Callable[[], object]) -> "AggregateOperationBuilder":
        """Start building an operation whose accumulators ``createFn`` makes, as in Jet."""
        return AggregateOperationBuilder(createFn)

    def andThen(self, thenFn: _Unary) -> "AggregateOperation":
        """Return this operation with ``thenFn`` applied to what export and finish return."""
        return attrs.evolve(
            self,
            exportFn=functools.partial(_then, thenFn, self.exportFn),
            finishFn=functools.partial(_then, thenFn, self.finishFn),
        )

    def withIdentityFinish(self) -> "AggregateOperation":
        """Return this operation finishing with the accumulator itself; it cannot export."""
        return attrs.evolve(self, exportFn=_unsupportedExport, finishFn=identity)

    def withCombiningAccumulateFn(self, getAccFn: _Unary) -> "AggregateOperation":
        """Return this operation accumulating items that hold accumulators (``getAccFn(item)``)
        by combining them: the second stage of a two-stage aggregation."""
        if self.combineFn is None:
            raise PipelineError("The 'combine' primitive is missing")
        return attrs.evolve(self, accumulateFn=functools.partial(_combineHeld, self.combineFn, getAccFn), arity=1)


def _then(thenFn: _Unary, fn: _Unary, acc: object) -> object:
    return thenFn(fn(acc))


def _unsupportedExport(acc: object) -> object:
    raise PipelineError("Can't use exportFn on an aggregate operation with identity finishFn")


def _combineHeld(combineFn: _Binary, getAccFn: _Unary, acc: object, item: object) -> object:
    return combineFn(acc, getAccFn(item))


@attrs.frozen
class AggregateOperationBuilder:
    """``AggregateOperation.withCreate(createFn)``: ``andAccumulate`` comes next."""

    createFn: Callable[[], object]

    def andAccumulate(self, accumulateFn: _Binary) -> "AggregateOperationBuilder.Arity1":
        """Register the accumulate function; the other steps follow on the returned builder."""
        return AggregateOperationBuilder.Arity1(self.createFn, accumulateFn)

    @attrs.frozen
    class Arity1:
        """An operation with create and accumulate so far; a finish step returns it."""

        createFn: Callable[[], object]
        accumulateFn: _Binary
        combineFn: _Binary | None = None
        deductFn: _Binary | None = None
        exportFn: _Unary | None = None

        def andCombine(self, combineFn: _Binary | None) -> Self:
            """Register the combine function (None: the planner aggregates in one stage)."""
            return attrs.evolve(self, combineFn=combineFn)

        def andDeduct(self, deductFn: _Binary | None) -> Self:
            """Register the deduct function."""
            return attrs.evolve(self, deductFn=deductFn)

        def andExport(self, exportFn: _Unary) -> Self:
            """Register the export function; ``andFinish`` must follow."""
            return attrs.evolve(self, exportFn=exportFn)

        def andFinish(self, finishFn: _Unary) -> AggregateOperation:
            """Register the finish function and return the operation."""
            if self.exportFn is None:
                raise PipelineError(
                    "The export primitive is not registered. Either add the missing andExport() "
                    "call or use andExportFinish() to register the same function as both the "
                    "export and finish primitive"
                )
            return self._build(self.exportFn, finishFn)

        def andExportFinish(self, exportFinishFn: _Unary) -> AggregateOperation:
            """Register one function as both export and finish and return the operation."""
            if self.exportFn is not None:
                raise PipelineError(
                    "The export primitive is already registered. Call andFinish() if you want "
                    "to register a separate finish primitive"
                )
            return self._build(exportFinishFn, exportFinishFn)

        def _build(self, exportFn: _Unary, finishFn: _Unary) -> AggregateOperation:
            return AggregateOperation(
                self.createFn, self.accumulateFn, self.combineFn, self.deductFn, exportFn, finishFn
            )
