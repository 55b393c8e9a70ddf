"""Jet's AggregateOperation API beyond the single operation: andThen, identity finish,
combining accumulate, operations of several inputs, builders, tags, groupingBy's map and
toCollection; each checked against a plain-Python computation."""

import collections
import copy
import functools
import operator

import pytest

from sparkjet.coredag.model.aggregate_operation import identity, zero
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
    wholeItem,
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


def test_co_aggregate_operation_builder_keys_each_result_by_its_input_tag():
    builder = ops.coAggregateOperationBuilder()
    words = builder.add(Tag.tag1(), ops.toSet())
    numbers = builder.add(Tag.tag0(), ops.allOf(ops.counting(), ops.summing(lambda x: x)))
    op = builder.build()
    pairs = [(0, n) for n in NUMBERS] + [(1, w) for w in WORDS]
    result = op.finishFn(functools.reduce(op.accumulateFn, pairs, op.createFn()))
    assert (numbers, words, op.arity) == (Tag.tag0(), Tag.tag1(), 2)
    assert result == ItemsByTag.itemsByTag(Tag.tag0(), (len(NUMBERS), sum(NUMBERS)), Tag.tag1(), set(WORDS))


def test_co_aggregate_operation_builder_takes_one_operation_per_input_from_tag0_up():
    builder = ops.coAggregateOperationBuilder()
    builder.add(Tag.tag1(), ops.counting())
    with pytest.raises(PipelineError, match=r"Tag1 already has an operation; add one per input \(for several"):
        builder.add(Tag.tag1(), ops.toList())
    with pytest.raises(PipelineError, match=r"registered tags' indices are \[1\], but should be \[0\]"):
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


def countOne(acc, item):
    return acc + 1


def countTen(acc, item):
    return acc + 10


def countHundred(acc, item):
    return acc + 100


def test_var_arity_build_has_all_parts_as_jets_when_build_then_allPartsThere():
    op = (
        AggregateOperation.withCreate(zero)
        .andAccumulate(Tag.tag0(), countOne)
        .andAccumulate(Tag.tag1(), countTen)
        .andCombine(operator.add)
        .andDeduct(operator.sub)
        .andExportFinish(identity)
    )
    assert op.createFn is zero and op.arity == 2
    assert op.accumulateFnOf(Tag.tag0()) is countOne and op.accumulateFnOf(Tag.tag1()) is countTen
    assert (op.combineFn, op.deductFn, op.finishFn) == (operator.add, operator.sub, identity)
    assert op.finishFn(functools.reduce(op.accumulateFn, [(0, "x"), (1, "y"), (1, "z")], op.createFn())) == 21


def test_asking_for_a_tag_past_the_arity_is_refused_as_jets_when_askForNonexistentTag():
    twoInputs = AggregateOperation.withCreate(zero).andAccumulate(Tag.tag0(), countOne).andAccumulate(
        Tag.tag1(), countTen
    ).andExportFinish(identity)
    with pytest.raises(PipelineError, match="has 2 accumulating functions, but was asked for function at index 2"):
        twoInputs.accumulateFnOf(Tag.tag2())
    oneInput = AggregateOperation.withCreate(zero).andAccumulate0(countOne).andExportFinish(identity)
    with pytest.raises(PipelineError, match="has 1 accumulating functions, but was asked for function at index 1"):
        oneInput.accumulateFnOf(Tag.tag1())
    threeInputs = twoInputs.withAccumulateFns(countOne, countTen, countHundred)
    with pytest.raises(PipelineError, match="at index 3"):
        threeInputs.accumulateFnOf(Tag.tag(3))


def test_var_arity_refuses_a_duplicate_tag_and_a_gap_as_jets():
    accumulating = AggregateOperation.withCreate(zero).andAccumulate(Tag.tag0(), countOne)
    with pytest.raises(PipelineError, match="Tag with index 0 already registered"):
        accumulating.andAccumulate(Tag.tag0(), countTen)
    with pytest.raises(PipelineError, match=r"Registered tags' indices are \[0, 2\] but should be \[0, 1\]"):
        accumulating.andAccumulate(Tag.tag2(), countTen).andExportFinish(identity)
    with pytest.raises(PipelineError, match="register an accumulate function"):
        AggregateOperation.withCreate(zero).varArity().andExportFinish(identity)


