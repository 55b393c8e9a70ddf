"""Seed 000's routing promises without a JVM: every policy x locality x uneven parallelisms,
through the physical plan's exchange and the edge's route, as the Spark runtime delivers them.

Every DAG is ``source (ItemsP, parallelism U) -> tagger (parallelism D) -> ListSinkP (1)``;
upstream processor i holds the items i, i+U, i+2U..., as ItemsP gives them, so ``item % U``
names the processor that sent an item.
"""

import pickle
from collections import Counter

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, DagError, DefaultPartitioner, Edge, Partitioner, UserFunctionError
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.routing import Route, packets
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.physical_plan import physicalPlan
from sparkjet.coredag.runtime.shuffling import routeItems

ITEMS = 61
"""Prime: the upstream shares and the per-receiver counts come out uneven."""

KEYS = 7
PAIRS = [(1, 4), (2, 3), (3, 2), (2, 5), (4, 1), (3, 3)]
LOCALITY = pytest.mark.parametrize("distributed", [False, True], ids=["local", "distributed"])
MATRIX = pytest.mark.parametrize("upstream, downstream", PAIRS, ids=[f"U{u}-D{d}" for u, d in PAIRS])


class Tagger(AbstractProcessor):
    """A user processor: the edge into it may not be rerouted."""


class Reversed(Partitioner):
    """Key k to partition ``(count - 1 - k) % count``: the opposite end from plain modulo."""

    def getPartition(self, key, partitionCount: int) -> int:
        return (partitionCount - 1 - key) % partitionCount


def keyOf(item: int) -> int:
    return item % KEYS


def delivered(edgeOf, upstream: int, downstream: int, distributed: bool = False) -> list[tuple[int, int]]:
    """Return the ``(downstream processor, item)`` pairs the tagger receives."""
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(ITEMS))), upstream)
    tagger = dag.newVertex("tagger", Tagger, downstream)
    sink = dag.newVertex("sink", ListSinkP("out"), 1)
    edge = edgeOf(Edge.between(source, tagger))
    edge = edge.distributed() if distributed else edge.local()
    dag.edge(edge).edge(Edge.between(tagger, sink))
    planned = physicalPlan(dag, defaultParallelism=8).edge(edge)
    route = Route.of(edge, upstream, downstream, planned.narrow, dag.getVertex("tagger"))
    pairs = []
    for index in range(upstream):
        items = range(index, ITEMS, upstream)
        if planned.exchange is Exchange.SHUFFLED:
            pairs += route.targets(index, iter(items))
        else:  # the items stay with their processor, in its task or coalesced with others'
            pairs += [(route.narrowTarget(index), item) for item in items]
    return pairs


def routeOf(edgeOf, upstream: int, downstream: int, narrow: bool = False) -> Route:
    """Return the route of ``edgeOf(a -> b)`` between processors of the given counts."""
    dag = DAG()
    a, b = dag.newVertex("a", Tagger), dag.newVertex("b", Tagger)
    return Route.of(edgeOf(Edge.between(a, b)), upstream, downstream, narrow, b)


def ownersByKey(tagged) -> dict:
    owners: dict = {}
    for processor, item in tagged:
        owners.setdefault(keyOf(item), set()).add(processor)
    return owners


@MATRIX
@LOCALITY
def test_unicast_each_item_reaches_exactly_one_processor(upstream, downstream, distributed):
    assertUnicastPromise(delivered(Edge.unicast, upstream, downstream, distributed), upstream, downstream, distributed)


@MATRIX
@LOCALITY
def test_fanout_routes_as_unicast_on_sparkjets_one_member(upstream, downstream, distributed):
    """Jet's FANOUT sends each item to one processor of every member; a sparkjet job is one
    member, so it keeps unicast's promise."""
    assertUnicastPromise(delivered(Edge.fanout, upstream, downstream, distributed), upstream, downstream, distributed)


