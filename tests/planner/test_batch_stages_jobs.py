"""Jet's batch stages run on Spark, each compared with a plain-Python computation.

Where the stage defines no order the results are compared as multi-sets (Counter); where
it does (sort, the running results of one key) the order is compared exactly.
"""

import functools
import itertools
import pathlib
import uuid
from collections import Counter, defaultdict

import pytest

from sparkjet.coredag.api.processor import AbstractProcessor
from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import AggregateOperations, ComparatorEx, JoinClause, Pipeline, ServiceFactories, Sinks, Sources

pytestmark = pytest.mark.spark

WORDS = "the quick brown fox jumps over the lazy dog then the fox naps while a dog barks twice".split()
NUMBERS = [37, 4, 91, 12, 58, 3, 76, 25, 64, 9, 45, 88, 16, 70, 2, 53, 31, 99, 20, 67]
KEYED = [(f"k{n % 5}", n) for n in range(1, 61)]
LEFT = [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (2, "e")]
RIGHT = [(1, "x"), (2, "y"), (2, "z"), (5, "w"), (1, "v"), (2, "u")]
OTHER = [(10, 1), (20, 1), (30, 2), (40, 4), (50, 9)]


def run(jet, p: Pipeline, listName: str) -> list:
    jet.newJob(p).join()
    return list(jet.getList(listName))


def first(item):
    return item[0]


def second(item):
    return item[1]


def upperName(item) -> str:
    return item[1].upper()


def byFirst(items) -> dict:
    grouped = defaultdict(list)
    for item in items:
        grouped[first(item)].append(item)
    return grouped


def perKey(outputs) -> dict:
    """The second element of each ``(key, value)`` output, per key, in the order emitted."""
    values = defaultdict(list)
    for key, value in outputs:
        values[key].append(value)
    return values


# merge and writeTo of several stages


def test_merge_emits_the_items_of_both_stages(jet):
    p = Pipeline.create()
    words, numbers = p.readFrom(Sources.items(WORDS)), p.readFrom(Sources.items(NUMBERS))
    words.merge(numbers).writeTo(Sinks.list("merged"))
    assert Counter(run(jet, p, "merged")) == Counter(WORDS) + Counter(NUMBERS)


def test_merging_a_stage_with_itself_emits_each_item_twice(jet):
    """Jet's DAG is a multigraph: ``a.merge(a)`` joins the same two vertices by two edges."""
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(NUMBERS))
    numbers.merge(numbers).writeTo(Sinks.list("mergedWithItself"))
    assert Counter(run(jet, p, "mergedWithItself")) == Counter(NUMBERS) + Counter(NUMBERS)


def test_merging_a_stage_with_a_mapped_branch_of_itself_keeps_both_copies(jet):
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(NUMBERS))
    numbers.merge(numbers.map(lambda n: -n)).writeTo(Sinks.list("mergedBranches"))
    assert Counter(run(jet, p, "mergedBranches")) == Counter(NUMBERS) + Counter(-n for n in NUMBERS)


def test_write_to_of_three_stages_sends_all_their_items_into_one_list(jet):
    p = Pipeline.create()
    words, numbers = p.readFrom(Sources.items(WORDS)), p.readFrom(Sources.items(NUMBERS))
    p.writeTo(Sinks.list("several"), words, numbers, words.map(str.upper))
    assert Counter(run(jet, p, "several")) == Counter(WORDS) + Counter(NUMBERS) + Counter(w.upper() for w in WORDS)


# distinct


def test_distinct_emits_each_item_once(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(WORDS * 3)).distinct().writeTo(Sinks.list("distinct"))
    output = run(jet, p, "distinct")
    assert sorted(output) == sorted(set(WORDS))


def test_keyed_distinct_keeps_exactly_one_item_per_key_and_it_is_one_of_that_keys_items(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(KEYED)).groupingKey(first).distinct().writeTo(Sinks.list("distinctByKey"))
    output = run(jet, p, "distinctByKey")
    expected = byFirst(KEYED)
    assert sorted(first(item) for item in output) == sorted(expected)
    assert all(item in expected[first(item)] for item in output)


# sort


