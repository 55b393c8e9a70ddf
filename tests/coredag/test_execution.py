"""Hand-built Core DAGs on Spark: routing, several inputs and outputs, user processors."""

from collections import Counter

import pytest

from sparkjet.coredag import (
    DAG,
    AbstractProcessor,
    DagError,
    Edge,
    Partitioner,
    ProcessorContractError,
    UserFunctionError,
)
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.planner import Jet

pytestmark = pytest.mark.spark


class TagWithIndex(AbstractProcessor):
    """Emits ``(globalProcessorIndex, ordinal, item)`` for every item it receives."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        if ordinal is None:
            return True
        return self.tryEmit((self.context.globalProcessorIndex, ordinal, item))


class EvenOdd(Partitioner):
    """Even keys to partition 0, odd keys to the last partition."""

    def getPartition(self, key, partitionCount: int) -> int:
        return 0 if key % 2 == 0 else partitionCount - 1


def received(jet: Jet, dag: DAG) -> list[tuple]:
    jet.newJob(dag).join()
    return list(jet.getList("received"))


def routedDag(customize, items=range(40), upstream: int = 3, downstream: int = 4) -> DAG:
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(items)), upstream)
    tagger = dag.newVertex("tagger", TagWithIndex, downstream)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(customize(Edge.between(source, tagger))).edge(Edge.between(tagger, sink))
    return dag


def test_distributed_unicast_delivers_each_item_once_over_all_processors(jet):
    tagged = received(jet, routedDag(lambda e: e.distributed(), range(400)))
    assert sorted(item for _, _, item in tagged) == list(range(400))
    assert set(index for index, _, _ in tagged) == {0, 1, 2, 3}


def test_partitioned_sends_each_key_to_one_processor(jet):
    tagged = received(jet, routedDag(lambda e: e.distributed().partitioned(lambda x: x % 5)))
    owners = {}
    for index, _, item in tagged:
        owners.setdefault(item % 5, set()).add(index)
    assert all(len(processors) == 1 for processors in owners.values())
    assert sorted(item for _, _, item in tagged) == list(range(40))


def test_custom_partitioner_is_obeyed(jet):
    tagged = received(jet, routedDag(lambda e: e.distributed().partitioned(lambda x: x, EvenOdd())))
    assert {index for index, _, item in tagged if item % 2 == 0} == {0}
    assert {index for index, _, item in tagged if item % 2 == 1} == {3}


def test_broadcast_reaches_every_processor(jet):
    tagged = received(jet, routedDag(lambda e: e.distributed().broadcast(), range(10)))
    assert Counter((index, item) for index, _, item in tagged) == Counter(
        {(index, item): 1 for index in range(4) for item in range(10)}
    )


def test_all_to_one_sends_everything_to_one_processor(jet):
    tagged = received(jet, routedDag(lambda e: e.distributed().allToOne()))
    assert len({index for index, _, _ in tagged}) == 1
    assert sorted(item for _, _, item in tagged) == list(range(40))


def test_isolated_edge_keeps_processor_i_to_i(jet):
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(30))), 3)
    first = dag.newVertex("first", TagWithIndex, 3)
    second = dag.newVertex("second", TagWithIndex, 3)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.between(source, first)).edge(Edge.between(first, second).isolated())
    dag.edge(Edge.between(second, sink))
    tagged = received(jet, dag)
    assert all(index == inner[0] for index, _, inner in tagged)
    assert sorted(inner[2] for _, _, inner in tagged) == list(range(30))


def test_two_inputs_arrive_on_their_ordinals_lower_priority_number_first(jet):
    dag = DAG()
    left = dag.newVertex("left", ItemsP(tuple(f"L{i}" for i in range(20))), 2)
    right = dag.newVertex("right", ItemsP(tuple(f"R{i}" for i in range(20))), 3)
    merge = dag.newVertex("merge", TagWithIndex, 2)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.from_(left).to(merge, 0).distributed())
    dag.edge(Edge.from_(right).to(merge, 1).distributed().priority(-1))
    dag.edge(Edge.between(merge, sink))
    tagged = received(jet, dag)
    assert sorted(item for _, ordinal, item in tagged if ordinal == 0) == sorted(f"L{i}" for i in range(20))
    assert sorted(item for _, ordinal, item in tagged if ordinal == 1) == sorted(f"R{i}" for i in range(20))
    for processor in (0, 1):
        ordinals = [ordinal for index, ordinal, _ in tagged if index == processor]
        assert ordinals == sorted(ordinals, reverse=True), "priority -1 (ordinal 1) comes first"


def test_vertex_with_two_outbound_edges_feeds_both(jet):
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(12))), 2)
    left = dag.newVertex("left", ListSinkP("received"), 1)
    right = dag.newVertex("right", ListSinkP("received"), 1)
    dag.edge(Edge.from_(source, 0).to(left)).edge(Edge.from_(source, 1).to(right))
    assert sorted(received(jet, dag)) == sorted(list(range(12)) * 2)


@pytest.mark.parametrize("upstream, downstream", [(3, 3), (2, 3), (4, 2), (1, 4)])
def test_local_partitioned_sends_each_key_to_one_processor_of_the_job(jet, upstream, downstream):
    tagged = received(jet, routedDag(lambda e: e.partitioned(lambda x: x % 7), range(70), upstream, downstream))
    owners = {}
    for index, _, item in tagged:
        owners.setdefault(item % 7, set()).add(index)
    assert all(len(processors) == 1 for processors in owners.values())
    assert sorted(item for _, _, item in tagged) == list(range(70))


@pytest.mark.parametrize("upstream, downstream", [(3, 3), (2, 4)])
def test_local_broadcast_reaches_every_processor(jet, upstream, downstream):
    tagged = received(jet, routedDag(lambda e: e.broadcast(), range(6), upstream, downstream))
    assert Counter((index, item) for index, _, item in tagged) == Counter(
        {(index, item): 1 for index in range(downstream) for item in range(6)}
    )


def test_equal_priorities_interleave_and_both_complete(jet):
    dag = DAG()
    left = dag.newVertex("left", ItemsP(tuple(f"L{i}" for i in range(300))), 2)
    right = dag.newVertex("right", ItemsP(tuple(f"R{i}" for i in range(300))), 2)
    merge = dag.newVertex("merge", TagWithIndex, 1)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.from_(left).to(merge, 0).distributed())
    dag.edge(Edge.from_(right).to(merge, 1).distributed())
    dag.edge(Edge.between(merge, sink))
    tagged = received(jet, dag)
    assert Counter(ordinal for _, ordinal, _ in tagged) == {0: 300, 1: 300}


class Collector(AbstractProcessor):
    """Emits ``(ordinal, item)`` for every item of every ordinal."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        if ordinal is None:
            return True
        return self.tryEmit((ordinal, item))


