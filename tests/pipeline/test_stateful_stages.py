"""Jet's stateful stages: mapStateful, filterStateful, flatMapStateful and rollingAggregate,
keyed and global; ports of Jet's BatchStageTest cases, checked against plain Python."""

import itertools
from collections import Counter, defaultdict

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.coredag.processors.keyed import GlobalKey, MapStatefulP, RollingAggregateP, StatefulKind
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources
from sparkjet.planner import plan

ITEMS = list(range(40))


class LongAccumulator:
    """Jet's LongAccumulator: a mutable long."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> int:
        self.value += n
        return self.value


def runningTotal(acc, item):
    return acc.add(item)


def keyedRunningTotal(acc, key, item):
    return key, acc.add(item)


def evenTotal(acc, item):
    return acc.add(item) % 2 == 0


def totalTwice(acc, item):
    total = acc.add(item)
    return (total, total)


def keyedTotalTwice(acc, key, item):
    total = acc.add(item)
    return ((key, total), (key, total))


def lastOfAll(acc, item):
    return acc.value if acc.add(1) == len(ITEMS) else None


def parity(item):
    return item % 2


def totalsPerKey(items, keyFn):
    """The running total of each item within its key, in input order (plain Python)."""
    totals, out = defaultdict(int), []
    for item in items:
        totals[keyFn(item)] += item
        out.append((keyFn(item), totals[keyFn(item)]))
    return out


# processors


def test_global_map_stateful_processor_keeps_one_state():
    supplier = MapStatefulP(GlobalKey(), LongAccumulator, runningTotal, "map-stateful-global", passesKey=False)
    verifyProcessor(supplier).input([1, 2, 3]).expectOutput([1, 3, 6]).verify()


def test_keyed_filter_and_flat_map_stateful_processors():
    keep = MapStatefulP(parity, LongAccumulator, evenTotal, "f", StatefulKind.FILTER, passesKey=False)
    # running totals per parity: 1 -> 1, 2 -> 2, 3 -> 4, 4 -> 6, 5 -> 9
    verifyProcessor(keep).input([1, 2, 3, 4, 5]).expectOutput([2, 3, 4]).verify()
    twice = MapStatefulP(parity, LongAccumulator, keyedTotalTwice, "fm", StatefulKind.FLAT_MAP)
    verifyProcessor(twice).input([1, 2, 3]).expectOutput([(1, 1), (1, 1), (0, 2), (0, 2), (1, 4), (1, 4)]).verify()


def test_global_rolling_aggregate_processor_emits_results_without_a_key():
    supplier = RollingAggregateP(GlobalKey(), AggregateOperations.counting(), "rolling-aggregate", emitsKey=False)
    verifyProcessor(supplier).input(["a", "b", "c"]).expectOutput([1, 2, 3]).verify()


# plans


@pytest.mark.parametrize(
    "attach, name",
    [
        (lambda s: s.mapStateful(LongAccumulator, runningTotal), "map-stateful-global"),
        (lambda s: s.filterStateful(LongAccumulator, evenTotal), "map-stateful-global"),
        (lambda s: s.flatMapStateful(LongAccumulator, totalTwice), "flatmap-stateful-global"),
        (lambda s: s.rollingAggregate(AggregateOperations.counting()), "rolling-aggregate"),
    ],
    ids=["mapStateful", "filterStateful", "flatMapStateful", "rollingAggregate"],
)
def test_global_state_is_one_processor_fed_by_a_distributed_partitioned_edge(attach, name):
    p = Pipeline.create()
    attach(p.readFrom(Sources.items(ITEMS)).setLocalParallelism(4)).setLocalParallelism(4).writeTo(Sinks.logger())
    planned = plan(p)
    vertex = planned.dag.getVertex(name)
    assert vertex.localParallelism == 1
    [edge] = planned.dag.getInboundEdges(name)
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED
    assert "one state for all items, so one processor (parallelism 1) gets every item" in planned.explain(4)


def test_keyed_flat_map_stateful_plans_as_jets():
    p = Pipeline.create()
    p.readFrom(Sources.items(ITEMS)).groupingKey(parity).flatMapStateful(LongAccumulator, keyedTotalTwice).writeTo(
        Sinks.logger()
    )
    dag = plan(p).dag
    [edge] = dag.getInboundEdges("flatmap-stateful-keyed")
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED


# on Spark


def runList(jet, p, name):
    jet.newJob(p).join()
    return list(jet.getList(name))


@pytest.mark.spark
def test_global_stateful_stages_as_jets_batch_stage_tests(jet):
    """Jet's mapStateful_global, mapStateful_global_usedAsFilter, filterStateful_global,
    flatMapStateful_global and rollingAggregate_global, with an ordered source."""
    p = Pipeline.create()
    source = p.readFrom(Sources.items(ITEMS)).setLocalParallelism(1)
    source.mapStateful(LongAccumulator, runningTotal).writeTo(Sinks.list("totals"))
    source.mapStateful(LongAccumulator, lastOfAll).writeTo(Sinks.list("last"))
    source.filterStateful(LongAccumulator, evenTotal).writeTo(Sinks.list("evenTotals"))
    source.flatMapStateful(LongAccumulator, totalTwice).writeTo(Sinks.list("twice"))
    source.rollingAggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    jet.newJob(p).join()
    totals = list(itertools.accumulate(ITEMS))
    assert list(jet.getList("totals")) == totals
    assert list(jet.getList("last")) == [len(ITEMS)]
    assert list(jet.getList("evenTotals")) == [i for i, total in zip(ITEMS, totals) if total % 2 == 0]
    assert list(jet.getList("twice")) == [t for total in totals for t in (total, total)]
    assert list(jet.getList("counts")) == list(range(1, len(ITEMS) + 1))


@pytest.mark.spark
def test_global_state_sees_every_item_once_at_parallelism_3(jet):
    p = Pipeline.create()
    source = p.readFrom(Sources.items(ITEMS)).setLocalParallelism(3).map(lambda x: x).setLocalParallelism(3)
    source.mapStateful(LongAccumulator, lambda acc, item: (item, acc.add(item))).writeTo(Sinks.list("pairs"))
    source.rollingAggregate(AggregateOperations.counting()).writeTo(Sinks.list("rolling"))
    jet.newJob(p).join()
    pairs = sorted(jet.getList("pairs"), key=lambda pair: pair[1])
    assert Counter(item for item, _ in pairs) == Counter(ITEMS)
    assert [total for _, total in pairs] == list(itertools.accumulate(item for item, _ in pairs))
    assert sorted(jet.getList("rolling")) == list(range(1, len(ITEMS) + 1))


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_keyed_stateful_stages_as_jets_batch_stage_tests(jet, parallelism):
    """Jet's mapStateful_keyed, filterStateful_keyed and flatMapStateful_keyed: per key, in the
    order of an ordered source, whatever the stage's parallelism."""
    p = Pipeline.create()
    byParity = p.readFrom(Sources.items(ITEMS)).setLocalParallelism(1).groupingKey(parity)
    byParity.mapStateful(LongAccumulator, keyedRunningTotal).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"keyedTotals{parallelism}")
    )
    byParity.filterStateful(LongAccumulator, evenTotal).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"keyedEven{parallelism}")
    )
    byParity.flatMapStateful(LongAccumulator, keyedTotalTwice).setLocalParallelism(parallelism).writeTo(
        Sinks.list(f"keyedTwice{parallelism}")
    )
    jet.newJob(p).join()
    expected = totalsPerKey(ITEMS, parity)

    def perKey(pairs):
        grouped = defaultdict(list)
        for key, value in pairs:
            grouped[key].append(value)
        return dict(grouped)

    assert perKey(jet.getList(f"keyedTotals{parallelism}")) == perKey(expected)
    kept = [item for item, (_, total) in zip(ITEMS, expected) if total % 2 == 0]
    assert perKey((parity(i), i) for i in jet.getList(f"keyedEven{parallelism}")) == perKey((parity(i), i) for i in kept)
    assert perKey(jet.getList(f"keyedTwice{parallelism}")) == perKey(pair for pair in expected for _ in range(2))


def failsAtSeven(acc, item):
    if item == 7:
        raise ValueError("no sevens")
    return True


@pytest.mark.spark
def test_a_stateful_function_that_raises_fails_the_job_naming_the_stage(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(ITEMS)).filterStateful(LongAccumulator, failsAtSeven).writeTo(Sinks.list("never"))
    with pytest.raises(UserFunctionError, match=r"Stage 'map-stateful-global'.*failed on item 7: ValueError: no sevens"):
        jet.newJob(p).join()