def sortedOutputs(jet, parallelisms, key=None, reverse=False, items=NUMBERS) -> list[list]:
    """Sort ``items`` once per parallelism (of the source, a map and the sort), in one job."""
    p = Pipeline.create()
    for parallelism in parallelisms:
        source = p.readFrom(Sources.items(items)).setLocalParallelism(parallelism)
        mapped = source.map(lambda x: x).setLocalParallelism(parallelism)
        mapped.sort(key, reverse).setLocalParallelism(parallelism).writeTo(Sinks.list(f"sortedAt{parallelism}"))
    jet.newJob(p).join()
    return [list(jet.getList(f"sortedAt{parallelism}")) for parallelism in parallelisms]


@pytest.mark.parametrize(
    "key, reverse",
    [(None, False), (lambda n: (n % 10, n), False), (None, True)],
    ids=["ascending", "by-key", "reversed"],
)
def test_sort_emits_one_total_order_identical_at_parallelism_1_and_3(jet, key, reverse):
    one, three = sortedOutputs(jet, (1, 3), key, reverse)
    assert one == three == sorted(NUMBERS, key=key, reverse=reverse)


def descending(a, b):
    return b - a


def test_sort_with_a_comparator_as_jets_sort_batch_stage_test(jet):
    """Jet's SortBatchStageTest.sort_withComparator: ``sort((a, b) -> b - a)``, rebalanced."""
    items = list(range(200))
    shuffled = sorted(items, key=lambda n: (n * 7919) % 200)
    p = Pipeline.create()
    p.readFrom(Sources.items(shuffled)).rebalance().sort(comparator=descending).setLocalParallelism(3).writeTo(
        Sinks.list("sortedByComparator")
    )
    assert run(jet, p, "sortedByComparator") == sorted(items, reverse=True)


def test_sort_with_composed_comparators_at_parallelism_1_and_3(jet):
    comparator = ComparatorEx.comparing(lambda n: n % 10).thenComparing(ComparatorEx.reverseOrder())
    p = Pipeline.create()
    for parallelism in (1, 3):
        source = p.readFrom(Sources.items(NUMBERS)).setLocalParallelism(parallelism)
        source.sort(comparator).setLocalParallelism(parallelism).writeTo(Sinks.list(f"composedAt{parallelism}"))
    jet.newJob(p).join()
    expected = sorted(NUMBERS, key=lambda n: (n % 10, -n))
    assert list(jet.getList("composedAt1")) == list(jet.getList("composedAt3")) == expected


def failingAtFive(a, b):
    if a == 5 or b == 5:
        raise RuntimeError("expectedFailure")
    return a - b


def test_a_comparator_that_raises_fails_the_job_naming_the_sort(jet):
    """Jet's SortBatchStageTest.sort_exceptionDuringComparing."""
    p = Pipeline.create()
    p.readFrom(Sources.items(range(20))).rebalance().sort(comparator=failingAtFive).writeTo(Sinks.list("neverSorted"))
    with pytest.raises(UserFunctionError, match="sort") as raised:
        jet.newJob(p).join()
    assert "expectedFailure" in str(raised.value)


def test_sort_by_a_key_with_ties_orders_the_keys_and_keeps_every_item(jet):
    (output,) = sortedOutputs(jet, (3,), key=len, items=WORDS)
    assert [len(w) for w in output] == sorted(len(w) for w in WORDS)
    assert Counter(output) == Counter(WORDS)


# hash joins


def outerMatches(item, clauseKey, others, otherKey, project=lambda other: other) -> list:
    """The independent model of a left outer hash join: every match, or [None]."""
    return [project(other) for other in others if otherKey(other) == clauseKey(item)] or [None]


def test_hash_join_pairs_each_item_with_every_match_and_unmatched_with_none(jet):
    p = Pipeline.create()
    left, right = p.readFrom(Sources.items(LEFT)), p.readFrom(Sources.items(RIGHT))
    left.hashJoin(right, JoinClause.onKeys(first, first), lambda l, r: (l, r)).writeTo(Sinks.list("outer"))
    expected = [(l, r) for l in LEFT for r in outerMatches(l, first, RIGHT, first)]
    output = run(jet, p, "outer")
    assert Counter(output) == Counter(expected)
    assert ((3, "c"), None) in output and ((2, "b"), (2, "u")) in output


def test_inner_hash_join_drops_unmatched_items(jet):
    p = Pipeline.create()
    left, right = p.readFrom(Sources.items(LEFT)), p.readFrom(Sources.items(RIGHT))
    left.innerHashJoin(right, JoinClause.onKeys(first, first), lambda l, r: (l, r)).writeTo(Sinks.list("inner"))
    expected = [(l, r) for l in LEFT for r in RIGHT if first(l) == first(r)]
    assert Counter(run(jet, p, "inner")) == Counter(expected)