@pytest.mark.parametrize("arity", [1, 2, 3])
def test_identity_finish_and_combining_accumulate_at_every_arity_as_jets(arity):
    """Jet's AggregateOperation{,1,2,3}Test: when_withIdentityFinish, when_withCombiningAccumulateFn."""
    fns = (countOne, countTen, countHundred)[:arity]
    listing = AggregateOperation(list, countOne, exportFn=len).withAccumulateFns(*fns)
    acc = listing.createFn()
    assert listing.withIdentityFinish().finishFn(acc) is acc and listing.arity == arity
    counting = AggregateOperation(zero, countOne, operator.add).withAccumulateFns(*fns)
    combining = counting.withCombiningAccumulateFn(wholeItem())
    assert combining.arity == 1 and combining.accumulateFnOf(Tag.tag0()) is combining.accumulateFn
    assert combining.finishFn(functools.reduce(combining.accumulateFn, [2, 3], combining.createFn())) == 5


def test_the_builder_registers_each_inputs_function_as_jets_when_build_then_allPartsThere():
    op1 = (
        AggregateOperation.withCreate(zero).andAccumulate(countOne)
        .andCombine(operator.add).andDeduct(operator.sub).andExport(str).andFinish(repr)
    )
    assert op1.accumulateFn is op1.accumulateFnOf(Tag.tag0()) is op1.accumulateFn0() is countOne
    assert (op1.exportFn, op1.finishFn) == (str, repr)
    synonym = AggregateOperation.withCreate(zero).andAccumulate0(countOne).andExportFinish(identity)
    assert synonym.accumulateFn is countOne
    op2 = AggregateOperation.withCreate(zero).andAccumulate0(countOne).andAccumulate1(countTen).andExportFinish(identity)
    assert (op2.arity, op2.accumulateFn0(), op2.accumulateFn1()) == (2, countOne, countTen)
    op3 = (
        AggregateOperation.withCreate(zero).andAccumulate0(countOne).andAccumulate1(countTen)
        .andAccumulate2(countHundred).andCombine(operator.add).andDeduct(operator.sub).andExport(str).andFinish(repr)
    )
    assert (op3.arity, op3.accumulateFn2(), op3.accumulateFnOf(Tag.tag2())) == (3, countHundred, countHundred)
    assert (op3.combineFn, op3.deductFn, op3.exportFn, op3.finishFn) == (operator.add, operator.sub, str, repr)
    pairs = [(0, "a"), (2, "b"), (1, "c"), (2, "d")]
    assert op3.finishFn(functools.reduce(op3.accumulateFn, pairs, op3.createFn())) == "211"


def test_and_then_reaches_each_input_as_jets_when_andThen_then_exportAndFinishChanged():
    builder = ops.coAggregateOperationBuilder()
    builder.add(Tag.tag0(), ops.summing(identity))
    outTag1 = builder.add(Tag.tag1(), ops.summing(identity))
    incremented = builder.build(lambda byTag: byTag.get(outTag1)).andThen(lambda total: total + 1)
    op2 = ops.aggregateOperation2(ops.summing(identity), ops.summing(identity), lambda r0, r1: r1).andThen(
        lambda total: total + 1
    )
    op3 = ops.aggregateOperation3(
        ops.summing(identity), ops.summing(identity), ops.summing(identity), lambda r0, r1, r2: r2
    ).andThen(lambda total: total + 1)
    for op, accumulateFn in [(incremented, incremented.accumulateFnOf(Tag.tag1())),
                             (op2, op2.accumulateFn1()), (op3, op3.accumulateFn2())]:
        acc = accumulateFn(op.createFn(), 13)
        assert op.exportFn(acc) == op.finishFn(acc) == 14


def test_with_accumulate_fns_replaces_one_input_or_all():
    summing = ops.counting().withAccumulateFn(lambda total, item: total + item)
    assert aggregate(summing, NUMBERS) == sum(NUMBERS) and summing.deductFn is operator.sub
    two = AggregateOperation.withCreate(zero).andAccumulate0(countOne).andAccumulate1(countTen).andExportFinish(identity)
    replaced = two.withAccumulateFn0(countHundred)
    assert (replaced.accumulateFn0(), replaced.accumulateFn1(), replaced.arity) == (countHundred, countTen, 2)
    pairs = [(0, "a"), (1, "b"), (0, "c")]
    assert functools.reduce(replaced.accumulateFn, pairs, 0) == 210
    widened = ops.counting().withAccumulateFns(countOne, countTen)
    assert widened.arity == 2 and widened.finishFn(functools.reduce(widened.accumulateFn, pairs, 0)) == 12
    with pytest.raises(PipelineError, match="withAccumulateFn: the operation aggregates 2 inputs"):
        two.withAccumulateFn(countOne)
    with pytest.raises(PipelineError, match="has 2 accumulating functions, but was asked for function at index 2"):
        two.withAccumulateFn2(countOne)


