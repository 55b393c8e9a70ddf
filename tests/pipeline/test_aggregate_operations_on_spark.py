"""The aggregate operations run on Spark and give what one local accumulator gives."""

import operator

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import AggregateOperations as ops
from sparkjet.pipeline import Pipeline, Sinks, Sources

pytestmark = pytest.mark.spark

first = operator.itemgetter(0)
second = operator.itemgetter(1)

ITEMS = [(i % 7, (i * 37) % 101) for i in range(101)]
"""Keys 0..6 and distinct values, so no result depends on the order partitions combine in."""

OPERATIONS = {
    "counting": ops.counting(),
    "averaging": ops.averaging(second),
    "minBy": ops.minBy(second),
    "topN": ops.topN(4, second),
    "bottomN": ops.bottomN(4, second),
    "toSet": ops.toSet(),
    "toMap": ops.toMap(second, first),
    "groupingBy": ops.groupingBy(first, ops.summing(second)),
    "filtering": ops.filtering(lambda kv: kv[1] % 2, ops.counting()),
    "reducing": ops.reducing(0, second, operator.add, operator.sub),
    "sorting": ops.sorting(second),
    "linearTrend": ops.linearTrend(second, lambda kv: 3 * kv[1] + kv[0]),
    "allOf": ops.allOf(ops.counting(), ops.maxBy(second), ops.toSet()),
}


def locally(op, items):
    acc = op.createFn()
    for item in items:
        acc = op.accumulateFn(acc, item)
    return op.finishFn(acc)


def test_global_aggregations_equal_one_local_accumulator(jet):
    p = Pipeline.create()
    items = p.readFrom(Sources.items(ITEMS))
    for name, op in OPERATIONS.items():
        items.aggregate(op).setName(name).writeTo(Sinks.list(name))
    jet.newJob(p).join()
    for name, op in OPERATIONS.items():
        assert list(jet.getList(name)) == [locally(op, ITEMS)], name


def test_keyed_aggregations_equal_one_local_accumulator_per_key(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(ITEMS)).groupingKey(first)
    for name, op in OPERATIONS.items():
        keyed.aggregate(op).setName(name).writeTo(Sinks.list(f"keyed-{name}"))
    jet.newJob(p).join()
    for name, op in OPERATIONS.items():
        expected = {k: locally(op, [kv for kv in ITEMS if kv[0] == k]) for k in range(7)}
        assert dict(jet.getList(f"keyed-{name}")) == expected, name


def test_a_duplicate_key_in_toMap_fails_the_job_naming_the_stage_and_the_key(jet):
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(ITEMS)).aggregate(ops.toMap(first, second))
    stage.setName("by-key").writeTo(Sinks.list("map"))
    message = (
        r"^Stage 'by-key' \(defined at test_aggregate_operations_on_spark\.py:\d+\) failed on item .*: "
        r"DuplicateKeyError: "
        r"toMap: duplicate key \d with the values \d+ and \d+; expected each key once"
    )
    with pytest.raises(UserFunctionError, match=message):
        jet.newJob(p).join()