def test_hash_join_clause_projecting_maps_the_matched_item(jet):
    p = Pipeline.create()
    left, right = p.readFrom(Sources.items(LEFT)), p.readFrom(Sources.items(RIGHT))
    clause = JoinClause.onKeys(first, first).projecting(upperName)
    left.hashJoin(right, clause, lambda l, r: (l[1], r)).writeTo(Sinks.list("projected"))
    expected = [(l[1], r) for l in LEFT for r in outerMatches(l, first, RIGHT, first, upperName)]
    assert Counter(run(jet, p, "projected")) == Counter(expected)


def test_hash_join2_emits_the_cross_product_of_both_sides_matches(jet):
    p = Pipeline.create()
    left = p.readFrom(Sources.items(LEFT))
    right, other = p.readFrom(Sources.items(RIGHT)), p.readFrom(Sources.items(OTHER))
    left.hashJoin2(
        right, JoinClause.onKeys(first, first), other, JoinClause.onKeys(first, second), lambda l, r, o: (l, r, o)
    ).writeTo(Sinks.list("threeWay"))
    expected = [
        (l, r, o)
        for l in LEFT
        for r, o in itertools.product(outerMatches(l, first, RIGHT, first), outerMatches(l, first, OTHER, second))
    ]
    assert Counter(run(jet, p, "threeWay")) == Counter(expected)


def test_inner_hash_join2_drops_items_missing_a_match_on_either_side(jet):
    p = Pipeline.create()
    left = p.readFrom(Sources.items(LEFT))
    right, other = p.readFrom(Sources.items(RIGHT)), p.readFrom(Sources.items(OTHER))
    left.innerHashJoin2(
        right, JoinClause.onKeys(first, first), other, JoinClause.onKeys(first, second), lambda l, r, o: (l, r, o)
    ).writeTo(Sinks.list("threeWayInner"))
    expected = [(l, r, o) for l in LEFT for r in RIGHT for o in OTHER if first(l) == first(r) == second(o)]
    assert expected and Counter(run(jet, p, "threeWayInner")) == Counter(expected)


def test_hash_join_builder_gives_mapFn_a_dict_from_each_tag_to_its_match(jet):
    p = Pipeline.create()
    left = p.readFrom(Sources.items(LEFT))
    builder = left.hashJoinBuilder()
    rightTag = builder.add(p.readFrom(Sources.items(RIGHT)), JoinClause.onKeys(first, first))
    otherTag = builder.add(p.readFrom(Sources.items(OTHER)), JoinClause.onKeys(first, second).projecting(first))
    builder.build(lambda l, byTag: (l, tuple(sorted(byTag)), byTag[rightTag], byTag[otherTag])).writeTo(
        Sinks.list("byTag")
    )
    tags = tuple(sorted((rightTag, otherTag)))
    expected = [
        (l, tags, r, o)
        for l in LEFT
        for r, o in itertools.product(outerMatches(l, first, RIGHT, first), outerMatches(l, first, OTHER, second, first))
    ]
    assert rightTag != otherTag
    assert Counter(run(jet, p, "byTag")) == Counter(expected)


# customTransform with our own processors


class Doubler(AbstractProcessor):
    """Emits each item doubled, then ``("seen", vertex, processor index, count)`` at the end."""

    def __init__(self) -> None:
        self.count = 0

    def tryProcess0(self, item) -> bool:
        self.count += 1
        return self.tryEmit(item * 2)

    def complete(self) -> bool:
        context = self.context
        return self.tryEmit(("seen", context.vertexName, context.globalProcessorIndex, self.count))


