"""Factories of common aggregate operations, with Jet's names and empty results.

Every operation returns the accumulator from accumulate and combine, mutates only the left
argument of combine, and exports a value that shares no mutable state with the accumulator.
"""

import bisect
import functools
import heapq
import itertools
import math
import operator
from collections.abc import Callable
from fractions import Fraction

import attrs

from sparkjet.coredag.errors import shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation, identity, increment, zero
from sparkjet.coredag.model.tags import ItemsByTag, Tag
from sparkjet.coredag.processors.coaggregation import coAggregateOperation
from sparkjet.pipeline.errors import DuplicateKeyError, PipelineError
from sparkjet.pipeline.habits import WithHabits

_rankOf = operator.itemgetter(0)


def _addValue(valueFn: Callable, total, item: object):
    return total + valueFn(item)


def _addTuples(left: tuple, right: tuple) -> tuple:
    return tuple(map(operator.add, left, right))


def _subtractTuples(left: tuple, right: tuple) -> tuple:
    return tuple(map(operator.sub, left, right))


def _newTotalAndCount() -> tuple:
    return (0, 0)


def _addToTotalAndCount(valueFn: Callable, acc: tuple, item: object) -> tuple:
    return (acc[0] + valueFn(item), acc[1] + 1)


def _mean(acc: tuple) -> float:
    total, count = acc
    return total / count if count else math.nan


def _append(items: list, item: object) -> list:
    items.append(item)
    return items


def _extend(left: list, right: list) -> list:
    left.extend(right)
    return left


def _addToSet(items: set, item: object) -> set:
    items.add(item)
    return items


def _addAllToSet(left: set, right: set) -> set:
    left.update(right)
    return left


def _nothing() -> tuple:
    """Return an empty holder: minBy and maxBy then hold ``(key, item)``."""
    return ()


def _keepBetter(keyFn: Callable, better: Callable, held: tuple, item: object) -> tuple:
    key = keyFn(item)
    return (key, item) if not held or better(key, held[0]) else held


def _combineBetter(better: Callable, left: tuple, right: tuple) -> tuple:
    return right if right and (not left or better(right[0], left[0])) else left


def _heldItem(held: tuple) -> object:
    """Return the item a holder holds (its last element), or None if it is empty."""
    return held[-1] if held else None


def _noneCounted() -> tuple:
    """Return pickAny's empty accumulator: ``(count, item)`` of no items."""
    return 0, None


def _countAndKeepFirst(acc: tuple, item: object) -> tuple:
    count, held = acc
    return count + 1, held if count else item


def _addCountsKeepFirst(left: tuple, right: tuple) -> tuple:
    return left[0] + right[0], left[1] if left[0] else right[1]


def _deductCounts(acc: tuple, deducted: tuple) -> tuple:
    """Jet's PickAnyAccumulator.deduct: the item is kept until the count drops to 0."""
    count = acc[0] - deducted[0]
    return count, acc[1] if count else None


def _countedItem(acc: tuple) -> object:
    return acc[1]


@attrs.frozen
class _Descending:
    """A sort key that orders its ``key`` from the greatest down."""

    key: object

    def __lt__(self, other: "_Descending") -> bool:
        return other.key < self.key


def _rankDescending(keyFn: Callable, item: object) -> _Descending:
    return _Descending(keyFn(item))


def _insertRanked(n: int, rankFn: Callable, ranked: list, item: object) -> list:
    """Insert ``(rank, item)`` after the entries of equal rank; keep the best ``n``."""
    rank = rankFn(item)
    at = bisect.bisect_right(ranked, rank, key=_rankOf)
    if at < n:
        ranked.insert(at, (rank, item))
        del ranked[n:]
    return ranked


def _mergeRanked(n: int, left: list, right: list) -> list:
    return list(itertools.islice(heapq.merge(left, right, key=_rankOf), n))


def _rankedItems(ranked: list) -> list:
    return [item for _, item in ranked]


def _putValue(mergeFn: Callable | None, entries: dict, key: object, value: object) -> dict:
    if key not in entries:
        entries[key] = value
    elif mergeFn is None:
        raise DuplicateKeyError(
            f"toMap: duplicate key {shorten(key)} with the values {shorten(entries[key])} and "
            f"{shorten(value)}; expected each key once. Pass a mergeFn to combine the values "
            "of one key: toMap(keyFn, valueFn, mergeFn)"
        )
    else:
        entries[key] = mergeFn(entries[key], value)
    return entries


def _putItem(keyFn: Callable, valueFn: Callable, mergeFn: Callable | None, entries: dict, item):
    return _putValue(mergeFn, entries, keyFn(item), valueFn(item))


def _putAll(mergeFn: Callable | None, left: dict, right: dict) -> dict:
    for key, value in right.items():
        _putValue(mergeFn, left, key, value)
    return left


