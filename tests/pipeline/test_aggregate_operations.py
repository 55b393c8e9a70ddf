"""AggregateOperations: results, empty results, the combine law, export copies, pickling.

Results are compared with independent computations (sorted, min, max, statistics, Counter,
least squares by hand); test_aggregate_operation_laws.py checks the laws with hypothesis.
"""

import math
import operator
import statistics
from collections import Counter

import cloudpickle
import pytest

from sparkjet.coredag.model.aggregate_operation import identity, increment, zero
from sparkjet.pipeline import AggregateOperation, AggregateOperations
from sparkjet.pipeline.aggregate_operations import DuplicateKeyError
from sparkjet.pipeline.errors import PipelineError

ops = AggregateOperations
first = operator.itemgetter(0)
second = operator.itemgetter(1)

ITEMS = [3, 1, 4, 1, 5, 9, 2, 6]
SUMMING_WITHOUT_COMBINE = AggregateOperation(createFn=zero, accumulateFn=operator.add)


def halve(x):
    return x / 2


def isOdd(x):
    return x % 2 == 1


def square(x):
    return x * x


def leastSquaresSlope(points):
    """The slope of the least-squares line, from the textbook formula over the means."""
    meanX = sum(x for x, _ in points) / len(points)
    meanY = sum(y for _, y in points) / len(points)
    covariance = sum((x - meanX) * (y - meanY) for x, y in points)
    return covariance / sum((x - meanX) ** 2 for x, _ in points)


def expected(value):
    """Compare floats approximately and everything else exactly."""
    return pytest.approx(value) if isinstance(value, float) else value


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
    "counting": (ops.counting, len),
    "summing": (lambda: ops.summing(halve), lambda xs: sum(x / 2 for x in xs)),
    "averaging": (lambda: ops.averaging(float), statistics.mean),
    "minBy": (lambda: ops.minBy(identity), min),
    "maxBy": (lambda: ops.maxBy(identity), max),
    "topN": (lambda: ops.topN(3, identity), lambda xs: sorted(xs, reverse=True)[:3]),
    "bottomN": (lambda: ops.bottomN(3, identity), lambda xs: sorted(xs)[:3]),
    "toList": (ops.toList, list),
    "toSet": (ops.toSet, set),
    "toMap": (
        lambda: ops.toMap(identity, square, operator.add),
        lambda xs: {x: xs.count(x) * x * x for x in xs},
    ),
    "groupingBy": (
        lambda: ops.groupingBy(isOdd),
        lambda xs: {odd: [x for x in xs if isOdd(x) == odd] for odd in map(isOdd, xs)},
    ),
    "groupingBy-counting": (
        lambda: ops.groupingBy(isOdd, ops.counting()),
        lambda xs: Counter(map(isOdd, xs)),
    ),
    "mapping": (lambda: ops.mapping(halve, ops.toList()), lambda xs: [x / 2 for x in xs]),
    "filtering": (lambda: ops.filtering(isOdd, ops.toList()), lambda xs: list(filter(isOdd, xs))),
    "flatMapping": (lambda: ops.flatMapping(range, ops.counting()), sum),
    "reducing": (lambda: ops.reducing(1, identity, operator.mul), math.prod),
    "sorting": (ops.sorting, sorted),
    "sorting-reversed": (lambda: ops.sorting(square, reverse=True), lambda xs: sorted(xs)[::-1]),
    "concatenating": (
        lambda: ops.mapping(str, ops.concatenating("-", "<", ">")),
        lambda xs: "<" + "-".join(map(str, xs)) + ">",
    ),
    "linearTrend": (
        lambda: ops.linearTrend(identity, square),
        lambda xs: leastSquaresSlope([(x, x * x) for x in xs]),
    ),
    "allOf": (
        lambda: ops.allOf(ops.counting(), ops.summing(identity), ops.toList()),
        lambda xs: (len(xs), sum(xs), list(xs)),
    ),
}


@pytest.mark.parametrize("name", OPERATIONS)
def test_result_equals_an_independent_computation(name):
    make, compute = OPERATIONS[name]
    assert aggregate(make(), ITEMS) == expected(compute(ITEMS))


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
    make, compute = OPERATIONS[name]
    shipped = cloudpickle.loads(cloudpickle.dumps(make()))
    assert aggregate(shipped, ITEMS) == expected(compute(ITEMS))
    assert combinedInTwo(shipped, ITEMS, 3) == expected(compute(ITEMS))


def test_summing_with_a_lambda_survives_a_cloudpickle_round_trip():
    shipped = cloudpickle.loads(cloudpickle.dumps(AggregateOperations.summing(lambda s: len(s))))
    assert aggregate(shipped, ["ab", "cde"]) == 5


PEOPLE = [("ann", 31), ("bob", 25), ("cid", 31), ("dan", 25), ("eve", 40)]


