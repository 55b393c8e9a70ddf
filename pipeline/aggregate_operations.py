"""Factories of common aggregate operations, with Jet's names and empty results."""

import functools
import math
import operator
from collections.abc import Callable

from coredag.aggregate_operation import AggregateOperation, identity, increment, zero


def _addValue(valueFn: Callable, total, item: object):
    return total + valueFn(item)


def _newTotalAndCount() -> tuple:
    return (0, 0)


def _addToTotalAndCount(valueFn: Callable, acc: tuple, item: object) -> tuple:
    return (acc[0] + valueFn(item), acc[1] + 1)


def _combineTotalsAndCounts(left: tuple, right: tuple) -> tuple:
    return (left[0] + right[0], left[1] + right[1])


def _deductTotalsAndCounts(left: tuple, right: tuple) -> tuple:
    return (left[0] - right[0], left[1] - right[1])


def _mean(acc: tuple) -> float:
    total, count = acc
    return total / count if count else math.nan


def _append(items: list, item: object) -> list:
    items.append(item)
    return items


def _extend(left: list, right: list) -> list:
    left.extend(right)
    return left


class AggregateOperations:
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
            combineFn=_combineTotalsAndCounts,
            deductFn=_deductTotalsAndCounts,
            exportFn=_mean,
        )

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