def test_an_operation_of_several_inputs_needs_a_function_per_input():
    with pytest.raises(PipelineError, match="An AggregateOperation of arity 2 accumulates with an AccumulateByOrdinal of 2"):
        AggregateOperation(zero, countOne, arity=2)


def validateOp(op, items1, items2, expectFirst, expectBoth):
    """Jet's AggregateOperationsTest.validateOp and validateOpWithoutDeduct, on exported results
    (sparkjet's accumulators are not Jet's): accumulate, export, combine, deduct, finish."""
    def accumulated(items):
        return functools.reduce(op.accumulateFn, items, op.createFn())

    exportedFirst = op.exportFn(acc1 := accumulated(items1))
    snapshot = copy.deepcopy(exportedFirst)
    combined = op.combineFn(acc1, accumulated(items2))
    assert exportedFirst == snapshot == expectFirst, "exported, then unchanged by combine"
    assert op.exportFn(combined) == expectBoth, "combined"
    if op.deductFn is not None:
        assert op.exportFn(op.deductFn(combined, accumulated(items2))) == expectFirst, "deducted"
    assert op.finishFn(accumulated(items1 + items2)) == expectBoth, "accumulated both"


JET_CASES = {
    # Jet's test: (op, left items, right items, export of left, export of both, deducts in Jet)
    "when_counting": (ops.counting(), [None], [None], 1, 2, True),
    "when_summingLong": (ops.summing(identity), [1], [2], 1, 3, True),
    "when_summingDouble": (ops.summing(identity), [0.5], [1.5], 0.5, 2.0, True),
    "when_averagingLong": (ops.averaging(identity), [1], [2], 1.0, 1.5, True),
    "when_averagingDouble": (ops.averaging(identity), [1.5], [2.5], 1.5, 2.0, True),
    "when_maxBy": (ops.maxBy(identity), [10], [11], 10, 11, False),
    "when_minBy": (ops.minBy(identity), [10], [11], 10, 10, False),
    "when_topN": (ops.topN(2, identity), [7, 1, 5, 3], [8, 6, 2, 4], [7, 5], [8, 7], False),
    "when_bottomN": (ops.bottomN(2, identity), [7, 1, 5, 3], [8, 6, 2, 4], [1, 3], [1, 2], False),
    "when_allOf2": (ops.allOf(ops.counting(), ops.summing(identity)), [10], [11], (1, 10), (2, 21), True),
    "when_allOfWithoutDeduct_then_noDeduct": (
        ops.allOf(ops.counting(), ops.maxBy(identity)), [10], [11], (1, 10), (2, 11), False
    ),
    "when_allOf3": (
        ops.allOf(ops.counting(), ops.summing(identity), ops.averaging(identity)),
        [10], [11], (1, 10, 10.0), (2, 21, 10.5), True,
    ),
    "when_reducing": (ops.reducing(0, identity, operator.add, operator.sub), [1], [2], 1, 3, True),
    "when_toList": (ops.toList(), [1], [2], [1], [1, 2], False),
    "when_toSet": (ops.toSet(), [1], [2], {1}, {1, 2}, False),
    "when_toMap": (ops.toMap(first, second), [(1, 1)], [(2, 2)], {1: 1}, {1: 1, 2: 2}, False),
    "when_toMapWithMerge_then_merged": (
        ops.toMap(first, second, operator.add), [(1, 1)], [(1, 2)], {1: 1}, {1: 3}, False
    ),
    "when_mappingWithoutDeduct": (ops.mapping(second, ops.maxBy(identity)), [("a", 1)], [("b", 2)], 1, 2, False),
    "when_mappingWithDeduct": (ops.mapping(second, ops.summing(identity)), [("a", 1)], [("b", 2)], 1, 3, True),
    "when_mappingToNull_then_doNotAggregate": (
        ops.mapping(second, ops.summing(identity)), [("a", None)], [("b", 2)], 0, 2, True
    ),
    "when_filtering": (ops.filtering(lambda i: i > 1, ops.summing(identity)), [1], [2], 0, 2, True),
    "when_flatMapping": (
        ops.flatMapping(lambda i: (i + 10, i + 20), ops.summing(identity)), [1], [2], 32, 66, True
    ),
    "when_concatenating_withoutDelimiter": (ops.concatenating(), ["A"], ["B"], "A", "AB", False),
    "when_concatenating_withDelimiter": (ops.concatenating(","), ["A"], ["B"], "A", "A,B", False),
    "when_concatenating_withDelimiterPrefixSuffix": (
        ops.concatenating(",", "(", ")"), ["A"], ["B"], "(A)", "(A,B)", False
    ),
    "when_concatenatingEmptyItems_withDelimiterPrefixSuffix": (
        ops.concatenating(",", "(", ")"), ["", "A"], ["", ""], "(A)", "(A)", False
    ),
    "when_pickAny": (ops.pickAny(), [1], [2], 1, 1, True),
    "when_sorting": (ops.sorting(), [2], [1], [2], [1, 2], False),
}