def test_minBy_and_maxBy_pick_the_first_of_equal_keys_as_min_and_max_do():
    assert aggregate(ops.minBy(second), PEOPLE) == min(PEOPLE, key=second) == ("bob", 25)
    assert aggregate(ops.maxBy(len), ["ab", "cd", "e"]) == max(["ab", "cd", "e"], key=len) == "ab"
    assert combinedInTwo(ops.minBy(second), PEOPLE, 2) == ("bob", 25)


def test_topN_and_bottomN_equal_a_stable_sort_cut_to_n():
    for n in (1, 2, 3, 10):
        top = sorted(PEOPLE, key=second, reverse=True)[:n]
        bottom = sorted(PEOPLE, key=second)[:n]
        assert aggregate(ops.topN(n, second), PEOPLE) == top
        assert aggregate(ops.bottomN(n, second), PEOPLE) == bottom
        assert combinedInTwo(ops.topN(n, second), PEOPLE, 3) == top
        assert combinedInTwo(ops.bottomN(n, second), PEOPLE, 1) == bottom


def test_topN_needs_a_positive_n():
    with pytest.raises(PipelineError, match=r"^topN: expected n of at least 1, got 0$"):
        ops.topN(0, identity)


def test_toSet_collects_distinct_items():
    assert aggregate(ops.toSet(), ITEMS) == {1, 2, 3, 4, 5, 6, 9}


def test_toMap_maps_keys_to_values():
    assert aggregate(ops.toMap(first, second), PEOPLE) == dict(PEOPLE)


TO_MAP_DUPLICATE = (
    "toMap: duplicate key 'k' with the values 1 and 2; expected each key once. Pass a mergeFn "
    "to combine the values of one key: toMap(keyFn, valueFn, mergeFn)"
)


def test_toMap_without_mergeFn_fails_on_a_duplicate_key_when_accumulating():
    with pytest.raises(DuplicateKeyError) as raised:
        aggregate(ops.toMap(first, second), [("k", 1), ("j", 0), ("k", 2)])
    assert str(raised.value) == TO_MAP_DUPLICATE
    assert isinstance(raised.value, ValueError)


def test_toMap_without_mergeFn_fails_on_a_duplicate_key_when_combining():
    with pytest.raises(DuplicateKeyError) as raised:
        combinedInTwo(ops.toMap(first, second), [("k", 1), ("k", 2)], 1)
    assert str(raised.value) == TO_MAP_DUPLICATE


def test_toMap_merges_values_of_one_key_left_then_right():
    op = ops.toMap(first, second, operator.add)
    items = [("k", "a"), ("j", "x"), ("k", "b"), ("k", "c")]
    assert aggregate(op, items) == {"k": "abc", "j": "x"}
    assert combinedInTwo(op, items, 2) == {"k": "abc", "j": "x"}


def test_groupingBy_defaults_to_lists_and_takes_a_downstream_operation():
    words = ["apple", "avocado", "banana", "blueberry", "cherry"]
    assert aggregate(ops.groupingBy(first), words) == {
        "a": ["apple", "avocado"],
        "b": ["banana", "blueberry"],
        "c": ["cherry"],
    }
    assert aggregate(ops.groupingBy(first, ops.counting()), words) == Counter(map(first, words))


def test_groupingBy_combines_only_when_its_downstream_does():
    assert ops.groupingBy(isOdd, ops.counting()).combineFn is not None
    single = ops.groupingBy(isOdd, SUMMING_WITHOUT_COMBINE)
    assert single.combineFn is None
    assert aggregate(single, ITEMS) == {
        True: sum(x for x in ITEMS if isOdd(x)),
        False: sum(x for x in ITEMS if not isOdd(x)),
    }


def test_mapping_skips_items_mapped_to_None_as_in_jet():
    op = ops.mapping(second, ops.summing(identity))
    assert aggregate(op, [("a", None), ("b", 2), ("c", 3)]) == 5


def test_mapping_filtering_and_flatMapping_keep_the_downstream_combine_and_deduct():
    summing = ops.summing(identity)
    for op in (
        ops.mapping(halve, summing),
        ops.filtering(isOdd, summing),
        ops.flatMapping(range, summing),
    ):
        assert (op.createFn, op.combineFn, op.deductFn) == (zero, operator.add, operator.sub)
        assert op.accumulateFn is not summing.accumulateFn


def test_filtering_and_flatMapping_results():
    assert aggregate(ops.filtering(isOdd, ops.counting()), ITEMS) == sum(map(isOdd, ITEMS))
    assert aggregate(ops.flatMapping(str.split, ops.toList()), ["a b", "", "c"]) == ["a", "b", "c"]


def test_counting_stays_recognizable_by_the_counting_fast_path():
    counting = ops.counting()
    assert counting.accumulateFn is increment and counting.createFn is zero
    filtered = ops.filtering(isOdd, counting)
    assert filtered.accumulateFn is not increment