def _accumulateInGroup(keyFn: Callable, downstream: AggregateOperation, groups: dict, item) -> dict:
    key = keyFn(item)
    acc = groups[key] if key in groups else downstream.createFn()
    groups[key] = downstream.accumulateFn(acc, item)
    return groups


def _combineGroups(downstream: AggregateOperation, left: dict, right: dict) -> dict:
    """Combine each group of ``right`` into ``left``'s, into a new one where ``left`` has none."""
    for key, acc in right.items():
        mine = left[key] if key in left else downstream.createFn()
        left[key] = downstream.combineFn(mine, acc)
    return left


def _mapValues(fn: Callable, mapFactory: Callable, groups: dict) -> dict:
    """Return a new map of ``mapFactory`` holding ``fn`` of each group's accumulator."""
    result = mapFactory()
    for key, acc in groups.items():
        result[key] = fn(acc)
    return result


def _addToCollection(collection, item: object):
    """Add ``item`` as its collection adds: ``append`` (lists, deques) or ``add`` (sets)."""
    add = collection.append if hasattr(collection, "append") else collection.add
    add(item)
    return collection


def _addAllToCollection(left, right):
    for item in right:
        _addToCollection(left, item)
    return left


def _copiedCollection(collectionFactory: Callable, collection):
    return _addAllToCollection(collectionFactory(), collection)


def _spread(outputFn: Callable, results: tuple) -> object:
    return outputFn(*results)


def _taggedResults(outputFn: Callable, results: tuple) -> object:
    return outputFn(ItemsByTag.ofResults(results))


def _accumulateMapped(mapFn: Callable, accumulateFn: Callable, acc: object, item: object):
    mapped = mapFn(item)
    return acc if mapped is None else accumulateFn(acc, mapped)


def _accumulateIf(predicate: Callable, accumulateFn: Callable, acc: object, item: object):
    return accumulateFn(acc, item) if predicate(item) else acc


def _accumulateEach(flatMapFn: Callable, accumulateFn: Callable, acc: object, item: object):
    for each in flatMapFn(item):
        acc = accumulateFn(acc, each)
    return acc


def _reduceItem(toValueFn: Callable, combineFn: Callable, acc: object, item: object):
    return combineFn(acc, toValueFn(item))


def _sorted(keyFn: Callable | None, reverse: bool, items: list) -> list:
    return sorted(items, key=keyFn, reverse=reverse)


def _sortInPlace(keyFn: Callable | None, reverse: bool, items: list) -> list:
    items.sort(key=keyFn, reverse=reverse)
    return items


def _appendNonEmpty(parts: list, text: str) -> list:
    if text:
        parts.append(text)
    return parts


def _joined(delimiter: str, prefix: str, suffix: str, parts: list) -> str:
    return prefix + delimiter.join(parts) + suffix


def _newTrendSums() -> tuple:
    """Return ``(n, sumX, sumY, sumXY, sumX2)`` for no points."""
    return (0, 0, 0, 0, 0)


def _exact(number):
    """Return ints as they are and other numbers as Fractions, so sums lose nothing."""
    return number if isinstance(number, int) else Fraction(number)


def _addPoint(xFn: Callable, yFn: Callable, sums: tuple, item: object) -> tuple:
    x, y = _exact(xFn(item)), _exact(yFn(item))
    return _addTuples(sums, (1, x, y, x * y, x * x))


def _slope(sums: tuple) -> float:
    """Return the least-squares slope, rounded once; infinite beyond the range of floats."""
    n, sumX, sumY, sumXY, sumX2 = sums
    denominator = n * sumX2 - sumX * sumX
    if not denominator:
        return math.nan
    slope = Fraction(n * sumXY - sumX * sumY) / denominator
    try:
        return float(slope)
    except OverflowError:
        return math.inf if slope > 0 else -math.inf


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


def _bestBy(keyFn: Callable, better: Callable) -> AggregateOperation:
    return AggregateOperation(
        createFn=_nothing,
        accumulateFn=functools.partial(_keepBetter, keyFn, better),
        combineFn=functools.partial(_combineBetter, better),
        exportFn=_heldItem,
    )


def _firstN(name: str, n: int, rankFn: Callable) -> AggregateOperation:
    """Keep the ``n`` items of least ``rankFn(item)``; of equal ranks, the first ones."""
    if n < 1:
        raise PipelineError(f"{name}: expected n of at least 1, got {n}")
    return AggregateOperation(
        createFn=list,
        accumulateFn=functools.partial(_insertRanked, n, rankFn),
        combineFn=functools.partial(_mergeRanked, n),
        exportFn=_rankedItems,
    )


def _pairwiseOrNone(fns: list) -> Callable | None:
    return None if None in fns else functools.partial(_pairwise, tuple(fns))


