"""Jet's AggregateOperation API beyond the single operation: andThen, identity finish,
combining accumulate, operations of several inputs, builders, tags, groupingBy's map and
toCollection; each checked against a plain-Python computation."""

import collections
import functools
import operator

import pytest

from sparkjet.pipeline import (
    AggregateOperation,
    AggregateOperations,
    ItemsByTag,
    JoinClause,
    Pipeline,
    PipelineError,
    Sinks,
    Sources,
    Tag,
)

ops = AggregateOperations
NUMBERS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
WORDS = "to be or not to be that is the question".split()
ENTRIES = [("a", 1), ("b", 1), ("a", 1)]


def aggregate(op: AggregateOperation, items, split: int | None = None):
    """Aggregate as a two-stage job would: accumulate each part, combine, finish."""
    split = len(items) // 2 if split is None else split
    parts = [items[:split], items[split:]]
    accs = [functools.reduce(op.accumulateFn, part, op.createFn()) for part in parts]
    return op.finishFn(op.combineFn(*accs) if op.combineFn else accs[0])


def first(entry):
    return entry[0]


def second(entry):
    return entry[1]


def test_and_then_applies_to_export_and_finish():
    op = ops.counting().andThen(lambda n: f"{n} items")
    acc = functools.reduce(op.accumulateFn, NUMBERS, op.createFn())
    assert op.exportFn(acc) == op.finishFn(acc) == f"{len(NUMBERS)} items"
    assert op.combineFn is not None and op.deductFn is not None


def test_identity_finish_returns_the_accumulator_and_cannot_export():
    op = ops.toList().withIdentityFinish()
    acc = functools.reduce(op.accumulateFn, NUMBERS, op.createFn())
    assert op.finishFn(acc) is acc
    with pytest.raises(PipelineError, match="Can't use exportFn on an aggregate operation with identity finishFn"):
        op.exportFn(acc)


def test_combining_accumulate_is_the_second_stage_of_a_two_stage_aggregation():
    stage1 = ops.summing(lambda x: x).withIdentityFinish()
    partials = [("p0", functools.reduce(stage1.accumulateFn, NUMBERS[:4], stage1.createFn())),
                ("p1", functools.reduce(stage1.accumulateFn, NUMBERS[4:], stage1.createFn()))]
    stage2 = ops.summing(lambda x: x).withCombiningAccumulateFn(second)
    assert stage2.finishFn(functools.reduce(stage2.accumulateFn, partials, stage2.createFn())) == sum(NUMBERS)


def test_combining_accumulate_needs_a_combine():
    noCombine = AggregateOperation.withCreate(list).andAccumulate(lambda a, x: a + [x]).andExportFinish(len)
    with pytest.raises(PipelineError, match="The 'combine' primitive is missing"):
        noCombine.withCombiningAccumulateFn(second)


def test_all_of_builder_as_jets_when_allOfN():
    builder = ops.allOfBuilder()
    tagSum, tagCount = builder.add(ops.summing(lambda x: x)), builder.add(ops.counting())
    op = builder.build()
    assert aggregate(op, [10, 11]) == ItemsByTag.itemsByTag(tagCount, 2, tagSum, 21)
    deducted = op.deductFn(
        op.accumulateFn(op.accumulateFn(op.createFn(), 10), 11), op.accumulateFn(op.createFn(), 11)
    )
    assert op.exportFn(deducted) == ItemsByTag.itemsByTag(tagSum, 10, tagCount, 1)
    assert aggregate(ops.allOfBuilder().build(), []) == ItemsByTag()


def test_all_of_builder_with_an_output_function_and_all_of_with_one():
    builder = ops.allOfBuilder()
    tagMax, tagMin = builder.add(ops.maxBy(lambda x: x)), builder.add(ops.minBy(lambda x: x))
    op = builder.build(lambda byTag: byTag[tagMax] - byTag[tagMin])
    assert aggregate(op, NUMBERS) == max(NUMBERS) - min(NUMBERS)
    assert op.deductFn is None  # maxBy has none, as in Jet
    spread = ops.allOf(ops.counting(), ops.summing(lambda x: x), outputFn=lambda n, total: total / n)
    assert aggregate(spread, NUMBERS) == sum(NUMBERS) / len(NUMBERS)


def test_aggregate_operation_2_and_3_fold_tagged_inputs():
    op2 = ops.aggregateOperation2(ops.counting(), ops.toList())
    assert op2.arity == 2
    pairs = [(0, n) for n in NUMBERS] + [(1, w) for w in WORDS]
    acc = functools.reduce(op2.accumulateFn, pairs, op2.createFn())
    assert op2.finishFn(acc) == (len(NUMBERS), WORDS)
    op3 = ops.aggregateOperation3(ops.counting(), ops.counting(), ops.summing(len), lambda a, b, c: a + b + c)
    triples = [(0, "x"), (1, "y"), (1, "z"), (2, "abc")]
    assert op3.arity == 3 and op3.finishFn(functools.reduce(op3.accumulateFn, triples, op3.createFn())) == 6