def test_fork_that_rejoins_with_different_priorities_completes(jet):
    for buffered in (False, True):
        dag = DAG()
        source = dag.newVertex("source", ItemsP(tuple(range(50))), 2)
        left = dag.newVertex("left", TagWithIndex, 2)
        right = dag.newVertex("right", TagWithIndex, 2)
        join = dag.newVertex("join", Collector, 2)
        sink = dag.newVertex("sink", ListSinkP(f"rejoined-{buffered}"), 1)
        dag.edge(Edge.from_(source, 0).to(left)).edge(Edge.from_(source, 1).to(right))
        lowPriority = Edge.from_(right).to(join, 1).priority(1)
        dag.edge(Edge.from_(left).to(join, 0)).edge(lowPriority.buffered() if buffered else lowPriority)
        dag.edge(Edge.between(join, sink))
        jet.newJob(dag).join()
        rejoined = jet.getList(f"rejoined-{buffered}")
        assert Counter(ordinal for ordinal, _ in rejoined) == {0: 50, 1: 50}
        assert sorted(inner[2] for ordinal, inner in rejoined if ordinal == 1) == list(range(50))


def test_diamond_gives_exact_results(jet):
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(30))), 3)
    left = dag.newVertex("left", TagWithIndex, 2)
    right = dag.newVertex("right", TagWithIndex, 3)
    bottom = dag.newVertex("bottom", Collector, 1)
    sink = dag.newVertex("sink", ListSinkP("diamond"), 1)
    dag.edge(Edge.from_(source, 0).to(left).distributed())
    dag.edge(Edge.from_(source, 1).to(right))
    dag.edge(Edge.from_(left).to(bottom, 0)).edge(Edge.from_(right).to(bottom, 1))
    dag.edge(Edge.between(bottom, sink))
    jet.newJob(dag).join()
    byOrdinal = {0: [], 1: []}
    for ordinal, (_, _, item) in jet.getList("diamond"):
        byOrdinal[ordinal].append(item)
    assert sorted(byOrdinal[0]) == sorted(byOrdinal[1]) == list(range(30))


