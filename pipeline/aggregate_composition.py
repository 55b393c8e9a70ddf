"""The aggregate operations made of several: all of them over the same items (``allOf`` and its
builder), and one per input of a co-aggregation (``aggregateOperation2``, its builder...)."""

import functools
from collections.abc import Callable

from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.tags import ItemsByTag, Tag
from sparkjet.coredag.processors.coaggregation import coAggregateOperation
from sparkjet.pipeline.errors import PipelineError


def _spread(outputFn: Callable, results: tuple) -> object:
    return outputFn(*results)


def _taggedResults(outputFn: Callable, results: tuple) -> object:
    return outputFn(ItemsByTag.ofResults(results))


def _createAll(createFns: tuple) -> list:
    return [create() for create in createFns]


def _accumulateAll(accumulateFns: tuple, accs: list, item: object) -> list:
    for i, accumulate in enumerate(accumulateFns):
        accs[i] = accumulate(accs[i], item)
    return accs


def _pairwise(fns: tuple, left: list, right: list) -> list:
    """Combine or deduct each part of ``right`` into the same part of ``left``."""
    for i, fn in enumerate(fns):
        left[i] = fn(left[i], right[i])
    return left


def _resultsOfAll(fns: tuple, outputFn: Callable, accs: list) -> object:
    return outputFn(tuple(fn(acc) for fn, acc in zip(fns, accs)))


def _allOf(ops: tuple, outputFn: Callable) -> AggregateOperation:
    """Run every operation over the same items; the result is ``outputFn`` of their results."""
    return AggregateOperation(
        createFn=functools.partial(_createAll, tuple(op.createFn for op in ops)),
        accumulateFn=functools.partial(_accumulateAll, tuple(op.accumulateFn for op in ops)),
        combineFn=_pairwiseOrNone([op.combineFn for op in ops]),
        deductFn=_pairwiseOrNone([op.deductFn for op in ops]),
        exportFn=functools.partial(_resultsOfAll, tuple(op.exportFn for op in ops), outputFn),
        finishFn=functools.partial(_resultsOfAll, tuple(op.finishFn for op in ops), outputFn),
    )


def _resultsBy(outputFn: Callable | None, byTag: bool) -> Callable:
    """Return how an operation of several parts hands over the tuple of their results."""
    if byTag:
        return ItemsByTag.ofResults if outputFn is None else functools.partial(_taggedResults, outputFn)
    return tuple if outputFn is None else functools.partial(_spread, outputFn)


def _pairwiseOrNone(fns: list) -> Callable | None:
    return None if None in fns else functools.partial(_pairwise, tuple(fns))


def allOf(*ops: AggregateOperation, outputFn: Callable | None = None) -> AggregateOperation:
    """Run every operation over the same items; the result is the tuple of their results
    (or ``outputFn(r0, r1, ...)``, as Jet's ``allOf(op0, op1, exportFinishFn)``)."""
    return _allOf(ops, _resultsBy(outputFn, byTag=False))


def allOfBuilder() -> "AllOfAggregationBuilder":
    """Return a builder of ``allOf`` over any number of operations, results by tag."""
    return AllOfAggregationBuilder()


def aggregateOperation2(
    op0: AggregateOperation, op1: AggregateOperation, exportFinishFn: Callable | None = None
) -> AggregateOperation:
    """Return the two-input operation aggregating input 0 with ``op0`` and input 1 with
    ``op1`` (for ``stage0.aggregate2(stage1, op)``); its result is ``(r0, r1)`` or
    ``exportFinishFn(r0, r1)``."""
    return coAggregateOperation((op0, op1), _resultsBy(exportFinishFn, byTag=False))


def aggregateOperation3(
    op0: AggregateOperation, op1: AggregateOperation, op2: AggregateOperation,
    exportFinishFn: Callable | None = None,
) -> AggregateOperation:
    """Return the three-input operation of ``op0``, ``op1`` and ``op2``; its result is
    ``(r0, r1, r2)`` or ``exportFinishFn(r0, r1, r2)``."""
    return coAggregateOperation((op0, op1, op2), _resultsBy(exportFinishFn, byTag=False))


def coAggregateOperationBuilder() -> "CoAggregateOperationBuilder":
    """Return a builder of an operation over several inputs, any number of operations per
    input (the input tags come from ``aggregateBuilder().add(stage)``)."""
    return CoAggregateOperationBuilder()


class AllOfAggregationBuilder:
    """Jet's ``AllOfAggregationBuilder``: ``add(op)`` returns the tag of its result."""

    def __init__(self) -> None:
        self._operations: list[AggregateOperation] = []

    def add(self, operation: AggregateOperation) -> Tag:
        """Add an operation over the items; return the tag of its result."""
        self._operations.append(operation)
        return Tag(len(self._operations) - 1)

    def build(self, exportFinishFn: Callable | None = None) -> AggregateOperation:
        """Return the operation; its result is ``ItemsByTag`` or ``exportFinishFn(itemsByTag)``."""
        return _allOf(tuple(self._operations), _resultsBy(exportFinishFn, byTag=True))


class CoAggregateOperationBuilder:
    """Jet's ``CoAggregateOperationBuilder``: ``add(inputTag, op)`` aggregates that input's
    items with ``op``; the result comes by the same tag."""

    def __init__(self) -> None:
        self._operations: dict[Tag, AggregateOperation] = {}

    def add(self, inputTag: Tag, operation: AggregateOperation) -> Tag:
        """Aggregate the items of ``inputTag`` with ``operation``; return the tag of its result."""
        if inputTag in self._operations:
            raise PipelineError(
                f"coAggregateOperationBuilder: {inputTag!r} already has an operation; add one per "
                "input (for several results of one input, add allOf(op1, op2) or an allOfBuilder() operation)"
            )
        self._operations[inputTag] = operation
        return inputTag

    def build(self, exportFinishFn: Callable | None = None) -> AggregateOperation:
        """Return the operation; its result is ``ItemsByTag`` or ``exportFinishFn(itemsByTag)``."""
        if not self._operations:
            raise PipelineError("coAggregateOperationBuilder: add at least one operation before build()")
        tags = sorted(self._operations)
        if [tag.index for tag in tags] != list(range(len(tags))):
            raise PipelineError(
                f"coAggregateOperationBuilder: registered tags' indices are {[tag.index for tag in tags]}, "
                f"but should be {list(range(len(tags)))}: add an operation for every input from Tag0 up"
            )
        operations = tuple(self._operations[tag] for tag in tags)
        return coAggregateOperation(operations, _resultsBy(exportFinishFn, byTag=True))
