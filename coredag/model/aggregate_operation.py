"""AggregateOperation: Jet's create / accumulate / combine / deduct / export / finish."""

import functools
import operator
from collections.abc import Callable
from typing import Self

import attrs

from sparkjet.coredag.errors import PipelineError, shorten
from sparkjet.coredag.model.tags import Tag

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
class AccumulateByOrdinal:
    """The accumulate function of an operation of several inputs: it folds ``(ordinal, item)``
    pairs, each item with the accumulate function of its input."""

    accumulateFns: tuple[_Binary, ...]

    def __call__(self, acc: object, pair: tuple) -> object:
        ordinal, item = pair
        return self.accumulateFns[ordinal](acc, item)


def _accumulating(accumulateFns: tuple[_Binary, ...]) -> dict:
    """Return the ``accumulateFn`` and ``arity`` of an operation with one accumulate function
    per input."""
    if len(accumulateFns) == 1:
        return {"accumulateFn": accumulateFns[0], "arity": 1}
    return {"accumulateFn": AccumulateByOrdinal(tuple(accumulateFns)), "arity": len(accumulateFns)}


def _oneFunctionPerInput(op: "AggregateOperation", attribute: attrs.Attribute, arity: int) -> None:
    """Check that an operation of several inputs has an accumulate function for each."""
    fn = op.accumulateFn
    if arity > 1 and not (isinstance(fn, AccumulateByOrdinal) and len(fn.accumulateFns) == arity):
        raise PipelineError(
            f"An AggregateOperation of arity {arity} accumulates with an AccumulateByOrdinal of "
            f"{arity} functions, got {shorten(fn)}; build it with AggregateOperation.withCreate(...)"
            ".andAccumulate0(...).andAccumulate1(...) or give withAccumulateFns one function per input"
        )


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
    arity: int = attrs.field(default=1, kw_only=True, validator=_oneFunctionPerInput)
    """How many inputs it aggregates; above 1, ``accumulateFn`` is an ``AccumulateByOrdinal``
    taking ``(ordinal, item)`` pairs."""

    @staticmethod
    def withCreate(createFn: Callable[[], object]) -> "AggregateOperationBuilder":
        """Start building an operation whose accumulators ``createFn`` makes, as in Jet."""
        return AggregateOperationBuilder(createFn)

    def accumulateFnOf(self, tag: Tag) -> _Binary:
        """Return the accumulate function of the input ``tag`` (Jet's ``accumulateFn(tag)``)."""
        if not 0 <= tag.index < self.arity:
            raise PipelineError(
                f"This AggregateOperation has {self.arity} accumulating functions, but was asked "
                f"for function at index {tag.index}"
            )
        return self._accumulateFns()[tag.index]

    def accumulateFn0(self) -> _Binary:
        """Return the accumulate function of input 0."""
        return self.accumulateFnOf(Tag.tag0())

    def accumulateFn1(self) -> _Binary:
        """Return the accumulate function of input 1."""
        return self.accumulateFnOf(Tag.tag1())

    def accumulateFn2(self) -> _Binary:
        """Return the accumulate function of input 2."""
        return self.accumulateFnOf(Tag.tag2())

    def withAccumulateFns(self, *accumulateFns: _Binary) -> "AggregateOperation":
        """Return this operation with these accumulate functions, one per input (its arity
        becomes their number)."""
        if not accumulateFns:
            raise PipelineError("withAccumulateFns: expected at least one accumulate function, got none")
        return attrs.evolve(self, **_accumulating(accumulateFns))

    def withAccumulateFn(self, accumulateFn: _Binary) -> "AggregateOperation":
        """Return this operation of one input with ``accumulateFn``."""
        if self.arity != 1:
            raise PipelineError(
                f"withAccumulateFn: the operation aggregates {self.arity} inputs; replace one "
                "input's function with withAccumulateFn0/1/2 or all of them with withAccumulateFns"
            )
        return attrs.evolve(self, accumulateFn=accumulateFn)

    def withAccumulateFn0(self, accumulateFn: _Binary) -> "AggregateOperation":
        """Return this operation with ``accumulateFn`` for input 0."""
        return self._withAccumulateFnAt(0, accumulateFn)

    def withAccumulateFn1(self, accumulateFn: _Binary) -> "AggregateOperation":
        """Return this operation with ``accumulateFn`` for input 1."""
        return self._withAccumulateFnAt(1, accumulateFn)

    def withAccumulateFn2(self, accumulateFn: _Binary) -> "AggregateOperation":
        """Return this operation with ``accumulateFn`` for input 2."""
        return self._withAccumulateFnAt(2, accumulateFn)

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

    def _accumulateFns(self) -> tuple[_Binary, ...]:
        return self.accumulateFn.accumulateFns if self.arity > 1 else (self.accumulateFn,)

    def _withAccumulateFnAt(self, index: int, accumulateFn: _Binary) -> "AggregateOperation":
        self.accumulateFnOf(Tag(index))
        fns = list(self._accumulateFns())
        fns[index] = accumulateFn
        return self.withAccumulateFns(*fns)