def test_vertex_with_three_inputs_sees_each_on_its_ordinal(jet):
    dag = DAG()
    merge = dag.newVertex("merge", Collector, 2)
    sink = dag.newVertex("sink", ListSinkP("three"), 1)
    for ordinal in range(3):
        source = dag.newVertex(f"source{ordinal}", ItemsP(tuple(f"{ordinal}-{i}" for i in range(10))), ordinal + 1)
        dag.edge(Edge.from_(source).to(merge, ordinal).distributed())
    dag.edge(Edge.between(merge, sink))
    jet.newJob(dag).join()
    assert sorted(jet.getList("three")) == sorted(
        (ordinal, f"{ordinal}-{i}") for ordinal in range(3) for i in range(10)
    )


class FailingAfterOne(AbstractProcessor):
    """Takes one item, fails on the next; close() leaves a marker file named by the item."""

    def tryProcess0(self, item) -> bool:
        self.marker = item[0]
        if item[1] > 0:
            raise RuntimeError("second item")
        return True

    def close(self) -> None:
        with open(self.marker, "w") as file:
            file.write("closed")


def test_close_is_called_when_a_processor_fails_on_spark(jet, tmp_path):
    marker = str(tmp_path / "closed")
    dag = DAG()
    source = dag.newVertex("source", ItemsP(((marker, 0), (marker, 1))), 1)
    failing = dag.newVertex("failing", FailingAfterOne, 1)
    dag.edge(Edge.between(source, failing))
    with pytest.raises(UserFunctionError, match=r"^Stage 'failing' failed on item .*: RuntimeError: second item"):
        jet.newJob(dag).join()
    assert (tmp_path / "closed").read_text() == "closed"


class OutOfRange(Partitioner):
    """Returns one partition too many."""

    def getPartition(self, key, partitionCount: int) -> int:
        return partitionCount


def test_partition_out_of_range_names_the_edge_and_the_value(jet):
    dag = routedDag(lambda e: e.distributed().partitioned(lambda x: x, OutOfRange()))
    with pytest.raises(DagError, match=r"^Edge source -> tagger: OutOfRange.getPartition\(\d+, 4\) returned 4, expected 0 to 3$"):
        jet.newJob(dag).join()


def workerPids(jet, name: str, parallelism: int) -> set[int]:
    """Run a source and a map at ``parallelism``; return the processes of the map's Python workers."""
    from sparkjet.pipeline import Pipeline, Sinks, Sources

    p = Pipeline.create()
    p.readFrom(Sources.items(range(8))).setLocalParallelism(parallelism).map(
        lambda _: __import__("os").getpid()
    ).setLocalParallelism(parallelism).writeTo(Sinks.list(name))
    jet.newJob(p).join()
    return set(jet.getList(name))


def test_a_source_task_leaves_its_python_worker_alive_for_reuse(jet):
    """A source ignores its empty input, yet reads it to the end: PySpark then keeps the
    worker for the next task instead of forking (and importing) a new one for every task. The
    idle workers are taken in turn, so a few later jobs of 8 tasks each run in the first's."""
    first, later = workerPids(jet, "firstWorkers", 2), set()
    for run in range(4):
        later |= workerPids(jet, f"laterWorkers{run}", 8)
        if first <= later:
            break
    assert first <= later, f"the first job's workers {sorted(first)} ran no later task (those ran in {sorted(later)})"


class TagWithSparkTask(AbstractProcessor):
    """Emits ``(globalProcessorIndex, the Spark task's partition)`` for every item."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        from pyspark import TaskContext

        if ordinal is None:
            return True
        return self.tryEmit((self.context.globalProcessorIndex, TaskContext.get().partitionId()))


def test_a_list_sink_of_parallelism_one_leaves_each_upstream_processor_its_own_task(jet):
    """Coalescing the upstream into the sink's one task would run its processors one after
    another; the list is the same either way."""
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(40))), 3)
    tagger = dag.newVertex("tagger", TagWithSparkTask, 3)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.between(source, tagger).isolated()).edge(Edge.between(tagger, sink))
    assert sorted(set(received(jet, dag))) == [(0, 0), (1, 1), (2, 2)]


class EmitsToAMissingEdge(AbstractProcessor):
    """Emits to ordinal 3, though its vertex has one outbound edge."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        return ordinal is None or self.tryEmit(item, 3)


def test_a_processor_breaking_the_outbox_contract_on_spark_fails_the_job_with_that_error(jet):
    dag = DAG()
    source = dag.newVertex("source", ItemsP((1, 2)), 1)
    breaking = dag.newVertex("breaking", EmitsToAMissingEdge, 1)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.between(source, breaking)).edge(Edge.between(breaking, sink))
    with pytest.raises(ProcessorContractError, match=r"^Outbox has no bucket at ordinal 3: the vertex has 1 outbound edge\(s\)$"):
        jet.newJob(dag).join()