def assertUnicastPromise(tagged: list[tuple[int, int]], upstream: int, downstream: int, distributed: bool) -> None:
    """Assert Jet's unicast promise on ``(processor, item)`` pairs: every item exactly once, and
    a distributed edge spreads each sender's items evenly over every processor."""
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    assert {processor for processor, _ in tagged} <= set(range(downstream))
    if distributed:
        assert {processor for processor, _ in tagged} == set(range(downstream))
        for sender in range(upstream):
            sent = Counter(processor for processor, item in tagged if item % upstream == sender)
            perReceiver = [sent[processor] for processor in range(downstream)]
            assert max(perReceiver) - min(perReceiver) <= 1, (sender, perReceiver)


@MATRIX
@LOCALITY
def test_partitioned_puts_each_key_on_the_same_processor_from_every_upstream(upstream, downstream, distributed):
    tagged = delivered(lambda e: e.partitioned(keyOf), upstream, downstream, distributed)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    owners = ownersByKey(tagged)
    assert set(owners) == set(range(KEYS))
    assert owners == {key: {DefaultPartitioner().getPartition(key, downstream)} for key in range(KEYS)}


@MATRIX
@LOCALITY
def test_partitioned_custom_partitioner_is_obeyed_exactly(upstream, downstream, distributed):
    tagged = delivered(lambda e: e.partitioned(keyOf, Reversed()), upstream, downstream, distributed)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    assert [(p, item) for p, item in tagged if p != Reversed().getPartition(keyOf(item), downstream)] == []


@MATRIX
@LOCALITY
def test_broadcast_every_processor_receives_every_item_once(upstream, downstream, distributed):
    tagged = delivered(Edge.broadcast, upstream, downstream, distributed)
    assert Counter(tagged) == Counter({(p, item): 1 for p in range(downstream) for item in range(ITEMS)})


@MATRIX
@LOCALITY
def test_all_to_one_one_processor_receives_everything(upstream, downstream, distributed):
    tagged = delivered(Edge.allToOne, upstream, downstream, distributed)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    receivers = {processor for processor, _ in tagged}
    assert len(receivers) == 1 and receivers <= set(range(downstream)), receivers


def test_all_to_one_with_a_key_always_picks_the_keys_processor():
    tagged = delivered(lambda e: e.allToOne("k"), 3, 5)
    assert {p for p, _ in tagged} == {DefaultPartitioner().getPartition("k", 5)}


ISOLATED_PAIRS = [(1, 4), (2, 3), (2, 5), (3, 3), (4, 4)]


@pytest.mark.parametrize("upstream, downstream", ISOLATED_PAIRS, ids=[f"U{u}-D{d}" for u, d in ISOLATED_PAIRS])
def test_isolated_processor_i_feeds_only_processors_congruent_to_i(upstream, downstream):
    tagged = delivered(Edge.isolated, upstream, downstream)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    assert [(p, item) for p, item in tagged if p % upstream != item % upstream] == []
    if downstream == upstream:
        assert all(p == item % upstream for p, item in tagged)
    assert {processor for processor, _ in tagged} == set(range(downstream))


FEWER_PAIRS = [(3, 2), (4, 1), (5, 3)]


@pytest.mark.parametrize("upstream, downstream", FEWER_PAIRS, ids=[f"U{u}-D{d}" for u, d in FEWER_PAIRS])
def test_isolated_into_fewer_processors_sends_each_upstream_to_one(upstream, downstream):
    """Jet 4.4's ISOLATED: where LP_upstream >= LP_downstream, every upstream processor sends
    to only one downstream processor (upstream processor i emitted the items congruent to i)."""
    tagged = delivered(Edge.isolated, upstream, downstream)
    assert sorted(item for _, item in tagged) == list(range(ITEMS))
    receivers = {i: {p for p, item in tagged if item % upstream == i} for i in range(upstream)}
    assert all(len(targets) == 1 for targets in receivers.values()), receivers
    assert set().union(*receivers.values()) == set(range(downstream))


