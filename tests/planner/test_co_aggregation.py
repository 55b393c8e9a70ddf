"""aggregate2/3 and aggregateBuilder: one operation per input, planned as one vertex pair."""

from collections import Counter

import pytest

from sparkjet.coredag import RoutingPolicy
from sparkjet.coredag.processors.coaggregation import TaggedInputP
from sparkjet.pipeline import AggregateOperations, ItemsByTag, Pipeline, Sinks, Sources, Tag
from sparkjet.planner import plan

NUMBERS, WORDS = list(range(10)), ["x", "yy", "zzz", "ab"]


def sources(p: Pipeline):
    return p.readFrom(Sources.items(NUMBERS)), p.readFrom(Sources.items(WORDS))


def test_global_co_aggregation_is_planned_as_a_prepare_with_two_inputs():
    p = Pipeline.create()
    numbers, words = sources(p)
    numbers.aggregate2(AggregateOperations.counting(), words, AggregateOperations.toList()).writeTo(Sinks.logger())
    dag = plan(p)
    prepare = dag.getVertex("2-way co-aggregate-prepare")
    assert isinstance(prepare.processorSupplier, TaggedInputP)
    assert [e.destOrdinal for e in dag.getInboundEdges(prepare.name)] == [0, 1]
    (combine,) = dag.getOutboundEdges(prepare.name)
    assert combine.destName == "2-way co-aggregate" and combine.isDistributed
    assert combine.routing is RoutingPolicy.ALL_TO_ONE
    assert dag.getVertex("2-way co-aggregate").localParallelism == 1


def test_co_grouping_partitions_each_input_by_its_own_key():
    p = Pipeline.create()
    numbers, words = sources(p)
    byRest, byLength = numbers.groupingKey(lambda x: x % 3), words.groupingKey(len)
    byRest.aggregate2(AggregateOperations.counting(), byLength, AggregateOperations.toList()).writeTo(Sinks.logger())
    inbound = plan(p).getInboundEdges("2-way cogroup-and-aggregate-prepare")
    assert [e.routing for e in inbound] == [RoutingPolicy.PARTITIONED] * 2
    assert [e.keyFn(item) for e, item in zip(inbound, [7, "abcd"])] == [1, 4]


@pytest.mark.spark
def test_co_aggregation_results_equal_plain_python(jet):
    p = Pipeline.create()
    numbers, words = sources(p)
    numbers.aggregate2(AggregateOperations.counting(), words, AggregateOperations.toList()).writeTo(Sinks.list("two"))
    halves = p.readFrom(Sources.items([x / 2 for x in NUMBERS]))
    numbers.aggregate3(
        AggregateOperations.summing(lambda x: x), words, AggregateOperations.counting(),
        halves, AggregateOperations.averaging(lambda x: x),
    ).writeTo(Sinks.list("three"))
    jet.newJob(p).join()
    ((count, words_),) = jet.getList("two")
    assert count == len(NUMBERS) and sorted(words_) == sorted(WORDS)
    assert jet.getList("three") == [(sum(NUMBERS), len(WORDS), sum(NUMBERS) / 2 / len(NUMBERS))]


@pytest.mark.spark
def test_co_grouping_results_equal_plain_python(jet):
    p = Pipeline.create()
    numbers, words = sources(p)
    byRest, byLength = numbers.groupingKey(lambda x: x % 3), words.groupingKey(len)
    byRest.aggregate2(AggregateOperations.counting(), byLength, AggregateOperations.toList()).writeTo(Sinks.list("kv"))
    builder = byRest.aggregateBuilder(AggregateOperations.summing(lambda x: x))
    lengths = builder.add(byLength, AggregateOperations.counting())
    builder.build().writeTo(Sinks.list("tagged"))
    jet.newJob(p).join()
    counts, lists = Counter(x % 3 for x in NUMBERS), {}
    for word in WORDS:
        lists.setdefault(len(word), []).append(word)
    keys = set(counts) | set(lists)
    assert {k: (n, sorted(ws)) for k, (n, ws) in jet.getList("kv")} == {
        k: (counts[k], sorted(lists.get(k, []))) for k in keys
    }
    sums = Counter()
    for x in NUMBERS:
        sums[x % 3] += x
    assert dict(jet.getList("tagged")) == {
        k: ItemsByTag.itemsByTag(Tag.tag0(), sums[k], lengths, len(lists.get(k, []))) for k in keys
    }
