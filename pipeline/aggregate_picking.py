"""The aggregate operations that pick items: the least or greatest by a key, the first ``n`` of
either, and any one."""

import bisect
import functools
import heapq
import itertools
import operator
from collections.abc import Callable

import attrs

from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.pipeline.errors import PipelineError


_rankOf = operator.itemgetter(0)


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


def minBy(keyFn: Callable) -> AggregateOperation:
    """Find the item of least ``keyFn(item)``, the first of equals; None for no items."""
    return _bestBy(keyFn, operator.lt)


def maxBy(keyFn: Callable) -> AggregateOperation:
    """Find the item of greatest ``keyFn(item)``, the first of equals; None for no items."""
    return _bestBy(keyFn, operator.gt)


def topN(n: int, keyFn: Callable) -> AggregateOperation:
    """List the ``n`` items of greatest ``keyFn(item)``, greatest first; [] for no items."""
    return _firstN("topN", n, functools.partial(_rankDescending, keyFn))


def bottomN(n: int, keyFn: Callable) -> AggregateOperation:
    """List the ``n`` items of least ``keyFn(item)``, least first; [] for no items."""
    return _firstN("bottomN", n, keyFn)


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
