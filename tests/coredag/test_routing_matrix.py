"""Seed 000's routing promises on Spark: one uneven case per policy, run as a job (the whole
matrix of policy x locality x parallelisms runs without a JVM in test_routing_pure.py).

Every job is ``source (ItemsP, parallelism U) -> tagger (parallelism D) -> ListSinkP (1)``;
the tagger emits ``(globalProcessorIndex, item)``. ItemsP gives processor i of U the items
i, i+U, i+2U..., so ``item % U`` names the upstream processor that sent an item.
"""

from collections import Counter

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, DagError, DefaultPartitioner, Edge, Partitioner
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from tests.coredag.test_routing_pure import assertUnicastPromise

pytestmark = pytest.mark.spark

ITEMS = 61
"""Prime: the upstream shares and the per-receiver counts come out uneven."""

KEYS = 7


def case(*cases):
    """Parametrize ``upstream, downstream, distributed`` with ``(U, D, distributed)`` cases."""
    ids = [f"U{u}-D{d}-{'distributed' if remote else 'local'}" for u, d, remote in cases]
    return pytest.mark.parametrize("upstream, downstream, distributed", cases, ids=ids)


class TagWithIndex(AbstractProcessor):
    """Emits ``(globalProcessorIndex, item)`` for every item it receives."""

    def tryProcess(self, ordinal=None, item=None) -> bool:
        if ordinal is None:
            return True
        return self.tryEmit((self.context.globalProcessorIndex, item))


class Reversed(Partitioner):
    """Key k to partition ``(count - 1 - k) % count``: the opposite end from plain modulo."""

    def getPartition(self, key, partitionCount: int) -> int:
        return (partitionCount - 1 - key) % partitionCount


def keyOf(item: int) -> int:
    return item % KEYS


def textKeyOf(item: int) -> str:
    return f"key-{item % KEYS}"


def routingDag(edgeOf, upstream: int, downstream: int, listName: str, items=range(ITEMS)) -> DAG:
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(items)), upstream)
    tagger = dag.newVertex("tagger", TagWithIndex, downstream)
    sink = dag.newVertex("sink", ListSinkP(listName), 1)
    dag.edge(edgeOf(Edge.between(source, tagger))).edge(Edge.between(tagger, sink))
    return dag


def received(jet, request, edgeOf, upstream: int, downstream: int, distributed: bool, suffix: str = ""):
    """Run the routing job; return its ``(downstream processor, item)`` pairs."""
    listName = f"{request.node.name}{suffix}"

    def located(edge: Edge) -> Edge:
        edge = edgeOf(edge)
        return edge.distributed() if distributed else edge.local()

    jet.newJob(routingDag(located, upstream, downstream, listName)).join()
    return list(jet.getList(listName))


def ownersByKey(tagged, key=keyOf) -> dict:
    owners: dict = {}
    for processor, item in tagged:
        owners.setdefault(key(item), set()).add(processor)
    return owners


@case((3, 2, False), (2, 5, True))
def test_unicast_each_item_reaches_exactly_one_processor(jet, request, upstream, downstream, distributed):
    tagged = received(jet, request, Edge.unicast, upstream, downstream, distributed)
    assertUnicastPromise(tagged, upstream, downstream, distributed)


@case((3, 2, False), (2, 5, True))
def test_partitioned_default_puts_each_key_on_one_processor(jet, request, upstream, downstream, distributed):
    tagged = received(jet, request, lambda e: e.partitioned(keyOf), upstream, downstream, distributed)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    owners = ownersByKey(tagged)
    assert set(owners) == set(range(KEYS))
    assert all(len(processors) == 1 for processors in owners.values()), owners
    assert set().union(*owners.values()) <= set(range(downstream))


@case((2, 5, True),)
def test_partitioned_custom_partitioner_is_obeyed_exactly(jet, request, upstream, downstream, distributed):
    tagged = received(
        jet, request, lambda e: e.partitioned(keyOf, Reversed()), upstream, downstream, distributed
    )
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    wrong = [(p, item) for p, item in tagged if p != Reversed().getPartition(keyOf(item), downstream)]
    assert wrong == []


@case((2, 3, False),)
def test_broadcast_every_processor_receives_every_item_once(jet, request, upstream, downstream, distributed):
    tagged = received(jet, request, Edge.broadcast, upstream, downstream, distributed)
    assert Counter(tagged) == Counter(
        {(processor, item): 1 for processor in range(downstream) for item in range(ITEMS)}
    )