def test_co_aggregate_operation_builder_takes_several_operations_per_input():
    builder = ops.coAggregateOperationBuilder()
    countNumbers = builder.add(Tag.tag0(), ops.counting())
    sumNumbers = builder.add(Tag.tag0(), ops.summing(lambda x: x))
    words = builder.add(Tag.tag1(), ops.toSet())
    op = builder.build()
    pairs = [(0, n) for n in NUMBERS] + [(1, w) for w in WORDS]
    result = op.finishFn(functools.reduce(op.accumulateFn, pairs, op.createFn()))
    assert op.arity == 2
    assert result == ItemsByTag.itemsByTag(countNumbers, len(NUMBERS), sumNumbers, sum(NUMBERS), words, set(WORDS))


def test_co_aggregate_operation_builder_needs_an_operation_for_every_input():
    builder = ops.coAggregateOperationBuilder()
    builder.add(Tag.tag1(), ops.counting())
    with pytest.raises(PipelineError, match=r"no operation for the input tag\(s\) \[Tag0\]"):
        builder.build()
    with pytest.raises(PipelineError, match="add at least one operation"):
        ops.coAggregateOperationBuilder().build()


class KeyOrderedDict(dict):
    """A map kind of the user's own, standing in for Jet's TreeMap."""


def test_grouping_by_with_a_map_factory_and_downstream_as_jets_test():
    """Jet's when_groupingBy_withDownstreamOperationAndMapSupplier (TreeMap::new, counting)."""
    op = ops.groupingBy(first, ops.counting(), KeyOrderedDict)
    result = aggregate(op, [("b", 1), ("a", 1)], split=1)
    assert type(result) is KeyOrderedDict and result == {"a": 1, "b": 1}
    assert type(op.exportFn(op.accumulateFn(op.createFn(), ("a", 1)))) is KeyOrderedDict


def test_grouping_by_as_jets_tests():
    assert aggregate(ops.groupingBy(first), [("a", 1), ("b", 1)]) == {"a": [("a", 1)], "b": [("b", 1)]}
    assert aggregate(ops.groupingBy(first), [("a", 1), ("a", 1)]) == {"a": [("a", 1), ("a", 1)]}
    assert aggregate(ops.groupingBy(first, ops.counting()), [("a", 1), ("a", 1)]) == {"a": 2}


@pytest.mark.parametrize(
    "factory, expected",
    [(list, NUMBERS), (set, set(NUMBERS)), (collections.deque, collections.deque(NUMBERS))],
    ids=["list", "set", "deque"],
)
def test_to_collection_collects_into_the_factorys_collection(factory, expected):
    op = ops.toCollection(factory)
    result = aggregate(op, NUMBERS)
    assert type(result) is type(expected) and result == expected
    acc = functools.reduce(op.accumulateFn, NUMBERS, op.createFn())
    exported = op.exportFn(acc)
    assert exported == expected and exported is not acc


def test_to_map_into_the_factorys_map():
    result = aggregate(ops.toMap(first, second, operator.add, KeyOrderedDict), ENTRIES)
    assert type(result) is KeyOrderedDict and result == {"a": 2, "b": 1}


def test_tags_and_items_by_tag_read_as_jets():
    byTag = ItemsByTag.itemsByTag(Tag.tag0(), "x", Tag.tag1(), None)
    assert repr(byTag) == "ItemsByTag{Tag0='x', Tag1=None}"
    assert byTag.get(Tag.tag1()) is None and byTag[Tag.tag0()] == "x"
    with pytest.raises(KeyError, match="No value associated with Tag2"):
        byTag.get(Tag.tag2())
    assert Tag.tag(2) == Tag.tag2() and sorted([Tag.tag2(), Tag.tag0()]) == [Tag.tag0(), Tag.tag2()]


def test_a_multi_input_operation_on_one_stage_is_refused_naming_its_arity():
    stage = Pipeline.create().readFrom(Sources.items(NUMBERS))
    with pytest.raises(PipelineError, match=r"Stage 'aggregate': the aggrOp given at .* aggregates 2 input\(s\), but the stage has 1"):
        stage.aggregate(ops.aggregateOperation2(ops.counting(), ops.counting()))


