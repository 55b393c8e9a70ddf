"""The aggregate operations that compute a number: count, sum, average and linear trend, each
of which can deduct what it accumulated."""

import functools
import math
import operator
from collections.abc import Callable
from fractions import Fraction

from sparkjet.coredag.model.aggregate_operation import AggregateOperation, increment, zero


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


def counting() -> AggregateOperation:
    """Count the items; 0 for no items."""
    return AggregateOperation(
        createFn=zero,
        accumulateFn=increment,
        combineFn=operator.add,
        deductFn=operator.sub,
    )


def summing(valueFn: Callable) -> AggregateOperation:
    """Sum ``valueFn(item)`` over the items; 0 for no items."""
    return AggregateOperation(
        createFn=zero,
        accumulateFn=functools.partial(_addValue, valueFn),
        combineFn=operator.add,
        deductFn=operator.sub,
    )


def averaging(valueFn: Callable) -> AggregateOperation:
    """Average ``valueFn(item)`` over the items; NaN for no items."""
    return AggregateOperation(
        createFn=_newTotalAndCount,
        accumulateFn=functools.partial(_addToTotalAndCount, valueFn),
        combineFn=_addTuples,
        deductFn=_subtractTuples,
        exportFn=_mean,
    )


def linearTrend(xFn: Callable, yFn: Callable) -> AggregateOperation:
    """Least-squares slope of ``yFn(item)`` over ``xFn(item)``; NaN without two distinct x."""
    return AggregateOperation(
        createFn=_newTrendSums,
        accumulateFn=functools.partial(_addPoint, xFn, yFn),
        combineFn=_addTuples,
        deductFn=_subtractTuples,
        exportFn=_slope,
    )