@pytest.mark.parametrize("name", JET_CASES)
def test_each_operation_as_jets_validateOp(name):
    op, items1, items2, expectFirst, expectBoth, deducts = JET_CASES[name]
    assert op.combineFn is not None
    assert (op.deductFn is not None) == deducts, "deducts exactly when Jet's does"
    validateOp(op, items1, items2, expectFirst, expectBoth)


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


def _sumOfValues(total, pair):
    return total + pair[1]


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_built_operations_and_the_added_ones_in_keyed_and_global_aggregations(jet, parallelism):
    """A hand-built two-input operation, a builder given no other stage, withAccumulateFn, and
    the operations issue 14 added, against plain Python at parallelism 1 and 3."""
    pairs = [(n % 3, n) for n in NUMBERS]
    operations = {
        "toCollection": ops.toCollection(collections.deque).andThen(sorted),
        "groupingBy": ops.groupingBy(lambda kv: kv[1] % 2, ops.counting(), collections.OrderedDict),
        "concatenating": ops.mapping(lambda kv: str(kv[1]), ops.concatenating(",")).andThen(
            lambda text: sorted(text.split(","))
        ),
        "flatMapping": ops.flatMapping(lambda kv: range(kv[1]), ops.summing(identity)),
        "withAccumulateFn": ops.counting().withAccumulateFn(_sumOfValues),
        "pickAny": ops.pickAny(),
    }
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(pairs)).setLocalParallelism(parallelism)
    words = p.readFrom(Sources.items(WORDS)).setLocalParallelism(parallelism)
    keyed = numbers.groupingKey(first)
    for name, op in operations.items():
        keyed.aggregate(op).setName(name).writeTo(Sinks.list(f"{name}{parallelism}"))
    lengthsAndWords = (
        AggregateOperation.withCreate(lambda: (0, 0))
        .andAccumulate0(lambda acc, kv: (acc[0] + kv[1], acc[1]))
        .andAccumulate1(lambda acc, word: (acc[0], acc[1] + len(word)))
        .andCombine(lambda left, right: (left[0] + right[0], left[1] + right[1]))
        .andExportFinish(lambda acc: f"{acc[0]}/{acc[1]}")
    )
    numbers.aggregate2(words, lengthsAndWords).writeTo(Sinks.list(f"two{parallelism}"))
    numbers.aggregateBuilder(ops.counting()).build().writeTo(Sinks.list(f"alone{parallelism}"))
    keyed.aggregateBuilder(ops.counting()).build(lambda byTag: byTag[Tag.tag0()]).writeTo(
        Sinks.list(f"keyedAlone{parallelism}")
    )
    jet.newJob(p).join()

    byKey = {k: [kv for kv in pairs if kv[0] == k] for k in range(3)}
    expected = {
        "toCollection": {k: sorted(kvs) for k, kvs in byKey.items()},
        "groupingBy": {k: dict(collections.Counter(v % 2 for _, v in kvs)) for k, kvs in byKey.items()},
        "concatenating": {k: sorted(str(v) for _, v in kvs) for k, kvs in byKey.items()},
        "flatMapping": {k: sum(sum(range(v)) for _, v in kvs) for k, kvs in byKey.items()},
        "withAccumulateFn": {k: sum(v for _, v in kvs) for k, kvs in byKey.items()},
    }
    for name, results in expected.items():
        assert dict(jet.getList(f"{name}{parallelism}")) == results, name
    assert all(type(m) is collections.OrderedDict for _, m in jet.getList(f"groupingBy{parallelism}"))
    assert all(picked in byKey[k] for k, picked in jet.getList(f"pickAny{parallelism}"))
    assert list(jet.getList(f"two{parallelism}")) == [f"{sum(NUMBERS)}/{sum(map(len, WORDS))}"]
    assert list(jet.getList(f"alone{parallelism}")) == [ItemsByTag.itemsByTag(Tag.tag0(), len(pairs))]
    assert dict(jet.getList(f"keyedAlone{parallelism}")) == {k: len(kvs) for k, kvs in byKey.items()}