def test_reducing_folds_from_the_empty_value_and_deducts_when_given():
    op = ops.reducing(0, len, operator.add, operator.sub)
    assert aggregate(op, ["ab", "cde"]) == 5
    assert op.deductFn(op.combineFn(2, 3), 3) == 2
    assert ops.reducing(0, len, operator.add).deductFn is None
    assert aggregate(ops.reducing(10, len, max), []) == 10


def test_pickAny_deducts_as_jets_when_pickAny():
    """Jet's AggregateOperationsTest.when_pickAny: accumulate 1 and 2, combine, deduct 2."""
    op = ops.pickAny()
    acc1, acc2 = op.accumulateFn(op.createFn(), 1), op.accumulateFn(op.createFn(), 2)
    combined = op.combineFn(acc1, acc2)
    assert op.exportFn(combined) == 1 and op.finishFn(combined) == 1
    assert op.exportFn(op.deductFn(combined, acc2)) == 1
    assert op.exportFn(op.deductFn(op.deductFn(combined, acc2), acc1)) is None


def test_pickAny_keeps_its_item_until_every_item_is_deducted():
    op = ops.pickAny()
    three = op.createFn()
    for item in "abc":
        three = op.accumulateFn(three, item)
    onlyA = op.accumulateFn(op.createFn(), "a")
    assert op.exportFn(op.deductFn(three, onlyA)) == "a"  # "any" item: Jet keeps the picked one
    assert op.exportFn(op.deductFn(three, three)) is None


def test_pickAny_picks_one_of_the_items():
    assert aggregate(ops.pickAny(), ITEMS) in ITEMS
    assert aggregate(ops.pickAny(), [None]) is None
    assert aggregate(ops.pickAny(), []) is None


def test_sorting_is_stable_and_takes_a_key_and_reverse():
    assert aggregate(ops.sorting(second), PEOPLE) == sorted(PEOPLE, key=second)
    assert aggregate(ops.sorting(second, reverse=True), PEOPLE) == sorted(
        PEOPLE, key=second, reverse=True
    )
    assert combinedInTwo(ops.sorting(), ITEMS, 4) == sorted(ITEMS)


@pytest.mark.parametrize(
    ("args", "items", "result"),
    [
        ((), ["A", "B"], "AB"),
        ((",",), ["A", "B"], "A,B"),
        ((",", "(", ")"), ["A", "B"], "(A,B)"),
        ((",", "(", ")"), ["A", ""], "(A)"),
        ((",", "(", ")"), ["", "B"], "(B)"),
        ((",", "(", ")"), ["", ""], "()"),
        ((", ", "[", "]"), [], "[]"),
    ],
)
def test_concatenating_as_jets_tests_do(args, items, result):
    assert aggregate(ops.concatenating(*args), items) == result
    assert combinedInTwo(ops.concatenating(*args), items, 1) == result


def test_linearTrend_as_jets_test_does():
    op = ops.linearTrend(first, second)
    left = accumulateAll(op, [(1, 3), (2, 5)])
    right = accumulateAll(op, [(5, 11), (6, 13)])
    assert op.finishFn(left) == op.finishFn(right) == 2.0
    combined = op.combineFn(left, right)
    assert op.finishFn(combined) == 2.0
    assert op.finishFn(op.deductFn(combined, right)) == 2.0


@pytest.mark.parametrize(
    "points",
    [[], [(2, 1)], [(2, 1), (2, 1)], [(2, 1), (2, 1), (2, 2)], [(0.1, 1), (0.1, 2), (0.1, 3)]],
    ids=["none", "one", "equal", "same x", "same float x"],
)
def test_linearTrend_is_NaN_without_two_distinct_x(points):
    assert math.isnan(aggregate(ops.linearTrend(first, second), points))


def test_linearTrend_equals_least_squares_by_hand():
    points = [(1, 2.5), (2, 3.1), (4, 7.9), (7, 8.0), (8.5, 12.25)]
    slope = aggregate(ops.linearTrend(first, second), points)
    assert slope == pytest.approx(leastSquaresSlope(points))
    assert slope == pytest.approx(statistics.linear_regression(*zip(*points)).slope)


def test_allOf_gives_a_tuple_and_combines_and_deducts_only_when_all_parts_do():
    op = ops.allOf(ops.counting(), ops.averaging(identity), ops.maxBy(identity))
    assert aggregate(op, ITEMS) == (len(ITEMS), statistics.mean(ITEMS), max(ITEMS))
    assert combinedInTwo(op, ITEMS, 5) == (len(ITEMS), statistics.mean(ITEMS), max(ITEMS))
    assert op.deductFn is None
    assert ops.allOf(ops.counting(), ops.summing(identity)).deductFn is not None
    assert ops.allOf(ops.counting(), SUMMING_WITHOUT_COMBINE).combineFn is None


def test_linearTrend_beyond_the_range_of_floats_is_infinite():
    points = [(0.0, 0.0), (5e-324, 1.0)]
    assert aggregate(ops.linearTrend(first, second), points) == math.inf
    assert aggregate(ops.linearTrend(first, lambda point: -point[1]), points) == -math.inf
