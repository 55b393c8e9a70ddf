"""Aggregation processors' fast paths: two stages equal one stage equal collections.Counter."""

import re
from collections import Counter

import pytest

from sparkjet.coredag import AggregateOperation, ProcessorContext, UserFunctionError
from sparkjet.coredag.api.standard import batched
from sparkjet.coredag.processors import aggregation
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)

COUNTING = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda acc, item: acc + 1,
    combineFn=lambda left, right: left + right,
)
COUNTING_TO_NONE = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda acc, item: acc + 1,
    combineFn=lambda left, right: left + right,
    finishFn=lambda acc: None,
)
CONTEXT = ProcessorContext("v", 0, 1)
WORDS = "the cat and the hat and the bat".split()


def run(supplier, items):
    """Return the output of ``supplier``'s fast path over ``items``."""
    return list(supplier.fastPath(CONTEXT)(iter(items)))


def partitionsOf(items, count):
    """Deal ``items`` round-robin into ``count`` partitions."""
    return [items[i::count] for i in range(count)]


def twoStageByKey(op, keyFn, items, count):
    """Accumulate each partition by key, then combine every partition's accumulators."""
    prepare = AccumulateByKeyP(keyFn, op, "agg-prepare")
    accumulators = [entry for part in partitionsOf(items, count) for entry in run(prepare, part)]
    return run(CombineByKeyP(op, "agg"), accumulators)


def twoStageGlobal(op, items, count):
    """Accumulate each partition, then combine the accumulators."""
    prepare = AccumulateP(op, "agg-prepare")
    accumulators = [acc for part in partitionsOf(items, count) for acc in run(prepare, part)]
    return run(CombineP(op, "agg"), accumulators)


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_keyed_two_stage_equals_single_stage_equals_counter(count):
    twoStage = twoStageByKey(COUNTING, str.upper, WORDS, count)
    singleStage = run(AggregateByKeyP(str.upper, COUNTING, "agg"), WORDS)
    expected = Counter(word.upper() for word in WORDS)
    assert dict(twoStage) == dict(singleStage) == expected
    assert len(twoStage) == len(singleStage) == len(expected)


def test_keyed_accumulate_emits_one_accumulator_per_key_of_its_partition():
    assert sorted(run(AccumulateByKeyP(len, COUNTING, "agg-prepare"), WORDS)) == [(3, 8)]
    byWord = run(AccumulateByKeyP(str, COUNTING, "agg-prepare"), ["a", "b", "a"])
    assert sorted(byWord) == [("a", 2), ("b", 1)]


def test_keyed_aggregation_of_empty_input_emits_nothing():
    assert run(AggregateByKeyP(str, COUNTING, "agg"), []) == []
    assert twoStageByKey(COUNTING, str, [], 3) == []


def test_keyed_aggregation_applies_finish():
    op = AggregateOperation(list, lambda acc, item: [*acc, item], finishFn=sorted)
    result = dict(run(AggregateByKeyP(len, op, "agg"), ["bb", "a", "cc", "aa"]))
    assert result == {1: ["a"], 2: ["aa", "bb", "cc"]}


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_global_two_stage_equals_single_stage_equals_len(count):
    singleStage = run(AggregateP(COUNTING, "agg"), WORDS)
    assert twoStageGlobal(COUNTING, WORDS, count) == singleStage == [len(WORDS)]


def test_global_aggregation_of_empty_input_gives_finish_of_create():
    assert run(AggregateP(COUNTING, "agg"), []) == [0]
    assert twoStageGlobal(COUNTING, [], 3) == [0]
    assert run(CombineP(COUNTING, "agg"), []) == [0]


def test_global_accumulate_of_an_empty_partition_emits_create():
    assert run(AccumulateP(COUNTING, "agg-prepare"), []) == [0]