def _then(thenFn: _Unary, fn: _Unary, acc: object) -> object:
    return thenFn(fn(acc))


def _unsupportedExport(acc: object) -> object:
    raise PipelineError("Can't use exportFn on an aggregate operation with identity finishFn")


def _combineHeld(combineFn: _Binary, getAccFn: _Unary, acc: object, item: object) -> object:
    return combineFn(acc, getAccFn(item))


@attrs.frozen
class AggregateOperationBuilder:
    """``AggregateOperation.withCreate(createFn)``: the accumulate functions come next."""

    createFn: Callable[[], object]

    def andAccumulate(self, accumulateFnOrTag, accumulateFn: _Binary | None = None):
        """Register the accumulate function: ``andAccumulate(fn)`` of one input, as
        ``andAccumulate0``, or ``andAccumulate(tag, fn)`` of input ``tag``, as ``varArity()``'s."""
        if accumulateFn is None:
            return self.andAccumulate0(accumulateFnOrTag)
        return self.varArity().andAccumulate(accumulateFnOrTag, accumulateFn)

    def andAccumulate0(self, accumulateFn0: _Binary) -> "AggregateOperationBuilder.Arity1":
        """Register the accumulate function of input 0; ``andAccumulate1`` may follow."""
        return AggregateOperationBuilder.Arity1(self.createFn, (accumulateFn0,))

    def varArity(self) -> "AggregateOperationBuilder.VarArity":
        """Build an operation of any number of inputs, registered by ``andAccumulate(tag, fn)``."""
        return AggregateOperationBuilder.VarArity(self.createFn, ())

    @attrs.frozen
    class _Steps:
        """An operation with create and accumulate so far; a finish step returns it."""

        createFn: Callable[[], object]
        accumulateFns: tuple
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

        def _inputOrder(self) -> tuple[_Binary, ...]:
            return self.accumulateFns

        def _build(self, exportFn: _Unary, finishFn: _Unary) -> AggregateOperation:
            return AggregateOperation(
                self.createFn, combineFn=self.combineFn, deductFn=self.deductFn, exportFn=exportFn,
                finishFn=finishFn, **_accumulating(self._inputOrder()),
            )

    @attrs.frozen
    class Arity1(_Steps):
        """Steps of an operation of one input; ``andAccumulate1`` adds a second."""

        def andAccumulate1(self, accumulateFn1: _Binary) -> "AggregateOperationBuilder.Arity2":
            """Register the accumulate function of input 1."""
            return AggregateOperationBuilder.Arity2(self.createFn, self.accumulateFns + (accumulateFn1,))

    @attrs.frozen
    class Arity2(_Steps):
        """Steps of an operation of two inputs; ``andAccumulate2`` adds a third."""

        def andAccumulate2(self, accumulateFn2: _Binary) -> "AggregateOperationBuilder.Arity3":
            """Register the accumulate function of input 2."""
            return AggregateOperationBuilder.Arity3(self.createFn, self.accumulateFns + (accumulateFn2,))

    @attrs.frozen
    class Arity3(_Steps):
        """Steps of an operation of three inputs."""

    @attrs.frozen
    class VarArity(_Steps):
        """Steps of an operation of any number of inputs; ``accumulateFns`` holds ``(tag, fn)``."""

        def andAccumulate(self, tag: Tag, accumulateFn: _Binary) -> Self:
            """Register the accumulate function of the input ``tag``."""
            if any(registered == tag for registered, _ in self.accumulateFns):
                raise PipelineError(f"Tag with index {tag.index} already registered")
            return attrs.evolve(self, accumulateFns=self.accumulateFns + ((tag, accumulateFn),))

        def _inputOrder(self) -> tuple[_Binary, ...]:
            if not self.accumulateFns:
                raise PipelineError("varArity(): register an accumulate function with andAccumulate(tag, fn) first")
            byTag = sorted(self.accumulateFns, key=operator.itemgetter(0))
            indices = [tag.index for tag, _ in byTag]
            if indices != list(range(len(indices))):
                raise PipelineError(
                    f"Registered tags' indices are {indices} but should be {list(range(len(indices)))}: "
                    "register an accumulate function for every input from Tag0 up"
                )
            return tuple(fn for _, fn in byTag)