class AggregateOperations(metaclass=WithHabits):
    """Factories of AggregateOperation."""

    @staticmethod
    def counting() -> AggregateOperation:
        """Count the items; 0 for no items."""
        return AggregateOperation(
            createFn=zero,
            accumulateFn=increment,
            combineFn=operator.add,
            deductFn=operator.sub,
        )

    @staticmethod
    def summing(valueFn: Callable) -> AggregateOperation:
        """Sum ``valueFn(item)`` over the items; 0 for no items."""
        return AggregateOperation(
            createFn=zero,
            accumulateFn=functools.partial(_addValue, valueFn),
            combineFn=operator.add,
            deductFn=operator.sub,
        )

    @staticmethod
    def averaging(valueFn: Callable) -> AggregateOperation:
        """Average ``valueFn(item)`` over the items; NaN for no items."""
        return AggregateOperation(
            createFn=_newTotalAndCount,
            accumulateFn=functools.partial(_addToTotalAndCount, valueFn),
            combineFn=_addTuples,
            deductFn=_subtractTuples,
            exportFn=_mean,
        )

    @staticmethod
    def minBy(keyFn: Callable) -> AggregateOperation:
        """Find the item of least ``keyFn(item)``, the first of equals; None for no items."""
        return _bestBy(keyFn, operator.lt)

    @staticmethod
    def maxBy(keyFn: Callable) -> AggregateOperation:
        """Find the item of greatest ``keyFn(item)``, the first of equals; None for no items."""
        return _bestBy(keyFn, operator.gt)

    @staticmethod
    def topN(n: int, keyFn: Callable) -> AggregateOperation:
        """List the ``n`` items of greatest ``keyFn(item)``, greatest first; [] for no items."""
        return _firstN("topN", n, functools.partial(_rankDescending, keyFn))

    @staticmethod
    def bottomN(n: int, keyFn: Callable) -> AggregateOperation:
        """List the ``n`` items of least ``keyFn(item)``, least first; [] for no items."""
        return _firstN("bottomN", n, keyFn)

    @staticmethod
    def toList() -> AggregateOperation:
        """Collect the items into a list; [] for no items."""
        return AggregateOperation(
            createFn=list,
            accumulateFn=_append,
            combineFn=_extend,
            exportFn=list,
            finishFn=identity,
        )

    @staticmethod
    def toSet() -> AggregateOperation:
        """Collect the items into a set; an empty set for no items."""
        return AggregateOperation(
            createFn=set,
            accumulateFn=_addToSet,
            combineFn=_addAllToSet,
            exportFn=set,
            finishFn=identity,
        )

    @staticmethod
    def toMap(
        keyFn: Callable, valueFn: Callable, mergeFn: Callable | None = None, mapFactory: Callable = dict
    ) -> AggregateOperation:
        """Collect ``{keyFn(item): valueFn(item)}`` into a map ``mapFactory`` makes; ``mergeFn``
        merges the values of one key (without it, a duplicate key is an error)."""
        return AggregateOperation(
            createFn=mapFactory,
            accumulateFn=functools.partial(_putItem, keyFn, valueFn, mergeFn),
            combineFn=functools.partial(_putAll, mergeFn),
            exportFn=functools.partial(_mapValues, identity, mapFactory),
            finishFn=identity,
        )

    @staticmethod
    def toCollection(collectionFactory: Callable) -> AggregateOperation:
        """Collect the items into a collection ``collectionFactory`` makes (``list``, ``set``,
        ``collections.deque``...), added with its ``append`` or ``add``."""
        return AggregateOperation(
            createFn=collectionFactory,
            accumulateFn=_addToCollection,
            combineFn=_addAllToCollection,
            exportFn=functools.partial(_copiedCollection, collectionFactory),
            finishFn=identity,
        )

    @staticmethod
    def groupingBy(
        keyFn: Callable, downstream: AggregateOperation | None = None, mapFactory: Callable = dict
    ) -> AggregateOperation:
        """Map each ``keyFn(item)`` to its items aggregated by ``downstream`` (default toList),
        in a map ``mapFactory`` makes."""
        downstream = AggregateOperations.toList() if downstream is None else downstream
        combineFn = None
        if downstream.combineFn is not None:
            combineFn = functools.partial(_combineGroups, downstream)
        return AggregateOperation(
            createFn=mapFactory,
            accumulateFn=functools.partial(_accumulateInGroup, keyFn, downstream),
            combineFn=combineFn,
            exportFn=functools.partial(_mapValues, downstream.exportFn, mapFactory),
            finishFn=functools.partial(_mapValues, downstream.finishFn, mapFactory),
        )

    @staticmethod
    def mapping(mapFn: Callable, downstream: AggregateOperation) -> AggregateOperation:
        """Aggregate ``mapFn(item)`` with ``downstream``; a None result skips the item."""
        return attrs.evolve(
            downstream,
            accumulateFn=functools.partial(_accumulateMapped, mapFn, downstream.accumulateFn),
        )

    @staticmethod
    def filtering(predicate: Callable, downstream: AggregateOperation) -> AggregateOperation:
        """Aggregate with ``downstream`` only the items for which ``predicate`` is true."""
        return attrs.evolve(
            downstream,
            accumulateFn=functools.partial(_accumulateIf, predicate, downstream.accumulateFn),
        )

    @staticmethod
    def flatMapping(flatMapFn: Callable, downstream: AggregateOperation) -> AggregateOperation:
        """Aggregate with ``downstream`` every value of the iterable ``flatMapFn(item)``."""
        return attrs.evolve(
            downstream,
            accumulateFn=functools.partial(_accumulateEach, flatMapFn, downstream.accumulateFn),
        )

    @staticmethod
    def reducing(
        emptyAccValue: object,
        toValueFn: Callable,
        combineFn: Callable,
        deductFn: Callable | None = None,
    ) -> AggregateOperation:
        """Fold ``toValueFn(item)`` into ``emptyAccValue`` with the associative ``combineFn``."""
        return AggregateOperation(
            createFn=functools.partial(identity, emptyAccValue),
            accumulateFn=functools.partial(_reduceItem, toValueFn, combineFn),
            combineFn=combineFn,
            deductFn=deductFn,
        )

    @staticmethod
    def pickAny() -> AggregateOperation:
        """Pick one of the items (the first one seen); None for no items. It counts the items,
        as Jet's does, so deducting all of them gives None again."""
        return AggregateOperation(
            createFn=_noneCounted,
            accumulateFn=_countAndKeepFirst,
            combineFn=_addCountsKeepFirst,
            deductFn=_deductCounts,
            exportFn=_countedItem,
        )

    @staticmethod
    def sorting(keyFn: Callable | None = None, reverse: bool = False) -> AggregateOperation:
        """List the items sorted as ``sorted(items, key=keyFn, reverse=reverse)``; [] for none."""
        return AggregateOperation(
            createFn=list,
            accumulateFn=_append,
            combineFn=_extend,
            exportFn=functools.partial(_sorted, keyFn, reverse),
            finishFn=functools.partial(_sortInPlace, keyFn, reverse),
        )

    @staticmethod
    def concatenating(
        delimiter: str = "", prefix: str = "", suffix: str = ""
    ) -> AggregateOperation:
        """Join the non-empty string items with ``delimiter`` between ``prefix`` and ``suffix``."""
        return AggregateOperation(
            createFn=list,
            accumulateFn=_appendNonEmpty,
            combineFn=_extend,
            exportFn=functools.partial(_joined, delimiter, prefix, suffix),
        )

    @staticmethod
    def linearTrend(xFn: Callable, yFn: Callable) -> AggregateOperation:
        """Least-squares slope of ``yFn(item)`` over ``xFn(item)``; NaN without two distinct x."""
        return AggregateOperation(
            createFn=_newTrendSums,
            accumulateFn=functools.partial(_addPoint, xFn, yFn),
            combineFn=_addTuples,
            deductFn=_subtractTuples,
            exportFn=_slope,
        )

    @staticmethod
    def allOf(*ops: AggregateOperation, outputFn: Callable | None = None) -> AggregateOperation:
        """Run every operation over the same items; the result is the tuple of their results
        (or ``outputFn(r0, r1, ...)``, as Jet's ``allOf(op0, op1, exportFinishFn)``)."""
        return _allOf(ops, _resultsBy(outputFn, byTag=False))

    @staticmethod
    def allOfBuilder() -> "AllOfAggregationBuilder":
        """Return a builder of ``allOf`` over any number of operations, results by tag."""
        return AllOfAggregationBuilder()

    @staticmethod
    def aggregateOperation2(
        op0: AggregateOperation, op1: AggregateOperation, exportFinishFn: Callable | None = None
    ) -> AggregateOperation:
        """Return the two-input operation aggregating input 0 with ``op0`` and input 1 with
        ``op1`` (for ``stage0.aggregate2(stage1, op)``); its result is ``(r0, r1)`` or
        ``exportFinishFn(r0, r1)``."""
        return coAggregateOperation((op0, op1), _resultsBy(exportFinishFn, byTag=False))

    @staticmethod
    def aggregateOperation3(
        op0: AggregateOperation, op1: AggregateOperation, op2: AggregateOperation,
        exportFinishFn: Callable | None = None,
    ) -> AggregateOperation:
        """Return the three-input operation of ``op0``, ``op1`` and ``op2``; its result is
        ``(r0, r1, r2)`` or ``exportFinishFn(r0, r1, r2)``."""
        return coAggregateOperation((op0, op1, op2), _resultsBy(exportFinishFn, byTag=False))

    @staticmethod
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
