"""Edge: a frozen value whose builder methods return new edges and whose repr is Jet's call."""

import attrs
import pytest

from sparkjet.coredag import DefaultPartitioner, Edge, EdgeConfig, Partitioner, RoutingPolicy, Vertex


def noop():
    """A processor supplier that is never called."""


A = Vertex("a", noop)
B = Vertex("b", noop)


class ModuloPartitioner(Partitioner):
    """A custom partitioner: the key modulo the count."""

    def getPartition(self, key, partitionCount):
        return key % partitionCount


BUILDER_CALLS = {
    "unicast": lambda e: e.unicast(),
    "isolated": lambda e: e.isolated(),
    "broadcast": lambda e: e.broadcast(),
    "partitioned": lambda e: e.partitioned(len),
    "allToOne": lambda e: e.allToOne("k"),
    "distributed": lambda e: e.distributed(),
    "priority": lambda e: e.priority(-1),
    "buffered": lambda e: e.buffered(),
    "setConfig": lambda e: e.setConfig(EdgeConfig(queueSize=8)),
    "to": lambda e: e.to(Vertex("c", noop), 1),
}


@pytest.mark.parametrize("call", BUILDER_CALLS.values(), ids=BUILDER_CALLS.keys())
def test_builder_method_returns_new_edge_and_leaves_original_unchanged(call):
    original = Edge.between(A, B).partitioned(str)
    snapshot = attrs.asdict(original, recurse=False)

    built = call(original)

    assert built != original
    assert attrs.asdict(original, recurse=False) == snapshot


def test_edge_is_frozen():
    edge = Edge.between(A, B)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        edge.priorityNumber = 5


def test_builder_methods_set_their_field():
    edge = Edge.between(A, B).broadcast().distributed().priority(-1).buffered()
    assert edge.routing is RoutingPolicy.BROADCAST
    assert (edge.isDistributed, edge.priorityNumber, edge.isBuffered) == (True, -1, True)
    assert edge.local().isDistributed is False


def test_from_to_sets_ordinals_and_names():
    edge = Edge.from_(A, 2).to(B, 3)
    assert (edge.sourceName, edge.sourceOrdinal, edge.destName, edge.destOrdinal) == ("a", 2, "b", 3)


def test_partitioned_uses_default_partitioner_unless_given():
    assert isinstance(Edge.between(A, B).partitioned(str).partitioner, DefaultPartitioner)
    custom = ModuloPartitioner()
    assert Edge.between(A, B).partitioned(str, custom).partitioner is custom


def test_changing_routing_forgets_the_partitioning_key():
    edge = Edge.between(A, B).partitioned(str).broadcast()
    assert (edge.routing, edge.keyFn, edge.partitioner) == (RoutingPolicy.BROADCAST, None, None)


REPRS = [
    (Edge.between(A, B), 'between("a", "b")'),
    (Edge.between(A, B).partitioned(str).distributed(), 'between("a", "b").partitioned(?).distributed()'),
    (Edge.between(A, B).partitioned(str, ModuloPartitioner()), 'between("a", "b").partitioned(?, ?)'),
    (Edge.from_(A, 1).to(B), 'from("a", 1).to("b")'),
    (Edge.from_(A).to(B, 2), 'from("a").to("b", 2)'),
    (Edge.from_(A, 1).to(B, 2), 'from("a", 1).to("b", 2)'),
    (Edge.from_(A, 0).to(B, 0), 'between("a", "b")'),
    (Edge.between(A, B).allToOne("key").distributed(), 'between("a", "b").allToOne().distributed()'),
    (Edge.between(A, B).broadcast().priority(-1), 'between("a", "b").broadcast().priority(-1)'),
    (Edge.between(A, B).isolated(), 'between("a", "b").isolated()'),
    (Edge.between(A, B).fanout().distributed(), 'between("a", "b").fanout().distributed()'),
    (Edge.between(A, B).buffered(), 'between("a", "b").buffered()'),
    (Edge.between(A, B).distributed().local(), 'between("a", "b")'),
    (Edge.between(A, B).unicast().priority(0), 'between("a", "b")'),
    (Edge.between(A, B).setConfig(EdgeConfig(queueSize=8)), 'between("a", "b")'),
]


@pytest.mark.parametrize(("edge", "expected"), REPRS, ids=[text for _, text in REPRS])
def test_repr_prints_jets_builder_call(edge, expected):
    assert repr(edge) == expected


def test_edge_config_has_jets_defaults():
    config = EdgeConfig()
    assert (
        config.queueSize,
        config.outboxCapacity,
        config.packetSizeLimit,
        config.receiveWindowMultiplier,
    ) == (1024, 2048, 16384, 3)


def test_new_edge_has_default_config():
    assert Edge.between(A, B).config == EdgeConfig()


@pytest.mark.parametrize(
    "field", ["queueSize", "outboxCapacity", "packetSizeLimit", "receiveWindowMultiplier"]
)
@pytest.mark.parametrize("value", [0, -1])
def test_edge_config_rejects_non_positive_values(field, value):
    with pytest.raises(ValueError) as raised:
        EdgeConfig(**{field: value})
    assert str(raised.value) == f"EdgeConfig.{field} must be positive, got {value}"


def test_edge_config_accepts_positive_values():
    config = EdgeConfig(queueSize=1, outboxCapacity=2, packetSizeLimit=3, receiveWindowMultiplier=4)
    assert attrs.astuple(config) == (1, 2, 3, 4)