def test_a_one_input_operation_given_to_aggregate2_is_refused():
    p = Pipeline.create()
    numbers, words = p.readFrom(Sources.items(NUMBERS)), p.readFrom(Sources.items(WORDS))
    with pytest.raises(PipelineError, match="aggregates 1 input"):
        numbers.aggregate2(words, ops.counting())


# on Spark, against plain Python


@pytest.mark.spark
def test_aggregate2_and_3_with_one_operation_and_the_builder_of_one_operation(jet):
    p = Pipeline.create()
    numbers, words = p.readFrom(Sources.items(NUMBERS)), p.readFrom(Sources.items(WORDS))
    letters = p.readFrom(Sources.items(list("sparkjet")))
    numbers.aggregate2(words, ops.aggregateOperation2(ops.summing(lambda x: x), ops.counting())).writeTo(
        Sinks.list("two")
    )
    numbers.aggregate3(words, letters, ops.aggregateOperation3(
        ops.counting(), ops.toSet(), ops.concatenating(), lambda n, ws, text: (n, len(ws), text)
    )).writeTo(Sinks.list("three"))
    builder = numbers.aggregateBuilder()
    wordsTag, lettersTag = builder.add(words), builder.add(letters)
    opBuilder = ops.coAggregateOperationBuilder()
    total = opBuilder.add(builder.tag0(), ops.summing(lambda x: x))
    longest = opBuilder.add(wordsTag, ops.maxBy(len))
    count = opBuilder.add(lettersTag, ops.counting())
    builder.build(opBuilder.build(lambda byTag: (byTag[total], byTag[longest], byTag[count]))).writeTo(
        Sinks.list("built")
    )
    jet.newJob(p).join()
    assert list(jet.getList("two")) == [(sum(NUMBERS), len(WORDS))]
    [(count, distinctWords, text)] = jet.getList("three")
    assert (count, distinctWords, sorted(text)) == (len(NUMBERS), len(set(WORDS)), sorted("sparkjet"))
    assert list(jet.getList("built")) == [(sum(NUMBERS), max(WORDS, key=len), len("sparkjet"))]


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_keyed_aggregate_builder_with_output_function_and_keyed_aggregate2_of_one_operation(jet, parallelism):
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(NUMBERS)).setLocalParallelism(parallelism)
    words = p.readFrom(Sources.items(WORDS)).setLocalParallelism(parallelism)
    byRest, byLength = numbers.groupingKey(lambda n: n % 3), words.groupingKey(len)
    builder = byRest.aggregateBuilder(ops.summing(lambda x: x))
    wordCount = builder.add(byLength, ops.counting())
    builder.build(lambda byTag: byTag[Tag.tag0()] * 100 + byTag[wordCount]).writeTo(Sinks.list(f"built{parallelism}"))
    byRest.aggregate2(byLength, ops.aggregateOperation2(ops.counting(), ops.toSet())).writeTo(
        Sinks.list(f"two{parallelism}")
    )
    jet.newJob(p).join()
    keys = {n % 3 for n in NUMBERS} | {len(w) for w in WORDS}
    sums = {k: sum(n for n in NUMBERS if n % 3 == k) for k in keys}
    counts = {k: sum(1 for w in WORDS if len(w) == k) for k in keys}
    assert dict(jet.getList(f"built{parallelism}")) == {k: sums[k] * 100 + counts[k] for k in keys}
    assert dict(jet.getList(f"two{parallelism}")) == {
        k: (sum(1 for n in NUMBERS if n % 3 == k), {w for w in WORDS if len(w) == k}) for k in keys
    }


LEFT = [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
RIGHT = [(1, "x"), (2, "y"), (2, "z")]
OTHER = [(1, "p"), (3, "q")]


@pytest.mark.spark
def test_hash_join_builder_add_inner_drops_items_without_a_match_there_only(jet):
    p = Pipeline.create()
    left = p.readFrom(Sources.items(LEFT))
    builder = left.hashJoinBuilder()
    rightTag = builder.addInner(p.readFrom(Sources.items(RIGHT)), JoinClause.onKeys(first, first).projecting(second))
    otherTag = builder.add(p.readFrom(Sources.items(OTHER)), JoinClause.onKeys(first, first).projecting(second))
    builder.build(lambda item, byTag: (item[1], byTag[rightTag], byTag[otherTag])).writeTo(Sinks.list("innerOuter"))
    jet.newJob(p).join()
    expected = []
    for key, name in LEFT:
        others = [o for k, o in OTHER if k == key] or [None]
        expected += [(name, r, o) for k, r in RIGHT if k == key for o in others]
    assert sorted(jet.getList("innerOuter"), key=repr) == sorted(expected, key=repr)
    assert {name for name, _, _ in expected} == {"a", "b"}