@pytest.mark.parametrize("upstream, downstream", FEWER_PAIRS, ids=[f"U{u}-D{d}" for u, d in FEWER_PAIRS])
def test_isolated_into_fewer_processors_sends_processor_i_to_i_mod_downstream(upstream, downstream):
    """Jet's rule on the narrow path too: upstream processor i feeds processor ``i mod D``
    (RoutingPolicyTest.when_isolated_downstreamLowerThanUpstream_2: of 3 into 2, processor 2
    feeds processor 0), whether the edge is coalesced or shuffled beside another input."""
    tagged = delivered(Edge.isolated, upstream, downstream)
    assert {(p, item % upstream) for p, item in tagged} == {(i % downstream, i) for i in range(upstream)}
    for narrow in (True, False):
        route = routeOf(Edge.isolated, upstream, downstream, narrow)
        assert [{p for p, _ in route.targets(i, iter(range(5)))} for i in range(upstream)] == [
            {i % downstream} for i in range(upstream)
        ]


@pytest.mark.parametrize("upstream, downstream", [(3, 2), (2, 5), (5, 3)], ids=["U3-D2", "U2-D5", "U5-D3"])
def test_a_shuffled_isolated_route_follows_jets_rule(upstream, downstream):
    """Off the narrow path, upstream processor i feeds the downstream processors j with
    ``j mod U == i mod D``, as Jet's ExecutionPlan connects them."""
    route = routeOf(Edge.isolated, upstream, downstream, narrow=False)
    for index in range(upstream):
        targets = {target for target, _ in route.targets(index, iter(range(12)))}
        assert targets == {j for j in range(downstream) if j % upstream == index % downstream}


def test_a_narrow_route_keeps_each_processors_items_together():
    route = routeOf(lambda e: e.partitioned(keyOf), 4, 2, narrow=True)
    assert [{target for target, _ in route.targets(index, iter(range(10)))} for index in range(4)] == [
        {0}, {0}, {1}, {1}
    ]


def test_a_partition_out_of_range_names_the_edge_and_the_value():
    bad = type("Bad", (Partitioner,), {"getPartition": lambda self, key, count: count})()
    route = routeOf(lambda e: e.partitioned(keyOf, bad), 1, 2)
    with pytest.raises(DagError, match=r"Edge a -> b: Bad.getPartition\(1, 2\) returned 2, expected 0 to 1"):
        list(route.targets(0, iter([1])))


def test_a_failing_key_function_names_the_edge_and_the_item():
    route = routeOf(lambda e: e.partitioned(lambda item: 1 / 0), 1, 2)
    with pytest.raises(UserFunctionError, match="key of edge a -> b"):
        list(route.targets(0, iter(["x"])))


def test_packets_deliver_every_item_once_to_its_target_in_order():
    pairs = [(item % 3, item) for item in range(1000)]
    grouped = list(packets(iter(pairs), 3, 200, pickle.dumps))
    assert all(packet for _, packet in grouped)
    for target in range(3):
        received = [item for t, packet in grouped if t == target for item in packet]
        assert received == [item for t, item in pairs if t == target]
    sizes = [len(pickle.dumps(packet)) for _, packet in grouped[3:-3]]
    assert max(sizes) < 2 * 200, sizes


class Accumulated:
    """Stands in for a Spark accumulator."""

    def __init__(self) -> None:
        self.value = Counter()

    def add(self, counts: Counter) -> None:
        self.value += counts


def test_route_items_pickles_tagged_packets_and_counts_them():
    route = routeOf(lambda e: e.partitioned(keyOf), 1, 2)
    counts = Accumulated()
    sent = list(routeItems(route, 1, 1 << 16, counts, 0, iter([list(range(20))])))
    received = {(target, pair) for target, data in sent for pair in pickle.loads(data)}
    assert received == {(DefaultPartitioner().getPartition(keyOf(i), 2), (1, i)) for i in range(20)}
    assert counts.value["edgeItems", "a", 0] == 20
    assert counts.value["edgeBytes", "a", 0] == sum(len(data) for _, data in sent)