def test_global_aggregation_whose_finish_returns_none_emits_nothing():
    assert run(AggregateP(COUNTING_TO_NONE, "agg"), WORDS) == []
    assert run(AggregateP(COUNTING_TO_NONE, "agg"), []) == []
    assert twoStageGlobal(COUNTING_TO_NONE, WORDS, 2) == []


def boom(*args):
    """A user function that always raises."""
    raise KeyError("boom")


LONG_ITEM = "x" * 500
RAISING_ACCUMULATE = AggregateOperation(lambda: 0, boom)
RAISING_COMBINE = AggregateOperation(int, boom, boom)
RAISING_FINISH = AggregateOperation(lambda: 0, lambda acc, item: acc + 1, finishFn=boom)


@pytest.mark.parametrize(
    ("supplier", "items"),
    [
        (AggregateByKeyP(str, RAISING_ACCUMULATE, "count-words"), [LONG_ITEM]),
        (AggregateByKeyP(boom, COUNTING, "count-words"), [LONG_ITEM]),
        (AccumulateByKeyP(str, RAISING_ACCUMULATE, "count-words"), [LONG_ITEM]),
        (AggregateP(RAISING_ACCUMULATE, "count-words"), [LONG_ITEM]),
        (AccumulateP(RAISING_ACCUMULATE, "count-words"), [LONG_ITEM]),
        (CombineByKeyP(RAISING_COMBINE, "count-words"), [(LONG_ITEM, 1), (LONG_ITEM, 2)]),
        (CombineP(RAISING_COMBINE, "count-words"), [LONG_ITEM]),
    ],
    ids=[
        "keyed accumulate",
        "key function",
        "keyed prepare accumulate",
        "global accumulate",
        "global prepare accumulate",
        "keyed combine",
        "global combine",
    ],
)
def test_raising_user_function_names_stage_and_shortened_item(supplier, items):
    with pytest.raises(UserFunctionError) as raised:
        run(supplier, items)
    error = raised.value
    assert str(error).startswith("Stage 'count-words' failed on item ")
    assert str(error).endswith(": KeyError: 'boom'")
    assert "xxxx" in error.itemRepr and "..." in error.itemRepr
    assert len(error.itemRepr) < 120
    assert isinstance(error.__cause__, KeyError)


@pytest.mark.parametrize(
    "supplier",
    [
        AggregateByKeyP(str, RAISING_FINISH, "finish-it"),
        AggregateP(RAISING_FINISH, "finish-it"),
    ],
    ids=["keyed", "global"],
)
def test_raising_finish_names_the_stage(supplier):
    with pytest.raises(UserFunctionError) as raised:
        run(supplier, ["a"])
    assert re.fullmatch(r"Stage 'finish-it' failed on item .*: KeyError: 'boom'", str(raised.value))
    assert isinstance(raised.value.__cause__, KeyError)


def test_raising_create_names_the_stage():
    with pytest.raises(UserFunctionError) as raised:
        run(AggregateP(AggregateOperation(boom, lambda acc, item: acc), "make"), [])
    assert str(raised.value) == "Stage 'make' failed on item None: KeyError: 'boom'"


def test_keyed_prepare_emits_early_at_its_key_limit_and_combine_restores_the_total(monkeypatch):
    monkeypatch.setattr(aggregation, "PREPARE_KEY_LIMIT", 10)
    counting = AggregateOperation(lambda: 0, lambda acc, item: acc + 1, lambda a, b: a + b)
    items = [key % 25 for key in range(1000)]
    context = ProcessorContext("prepare", 0, 1)
    prepare = aggregation.AccumulateByKeyP(lambda x: x, counting, "count")
    partials = [entry for batch in prepare.batchFunction(context)(batched(items, 7)) for entry in batch]
    assert len(partials) > 25, "the prepare step emitted partial accumulators early"
    combine = aggregation.CombineByKeyP(counting, "count")
    totals = [entry for batch in combine.batchFunction(context)(iter([partials])) for entry in batch]
    assert dict(totals) == Counter(items)
