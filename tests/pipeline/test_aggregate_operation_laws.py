"""The laws every AggregateOperation keeps, checked with hypothesis for every factory.

Items ``a`` then ``b`` in one accumulator give what ``a`` and ``b`` in two accumulators give
after combine (left then right); export leaves the accumulator alone and shares nothing
mutable with it; finish gives what export gives; deduct undoes combine; the empty result is
Jet's; operations and accumulators survive the pickling that Spark does.
"""

import copy
import math
import operator
import pickle
from collections.abc import Callable

import attrs
import cloudpickle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkjet.coredag.model.aggregate_operation import identity
from sparkjet.pipeline import AggregateOperation
from sparkjet.pipeline import AggregateOperations as ops

first = operator.itemgetter(0)
second = operator.itemgetter(1)

SMALL_INTS = st.integers(-50, 50)
KEYED = st.tuples(st.integers(0, 4), st.integers(-50, 50))
KEYED_TEXT = st.tuples(st.integers(0, 4), st.text("xy", max_size=2))
POINTS = st.tuples(st.integers(-20, 20), st.integers(-1000, 1000))
FLOAT_POINTS = st.tuples(
    st.floats(-1e3, 1e3, allow_nan=False), st.floats(-1e3, 1e3, allow_nan=False)
)
TEXT = st.text("ab,", max_size=3)


def lists(items: st.SearchStrategy, **kwargs) -> st.SearchStrategy:
    """Lists short enough that many examples run quickly."""
    return st.lists(items, max_size=12, **kwargs)


def halfIfEven(x: int) -> float | None:
    return None if x % 2 else x / 2


def isOdd(x: int) -> bool:
    return x % 2 == 1


def countdown(x: int) -> range:
    return range(x % 4)


@attrs.frozen
class Case:
    """One factory under test: how to make it, items to feed it, and its empty result."""

    name: str
    make: Callable[[], AggregateOperation]
    items: st.SearchStrategy
    empty: object


CASES = [
    Case("counting", ops.counting, lists(SMALL_INTS), 0),
    Case("summing", lambda: ops.summing(abs), lists(SMALL_INTS), 0),
    Case("averaging", lambda: ops.averaging(identity), lists(SMALL_INTS), math.nan),
    Case("minBy", lambda: ops.minBy(first), lists(KEYED), None),
    Case("maxBy", lambda: ops.maxBy(first), lists(KEYED), None),
    Case("topN", lambda: ops.topN(3, first), lists(KEYED), []),
    Case("bottomN", lambda: ops.bottomN(3, first), lists(KEYED), []),
    Case("toList", ops.toList, lists(SMALL_INTS), []),
    Case("toSet", ops.toSet, lists(SMALL_INTS), set()),
    Case("toMap", lambda: ops.toMap(first, second), lists(KEYED, unique_by=first), {}),
    Case("toMap-merge", lambda: ops.toMap(first, second, operator.add), lists(KEYED_TEXT), {}),
    Case("groupingBy", lambda: ops.groupingBy(first), lists(KEYED), {}),
    Case("groupingBy-counting", lambda: ops.groupingBy(first, ops.counting()), lists(KEYED), {}),
    Case(
        "groupingBy-sorting",
        lambda: ops.groupingBy(first, ops.sorting(second, reverse=True)),
        lists(KEYED),
        {},
    ),
    Case("mapping", lambda: ops.mapping(halfIfEven, ops.toList()), lists(SMALL_INTS), []),
    Case("filtering", lambda: ops.filtering(isOdd, ops.summing(identity)), lists(SMALL_INTS), 0),
    Case("flatMapping", lambda: ops.flatMapping(countdown, ops.toList()), lists(SMALL_INTS), []),
    Case(
        "reducing",
        lambda: ops.reducing(0, abs, operator.add, operator.sub),
        lists(SMALL_INTS),
        0,
    ),
    Case("reducing-strings", lambda: ops.reducing("", str, operator.add), lists(SMALL_INTS), ""),
    Case("pickAny", ops.pickAny, lists(KEYED), None),
    Case("sorting", ops.sorting, lists(SMALL_INTS), []),
    Case("sorting-by-key", lambda: ops.sorting(first, reverse=True), lists(KEYED), []),
    Case("concatenating", ops.concatenating, lists(TEXT), ""),
    Case("concatenating-joined", lambda: ops.concatenating(",", "[", "]"), lists(TEXT), "[]"),
    Case("linearTrend", lambda: ops.linearTrend(first, second), lists(POINTS), math.nan),
    Case(
        "linearTrend-floats", lambda: ops.linearTrend(first, second), lists(FLOAT_POINTS), math.nan
    ),
    Case(
        "allOf",
        lambda: ops.allOf(ops.counting(), ops.summing(identity), ops.averaging(identity)),
        lists(SMALL_INTS),
        (0, 0, math.nan),
    ),
    Case(
        "allOf-collections",
        lambda: ops.allOf(ops.toList(), ops.minBy(identity), ops.groupingBy(isOdd)),
        lists(SMALL_INTS),
        ([], None, {}),
    ),
]

