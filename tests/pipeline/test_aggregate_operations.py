"""AggregateOperations: results, empty results, the combine law, export copies, pickling."""

import math
import statistics

import cloudpickle
import pytest

from pipeline import AggregateOperations

ITEMS = [3, 1, 4, 1, 5, 9, 2, 6]


def halve(x):
    return x / 2


def accumulateAll(op, items):
    acc = op.createFn()
    for item in items:
        acc = op.accumulateFn(acc, item)
    return acc


def aggregate(op, items):
    """Run an operation over items in one accumulator, as a single-stage plan does."""
    return op.finishFn(accumulateAll(op, items))


def combinedInTwo(op, items, split):
    """Accumulate items[:split] and items[split:] apart, combine, finish: a two-stage plan."""
    left = accumulateAll(op, items[:split])
    right = accumulateAll(op, items[split:])
    return op.finishFn(op.combineFn(left, right))


OPERATIONS = {
    "counting": (AggregateOperations.counting, len),
    "summing": (lambda: AggregateOperations.summing(halve), lambda xs: sum(x / 2 for x in xs)),
    "averaging": (lambda: AggregateOperations.averaging(float), statistics.mean),
    "toList": (AggregateOperations.toList, list),
}


@pytest.mark.parametrize("name", OPERATIONS)
def test_result_equals_an_independent_computation(name):
    make, expected = OPERATIONS[name]
    assert aggregate(make(), ITEMS) == pytest.approx(expected(ITEMS))


def test_results_on_a_few_items():
    items = [2, 4, 9]
    assert aggregate(AggregateOperations.counting(), items) == 3
    assert aggregate(AggregateOperations.summing(int), items) == 15
    assert aggregate(AggregateOperations.averaging(int), items) == 5
    assert aggregate(AggregateOperations.toList(), items) == [2, 4, 9]


def test_empty_results_are_0_0_nan_and_empty_list():
    assert aggregate(AggregateOperations.counting(), []) == 0
    assert aggregate(AggregateOperations.summing(int), []) == 0
    assert math.isnan(aggregate(AggregateOperations.averaging(int), []))
    assert aggregate(AggregateOperations.toList(), []) == []


@pytest.mark.parametrize("name", OPERATIONS)
def test_combine_law_for_two_items(name):
    op = OPERATIONS[name][0]()
    a, b = 7, 10
    together = op.finishFn(op.accumulateFn(op.accumulateFn(op.createFn(), a), b))
    apart = op.finishFn(
        op.combineFn(op.accumulateFn(op.createFn(), a), op.accumulateFn(op.createFn(), b))
    )
    assert apart == together


@pytest.mark.parametrize("name", OPERATIONS)
@pytest.mark.parametrize("split", [0, 3, len(ITEMS)])
def test_combining_partial_accumulators_equals_one_accumulator(name, split):
    make = OPERATIONS[name][0]
    assert combinedInTwo(make(), ITEMS, split) == aggregate(make(), ITEMS)


def test_toList_combine_keeps_the_order_left_then_right():
    op = AggregateOperations.toList()
    assert op.combineFn(accumulateAll(op, [1, 2]), accumulateAll(op, [3])) == [1, 2, 3]


def test_toList_combine_does_not_mutate_its_right_argument():
    op = AggregateOperations.toList()
    right = accumulateAll(op, [3, 4])
    op.combineFn(accumulateAll(op, [1]), right)
    assert right == [3, 4]


def test_toList_export_returns_a_copy():
    op = AggregateOperations.toList()
    acc = accumulateAll(op, ["a", "b"])
    exported = op.exportFn(acc)
    exported.append("mutated")
    assert acc == ["a", "b"]
    assert op.exportFn(acc) == ["a", "b"]


def test_averaging_export_does_not_consume_the_accumulator():
    op = AggregateOperations.averaging(int)
    acc = accumulateAll(op, [1, 2])
    assert op.exportFn(acc) == 1.5
    assert op.finishFn(op.accumulateFn(acc, 6)) == 3


@pytest.mark.parametrize("name", OPERATIONS)
def test_operations_still_work_after_a_cloudpickle_round_trip(name):
    make, expected = OPERATIONS[name]
    shipped = cloudpickle.loads(cloudpickle.dumps(make()))
    assert aggregate(shipped, ITEMS) == pytest.approx(expected(ITEMS))
    assert combinedInTwo(shipped, ITEMS, 3) == pytest.approx(expected(ITEMS))


def test_summing_with_a_lambda_survives_a_cloudpickle_round_trip():
    shipped = cloudpickle.loads(cloudpickle.dumps(AggregateOperations.summing(lambda s: len(s))))
    assert aggregate(shipped, ["ab", "cde"]) == 5