class WhereAmI(AbstractProcessor):
    """Emits ``(processor index, item)``."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit((self.context.globalProcessorIndex, item))


def test_custom_transform_runs_our_processor_on_every_item(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(NUMBERS)).customTransform("doubler", Doubler).setLocalParallelism(3).writeTo(
        Sinks.list("doubled")
    )
    output = run(jet, p, "doubled")
    summaries = [item for item in output if isinstance(item, tuple)]
    assert Counter(item for item in output if not isinstance(item, tuple)) == Counter(n * 2 for n in NUMBERS)
    assert {(vertex, index) for _, vertex, index, _ in summaries} <= {("doubler", i) for i in range(3)}
    assert len(summaries) == len({index for _, _, index, _ in summaries})
    assert sum(count for *_, count in summaries) == len(NUMBERS)


def test_keyed_custom_transform_sends_every_keys_items_to_one_processor(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(KEYED)).groupingKey(first)
    keyed.customTransform("where", WhereAmI).setLocalParallelism(4).writeTo(Sinks.list("where"))
    output = run(jet, p, "where")
    processorsOfKey = defaultdict(set)
    for index, (key, _) in output:
        processorsOfKey[key].add(index)
    assert Counter(item for _, item in output) == Counter(KEYED)
    assert all(len(indexes) == 1 for indexes in processorsOfKey.values()), dict(processorsOfKey)
    assert len(set().union(*processorsOfKey.values())) > 1, "the keys should spread over processors"


# stages using a service


def createRecorded(directory: str, context) -> dict:
    service = {"id": uuid.uuid4().hex, "processor": context.globalProcessorIndex, "served": 0}
    (pathlib.Path(directory) / f"created-{service['id']}").write_text(str(context.globalProcessorIndex))
    return service


def destroyRecorded(directory: str, service: dict) -> None:
    (pathlib.Path(directory) / f"destroyed-{service['id']}").write_text(str(service["served"]))


def recordingFactory(directory) -> object:
    """A service made and destroyed once per processor; both leave a file in ``directory``."""
    directory = str(directory)
    return ServiceFactories.nonSharedService(
        functools.partial(createRecorded, directory), functools.partial(destroyRecorded, directory)
    )


def serve(service: dict, item) -> bool:
    """Count ``item`` as served by ``service``; return True."""
    service["served"] += 1
    return True


def lifecycle(directory) -> tuple[dict, dict]:
    """Return ``{service id: items served}`` of the destroyed services and
    ``{service id: processor index}`` of the created ones."""
    files = list(pathlib.Path(directory).iterdir())
    created = {f.name.removeprefix("created-"): f.read_text() for f in files if f.name.startswith("created-")}
    destroyed = {f.name.removeprefix("destroyed-"): int(f.read_text()) for f in files if f.name.startswith("destroyed-")}
    return destroyed, created


SERVICE_STAGES = {
    "map": (
        lambda s, f: s.mapUsingService(f, lambda service, n: serve(service, n) and n * 10),
        lambda items: Counter(n * 10 for n in items),
    ),
    "filter": (
        lambda s, f: s.filterUsingService(f, lambda service, n: serve(service, n) and n % 2 == 0),
        lambda items: Counter(n for n in items if n % 2 == 0),
    ),
    "flatMap": (
        lambda s, f: s.flatMapUsingService(f, lambda service, n: [n, -n] if serve(service, n) else []),
        lambda items: Counter(itertools.chain.from_iterable((n, -n) for n in items)),
    ),
}


@pytest.mark.parametrize("kind", SERVICE_STAGES)
def test_service_stage_gives_the_plain_python_results(jet, tmp_path, kind):
    attach, expected = SERVICE_STAGES[kind]
    p = Pipeline.create()
    attach(p.readFrom(Sources.items(NUMBERS)), recordingFactory(tmp_path)).setLocalParallelism(3).writeTo(
        Sinks.list(f"{kind}Service")
    )
    assert Counter(run(jet, p, f"{kind}Service")) == expected(NUMBERS)


@pytest.mark.parametrize("kind", SERVICE_STAGES)
def test_service_is_created_once_per_processor_and_destroyed_after_its_last_item(jet, tmp_path, kind):
    attach, _ = SERVICE_STAGES[kind]
    items = range(1, 5001)  # more than one batch (1024 items) per processor
    p = Pipeline.create()
    attach(p.readFrom(Sources.items(items)), recordingFactory(tmp_path)).setLocalParallelism(3).writeTo(
        Sinks.list(f"{kind}Lifecycle")
    )
    run(jet, p, f"{kind}Lifecycle")
    destroyed, created = lifecycle(tmp_path)
    assert 1 <= len(created) <= 3
    assert sorted(destroyed) == sorted(created), "every service made is destroyed, once"
    assert len(set(created.values())) == len(created), "one service per processor"
    assert sum(destroyed.values()) == len(items), "destroyed only after serving all its items"


def test_map_using_service_uses_one_service_instance_for_all_items_of_a_processor(jet, tmp_path):
    p = Pipeline.create()
    source = p.readFrom(Sources.items(NUMBERS))
    source.mapUsingService(recordingFactory(tmp_path), lambda service, n: serve(service, n) and service["id"]).setLocalParallelism(
        3
    ).writeTo(Sinks.list("serviceIds"))
    output = run(jet, p, "serviceIds")
    destroyed, created = lifecycle(tmp_path)
    assert set(output) <= set(created)
    assert Counter(output) == Counter({service: served for service, served in destroyed.items() if served})


def test_a_service_stage_feeding_two_branches_still_makes_one_service_per_processor(jet, tmp_path):
    p = Pipeline.create()
    served = p.readFrom(Sources.items(NUMBERS)).mapUsingService(
        recordingFactory(tmp_path), lambda service, n: serve(service, n) and (service["id"], n)
    ).setLocalParallelism(2)
    served.map(second).writeTo(Sinks.list("branchA"))
    served.filter(lambda pair: pair[1] > 50).writeTo(Sinks.list("branchB"))
    jet.newJob(p).join()
    destroyed, created = lifecycle(tmp_path)
    assert sorted(jet.getList("branchA")) == sorted(NUMBERS)
    assert sorted(second(pair) for pair in jet.getList("branchB")) == sorted(n for n in NUMBERS if n > 50)
    assert 1 <= len(created) <= 2 and sorted(destroyed) == sorted(created)
    assert sum(destroyed.values()) == len(NUMBERS)


def createNothing(directory: str, context) -> None:
    """A createFn whose service is None (all its work is a side effect)."""


def destroyRecordingAnything(directory: str, service) -> None:
    (pathlib.Path(directory) / f"destroyed-{uuid.uuid4().hex}").write_text(repr(service))


def test_a_service_that_is_none_is_not_destroyed_on_either_path(jet, tmp_path):
    fast, cooperative = tmp_path / "fast", tmp_path / "cooperative"
    p = Pipeline.create()
    source = p.readFrom(Sources.items(NUMBERS))
    for directory in (fast, cooperative):
        directory.mkdir()
        factory = ServiceFactories.nonSharedService(
            functools.partial(createNothing, str(directory)), functools.partial(destroyRecordingAnything, str(directory))
        )
        served = source.mapUsingService(factory, lambda service, n: n).setName(f"{directory.name}Service")
        served.writeTo(Sinks.list(f"{directory.name}A"))
        if directory is cooperative:  # a second branch: the vertex runs its processors, not the fast path
            served.writeTo(Sinks.list(f"{directory.name}B"))
    jet.newJob(p).join()
    assert sorted(jet.getList("fastA")) == sorted(jet.getList("cooperativeA")) == sorted(NUMBERS)
    assert {d.name: len(list(d.iterdir())) for d in (fast, cooperative)} == {"fast": 0, "cooperative": 0}


# mapStateful and rollingAggregate


def newTotal() -> list:
    return [0]


def addToTotal(total: list, key, item):
    total[0] += item[1]
    return key, total[0]


def test_map_stateful_running_sum_per_key_is_a_prefix_sum_of_that_keys_items(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(KEYED)).groupingKey(first).mapStateful(newTotal, addToTotal).writeTo(
        Sinks.list("runningSums")
    )
    sums = perKey(run(jet, p, "runningSums"))
    values = {key: [second(item) for item in items] for key, items in byFirst(KEYED).items()}
    assert sums.keys() == values.keys()
    for key, emitted in sums.items():
        increments = [b - a for a, b in zip([0, *emitted], emitted)]
        assert Counter(increments) == Counter(values[key]), key
        assert emitted[-1] == sum(values[key])


def test_map_stateful_returning_none_emits_nothing_for_that_item(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(KEYED)).groupingKey(first)
    keyed.mapStateful(newTotal, lambda total, key, item: addToTotal(total, key, item) if item[1] > 50 else None).writeTo(
        Sinks.list("lateSums")
    )
    output = run(jet, p, "lateSums")
    assert sorted(key for key, _ in output) == sorted(first(item) for item in KEYED if second(item) > 50)


def test_rolling_counting_emits_1_to_n_per_key_in_order(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(KEYED)).groupingKey(first).rollingAggregate(AggregateOperations.counting()).writeTo(
        Sinks.list("rollingCounts")
    )
    counts = perKey(run(jet, p, "rollingCounts"))
    expected = Counter(first(item) for item in KEYED)
    assert dict(counts) == {key: list(range(1, n + 1)) for key, n in expected.items()}


def test_rolling_to_list_emits_a_snapshot_per_item_each_a_prefix_of_the_next(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(KEYED)).groupingKey(first).rollingAggregate(AggregateOperations.toList()).writeTo(
        Sinks.list("rollingLists")
    )
    snapshots = perKey(run(jet, p, "rollingLists"))
    for key, lists in snapshots.items():
        assert [len(items) for items in lists] == list(range(1, len(lists) + 1)), key
        assert all(later[: len(earlier)] == earlier for earlier, later in zip(lists, lists[1:])), key
        assert Counter(lists[-1]) == Counter(item for item in KEYED if first(item) == key)


# apply


def words(stage):
    """A reusable piece of pipeline: the lower-case words of lines."""
    return stage.flatMap(str.split).map(str.lower).filter(str.isalpha)


def test_apply_reuses_a_piece_of_pipeline_on_two_sources(jet):
    lines1, lines2 = ["The Fox", "a 2 dog"], ["Dog and FOX", ""]
    p = Pipeline.create()
    left, right = p.readFrom(Sources.items(lines1)).apply(words), p.readFrom(Sources.items(lines2)).apply(words)
    left.merge(right).writeTo(Sinks.list("applied"))
    expected = Counter(w.lower() for line in lines1 + lines2 for w in line.split() if w.isalpha())
    assert Counter(run(jet, p, "applied")) == expected


# rebalance in front of the stages gives the same results

REBALANCINGS = {
    "as-is": lambda stage: stage,
    "rebalance()": lambda stage: stage.rebalance(),
    "rebalance(key)": lambda stage: stage.rebalance(second),
}


def runningTotals(outputs) -> dict:
    """Per key, the final running total and the multi-set of increments."""
    totals = {}
    for key, emitted in perKey(outputs).items():
        totals[key] = (emitted[-1], Counter(b - a for a, b in zip([0, *emitted], emitted)))
    return totals


def expectedTotals(items) -> dict:
    return {key: (sum(map(second, group)), Counter(map(second, group))) for key, group in byFirst(items).items()}


STAGES_AFTER_REBALANCE = {
    "merge": (
        lambda s: s.merge(s.pipeline.readFrom(Sources.items(RIGHT))),
        Counter,
        Counter(KEYED) + Counter(RIGHT),
    ),
    "distinct": (lambda s: s.map(first).distinct(), sorted, sorted({first(item) for item in KEYED})),
    "sort": (lambda s: s.sort(key=second), list, sorted(KEYED, key=second)),
    "hashJoin": (
        lambda s: s.hashJoin(s.pipeline.readFrom(Sources.items(OTHER)), JoinClause.onKeys(second, first), lambda l, o: (l, o)),
        Counter,
        Counter((l, o) for l in KEYED for o in outerMatches(l, second, OTHER, first)),
    ),
    "mapStateful": (
        lambda s: s.groupingKey(first).mapStateful(newTotal, addToTotal),
        runningTotals,
        expectedTotals(KEYED),
    ),
    "rollingAggregate": (
        lambda s: s.groupingKey(first).rollingAggregate(AggregateOperations.counting()),
        perKey,
        {key: list(range(1, len(group) + 1)) for key, group in byFirst(KEYED).items()},
    ),
    "keyed-customTransform": (
        lambda s: s.groupingKey(first).customTransform("where", WhereAmI).setLocalParallelism(3),
        lambda output: (Counter(item for _, item in output), len({(i, first(item)) for i, item in output})),
        (Counter(KEYED), len({first(item) for item in KEYED})),
    ),
    "mapUsingService": (
        lambda s: s.mapUsingService(ServiceFactories.sharedService(lambda context: 1000), lambda k, item: k + item[1]),
        Counter,
        Counter(1000 + n for _, n in KEYED),
    ),
}


@pytest.mark.parametrize("stage", STAGES_AFTER_REBALANCE)
def test_rebalance_or_rebalance_by_key_in_front_of_a_stage_gives_the_same_results(jet, stage):
    attach, summarize, expected = STAGES_AFTER_REBALANCE[stage]
    p = Pipeline.create()
    source = p.readFrom(Sources.items(KEYED)).map(lambda item: item).setLocalParallelism(3)
    for listName, rebalancing in REBALANCINGS.items():
        attach(rebalancing(source)).writeTo(Sinks.list(listName))
    jet.newJob(p).join()
    results = {listName: summarize(list(jet.getList(listName))) for listName in REBALANCINGS}
    assert results == dict.fromkeys(REBALANCINGS, expected)