@case((3, 2, True),)
def test_all_to_one_one_processor_receives_everything(jet, request, upstream, downstream, distributed):
    tagged = received(jet, request, Edge.allToOne, upstream, downstream, distributed)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    receivers = {processor for processor, _ in tagged}
    assert len(receivers) == 1 and receivers <= set(range(downstream)), receivers


ISOLATED_PAIRS = [(2, 3)]


@pytest.mark.parametrize(
    "upstream, downstream", ISOLATED_PAIRS, ids=[f"U{u}-D{d}" for u, d in ISOLATED_PAIRS]
)
def test_isolated_processor_i_feeds_only_processors_congruent_to_i(jet, request, upstream, downstream):
    tagged = received(jet, request, Edge.isolated, upstream, downstream, distributed=False)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    strays = [(p, item) for p, item in tagged if p % upstream != item % upstream]
    assert strays == []
    if downstream == upstream:
        assert all(p == item % upstream for p, item in tagged)
    assert {processor for processor, _ in tagged} == set(range(downstream))


def test_isolated_distributed_edge_is_rejected_by_new_job(jet, request):
    dag = routingDag(lambda e: e.isolated().distributed(), 2, 2, request.node.name)
    with pytest.raises(DagError, match="Isolated edges must be local"):
        jet.newJob(dag)


@pytest.mark.parametrize("upstream, downstream", [(3, 2)], ids=["U3-D2"])
def test_isolated_into_lower_parallelism_sends_each_upstream_processor_to_one(jet, request, upstream, downstream):
    """Jet 4.4's ISOLATED with LP_upstream >= LP_downstream, on Spark."""
    tagged = received(jet, request, Edge.isolated, upstream, downstream, distributed=False)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    receivers = {i: {p for p, item in tagged if item % upstream == i} for i in range(upstream)}
    assert all(len(targets) == 1 for targets in receivers.values()), receivers
    assert set().union(*receivers.values()) == set(range(downstream))


class ListsSourceP(AbstractProcessor):
    """Processor i emits the i-th list, as Jet's ListsSourceP."""

    def __init__(self, lists):
        super().__init__()
        self.lists = lists

    def onInit(self, context) -> None:
        self.traverser = iter(self.lists[context.globalProcessorIndex])

    def complete(self) -> bool:
        return self.emitFromTraverser(self.traverser)


def test_isolated_from_three_into_two_sends_processor_i_to_i_mod_2(jet, request):
    """Jet's RoutingPolicyTest.when_isolated_downstreamLowerThanUpstream_2: processors 0 and 2
    of the producer feed consumer 0, processor 1 feeds consumer 1 (a narrow coalesce)."""
    low, high, highest = range(0, 4096), range(4096, 8192), range(8192, 16384)
    dag = DAG()
    producer = dag.newVertex("producer", lambda: ListsSourceP([low, high, highest]), 3)
    consumer = dag.newVertex("consumer", TagWithIndex, 2)
    sink = dag.newVertex("sink", ListSinkP(request.node.name), 1)
    dag.edge(Edge.between(producer, consumer).isolated()).edge(Edge.between(consumer, sink))
    jet.newJob(dag).join()
    lists = {0: [], 1: []}
    for processor, item in jet.getList(request.node.name):
        lists[processor].append(item)
    assert sorted(lists[0]) == [*low, *highest]
    assert sorted(lists[1]) == list(high)


def test_default_partitioner_assignment_is_the_same_on_every_run(jet, request):
    runs = [
        ownersByKey(
            received(jet, request, lambda e: e.partitioned(textKeyOf), 3, 4, True, f"-{run}"), textKeyOf
        )
        for run in range(2)
    ]
    assert all(len(processors) == 1 for processors in runs[0].values())
    assert runs[0] == runs[1]


def test_local_and_distributed_partitioned_edges_agree_on_the_murmur3_partition(jet, request):
    local, distributed = (
        ownersByKey(
            received(jet, request, lambda e: e.partitioned(textKeyOf), 2, 3, isDistributed, f"-{isDistributed}"),
            textKeyOf,
        )
        for isDistributed in (False, True)
    )
    expected = {f"key-{k}": {DefaultPartitioner().getPartition(f"key-{k}", 3)} for k in range(KEYS)}
    assert local == distributed == expected
    assert len(set().union(*expected.values())) > 1, "the keys must not all share one processor"