DEDUCTING = [case for case in CASES if case.make().deductFn is not None]


def cases(selected: list[Case]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", selected, ids=[case.name for case in selected])


def accumulated(op: AggregateOperation, items: list) -> object:
    acc = op.createFn()
    for item in items:
        acc = op.accumulateFn(acc, item)
    return acc


def drawSplit(data: st.DataObject, case: Case) -> tuple[list, list]:
    """Draw items and split them into a left and a right part."""
    items = data.draw(case.items, label="items")
    split = data.draw(st.integers(0, len(items)), label="split")
    return items[:split], items[split:]


class _NaN:
    def __repr__(self) -> str:
        return "NaN"


NAN = _NaN()
SCRIBBLE = "scribbled"


def canonical(value: object) -> object:
    """Return ``value`` with every NaN replaced by one marker, so that NaN equals NaN."""
    if isinstance(value, float) and math.isnan(value):
        return NAN
    if isinstance(value, (list, tuple)):
        return type(value)(canonical(each) for each in value)
    if isinstance(value, dict):
        return {key: canonical(each) for key, each in value.items()}
    return value


def scribble(value: object) -> None:
    """Change every list, set and dict inside ``value``."""
    if isinstance(value, (list, tuple)):
        for each in value:
            scribble(each)
    if isinstance(value, dict):
        for each in value.values():
            scribble(each)
        value[SCRIBBLE] = SCRIBBLE
    elif isinstance(value, list):
        value.append(SCRIBBLE)
    elif isinstance(value, set):
        value.add(SCRIBBLE)


@cases(CASES)
@given(data=st.data())
def test_accumulating_in_two_and_combining_equals_accumulating_in_one(case, data):
    op = case.make()
    left, right = drawSplit(data, case)
    together = op.exportFn(accumulated(op, left + right))
    apart = op.combineFn(accumulated(op, left), accumulated(op, right))
    assert canonical(op.exportFn(apart)) == canonical(together)
    intoNew = op.combineFn(op.createFn(), accumulated(op, left))
    intoNew = op.combineFn(intoNew, accumulated(op, right))
    assert canonical(op.exportFn(intoNew)) == canonical(together)


@cases(CASES)
@given(data=st.data())
def test_combine_and_finish_leave_the_right_accumulator_alone(case, data):
    op = case.make()
    left, right = drawSplit(data, case)
    rightAcc = accumulated(op, right)
    before = copy.deepcopy(op.exportFn(rightAcc))
    scribble(op.finishFn(op.combineFn(op.createFn(), rightAcc)))
    scribble(op.finishFn(op.combineFn(accumulated(op, left), rightAcc)))
    assert canonical(op.exportFn(rightAcc)) == canonical(before)


@cases(CASES)
@given(data=st.data())
def test_export_leaves_the_accumulator_alone(case, data):
    op = case.make()
    acc = accumulated(op, data.draw(case.items, label="items"))
    exported = op.exportFn(acc)
    before = copy.deepcopy(exported)
    assert canonical(op.exportFn(acc)) == canonical(before)
    scribble(exported)
    assert canonical(op.exportFn(acc)) == canonical(before)


@cases(CASES)
@given(data=st.data())
def test_finish_equals_export(case, data):
    op = case.make()
    items = data.draw(case.items, label="items")
    acc = accumulated(op, items)
    exported = op.exportFn(acc)
    assert canonical(op.finishFn(acc)) == canonical(exported)
    assert canonical(op.finishFn(accumulated(op, items))) == canonical(exported)


@cases(DEDUCTING)
@given(data=st.data())
def test_deduct_undoes_combine(case, data):
    op = case.make()
    left, right = drawSplit(data, case)
    combined = op.combineFn(accumulated(op, left), accumulated(op, right))
    deducted = op.deductFn(combined, accumulated(op, right))
    assert canonical(op.exportFn(deducted)) == canonical(op.exportFn(accumulated(op, left)))


@cases(CASES)
@given(data=st.data())
def test_operations_and_accumulators_survive_pickling(case, data):
    op = case.make()
    shipped = cloudpickle.loads(cloudpickle.dumps(op))
    left, right = drawSplit(data, case)
    leftAcc = pickle.loads(pickle.dumps(accumulated(shipped, left)))
    rightAcc = pickle.loads(pickle.dumps(accumulated(shipped, right)))
    together = op.finishFn(accumulated(op, left + right))
    assert canonical(shipped.finishFn(shipped.combineFn(leftAcc, rightAcc))) == canonical(together)


@cases(CASES)
def test_the_empty_result_is_jets(case):
    op = case.make()
    assert canonical(op.finishFn(op.createFn())) == canonical(case.empty)
    assert canonical(op.exportFn(op.createFn())) == canonical(case.empty)


def test_the_deducting_cases_are_the_ones_jet_deducts_in():
    assert [case.name for case in DEDUCTING] == [
        "counting",
        "summing",
        "averaging",
        "filtering",
        "reducing",
        "pickAny",
        "linearTrend",
        "linearTrend-floats",
        "allOf",
    ]
