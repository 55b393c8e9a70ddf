"""DAG: ported from Jet's DAGTest, with Jet's messages."""

import pathlib
import subprocess
import sys

import pytest

from sparkjet.coredag import DAG, DagError, Edge, Vertex

PROJECT = pathlib.Path(__file__).resolve().parents[2]


def noop():
    """A processor supplier that is never called."""


def dagWith(*names):
    """Return a DAG with a vertex per name, and the vertices."""
    dag = DAG()
    return dag, [dag.newVertex(name, noop) for name in names]


def test_new_vertex_is_in_the_dag():
    dag, (a,) = dagWith("a")
    assert dag.getVertex("a") is a
    assert dag.vertices() == (a,)


def test_vertex_adds_a_ready_made_vertex():
    dag = DAG()
    a = Vertex("a", noop, 2)
    assert dag.vertex(a) is dag
    assert dag.getVertex("a") == a


def test_unknown_vertex_lookup_names_it():
    with pytest.raises(DagError, match="Vertex x is not in this DAG"):
        DAG().getVertex("x")


def test_duplicate_vertex_is_rejected():
    dag, _ = dagWith("a")
    with pytest.raises(DagError) as raised:
        dag.newVertex("a", noop)
    assert str(raised.value) == "Vertex a is already defined."


def test_connecting_known_vertices_succeeds():
    dag, (a, b) = dagWith("a", "b")
    edge = Edge.between(a, b)
    assert dag.edge(edge) is dag
    assert dag.edges() == (edge,)


def test_unknown_source_is_rejected():
    dag, (b,) = dagWith("b")
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(Vertex("x", noop), b))
    assert str(raised.value) == "Source vertex 'x' is not in this DAG"


def test_unknown_destination_is_rejected():
    dag, (a,) = dagWith("a")
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(a, Vertex("y", noop)))
    assert str(raised.value) == "Destination vertex 'y' is not in this DAG"


def test_edge_without_destination_is_rejected():
    dag, (a,) = dagWith("a")
    with pytest.raises(DagError, match="Edge has no destination"):
        dag.edge(Edge.from_(a))
    assert dag.edges() == ()


def test_self_edge_is_rejected():
    dag, (a,) = dagWith("a")
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(a, a))
    assert str(raised.value) == "Attempted to add an edge from a to itself"


def test_multigraph_is_valid():
    """Jet's DAGTest.when_multigraph_then_valid: edges between the same two vertices, at
    ordinals of their own."""
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.from_(a, 0).to(b, 0))
    dag.edge(Edge.from_(a, 1).to(b, 1))
    assert [(e.sourceOrdinal, e.destOrdinal) for e in dag.getInboundEdges("b")] == [(0, 0), (1, 1)]
    assert [v.name for v in dag.validate()] == ["a", "b"]


def test_multigraph_still_needs_free_ordinals():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.from_(a, 0).to(b, 0))
    with pytest.raises(DagError, match="Vertex 'b' already has an inbound edge at ordinal 0"):
        dag.edge(Edge.from_(a, 1).to(b, 0))


def test_different_source_with_same_name_is_refused():
    """Jet's DAGTest.when_differentSourceWithSameName_then_illegalArgument."""
    a1, a2, b = Vertex("a", hash), Vertex("a", str), Vertex("b", noop)
    dag = DAG().vertex(a1).vertex(b)
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(a2, b))
    assert str(raised.value) == (
        "This DAG has a vertex called 'a', but the supplied edge's source is a different vertex "
        "with the same name"
    )


def test_different_destination_with_same_name_is_refused():
    """Jet's DAGTest.when_differentDestinationWithSameName_then_illegalArgument; an equal
    value is still another vertex, as Jet compares vertices by identity."""
    a, b1, b2 = Vertex("a", noop), Vertex("b", noop), Vertex("b", noop)
    dag = DAG().vertex(a).vertex(b1)
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(a, b2))
    assert str(raised.value) == (
        "This DAG has a vertex called 'b', but the supplied edge's destination is a different "
        "vertex with the same name"
    )


def test_new_unique_vertex_numbers_taken_names():
    """Jet's DAGTest.when_newUniqueVertex_then_hasIt."""
    dag = DAG()
    a0 = dag.newUniqueVertex("a", noop)
    assert dag.getVertex("a") is a0
    a1 = dag.newUniqueVertex("a", noop)
    assert dag.getVertex("a-2") is a1
    assert dag.newUniqueVertex("a", noop, 3) is dag.getVertex("a-3")
    assert dag.getVertex("a-3").localParallelism == 3


def test_with_vertices_rebinds_every_edge_to_the_replaced_vertices():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.from_(a, 0).to(b, 0)).edge(Edge.from_(a, 1).to(b, 1))
    copy = dag.withVertices(lambda vertex: Vertex(vertex.name, str, 2))
    assert [v.localParallelism for v in copy.vertices()] == [2, 2]
    assert all(
        e.source is copy.getVertex("a") and e.destination is copy.getVertex("b") for e in copy.edges()
    )
    assert [(e.sourceOrdinal, e.destOrdinal) for e in copy.edges()] == [(0, 0), (1, 1)]
    assert dag.getVertex("a") is a


def test_iterating_an_empty_dag_validates_it():
    """Jet's ``iterator()`` validates: an empty DAG fails when iterated, not only in validate()."""
    with pytest.raises(DagError, match="DAG must contain at least one vertex"):
        list(DAG())


def test_iterating_a_dag_with_an_ordinal_gap_validates_it():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(a, 0).to(c, 0)).edge(Edge.from_(b, 0).to(c, 2))
    with pytest.raises(DagError, match=r"Input ordinals for vertex c are not properly numbered. Actual: \[0, 2\]"):
        list(dag)


def test_inbound_ordinal_taken_hints_at_from_to():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.between(a, c))
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(b, c))
    assert str(raised.value) == (
        "Vertex 'c' already has an inbound edge at ordinal 0, "
        "use Edge.from_().to() to specify another ordinal"
    )


def test_inbound_ordinal_taken_without_hint_when_an_ordinal_was_given():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(a).to(c, 1))
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.from_(b).to(c, 1))
    assert str(raised.value) == "Vertex 'c' already has an inbound edge at ordinal 1"


def test_outbound_ordinal_taken_hints_at_from_to():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.between(a, b))
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.between(a, c))
    assert str(raised.value) == (
        "Vertex 'a' already has an outbound edge at ordinal 0, "
        "use Edge.from_().to() to specify another ordinal"
    )


def test_outbound_ordinal_taken_without_hint_when_an_ordinal_was_given():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(a, 1).to(b))
    with pytest.raises(DagError) as raised:
        dag.edge(Edge.from_(a, 1).to(c))
    assert str(raised.value) == "Vertex 'a' already has an outbound edge at ordinal 1"


def test_gap_in_input_ordinals_is_invalid():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(a).to(b, 0)).edge(Edge.from_(c).to(b, 2))
    with pytest.raises(DagError) as raised:
        dag.validate()
    assert str(raised.value) == (
        "Input ordinals for vertex b are not properly numbered. Actual: [0, 2] Expected: [0, 1]"
    )


def test_gap_in_output_ordinals_is_invalid():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(a, 0).to(b)).edge(Edge.from_(a, 2).to(c))
    with pytest.raises(DagError) as raised:
        dag.validate()
    assert str(raised.value) == (
        "Output ordinals for vertex a are not ordered. Actual: [0, 2] Expected: [0, 1]"
    )


def test_ordinals_added_out_of_order_are_valid():
    dag, (a, b, c) = dagWith("a", "b", "c")
    dag.edge(Edge.from_(c).to(b, 1)).edge(Edge.from_(a).to(b, 0))
    assert dag.validate() is dag


def test_cycle_is_invalid_and_named():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.between(a, b)).edge(Edge.from_(b).to(a, 0))
    with pytest.raises(DagError) as raised:
        dag.validate()
    assert str(raised.value) in (
        "DAG contains a cycle: a -> b -> a",
        "DAG contains a cycle: b -> a -> b",
    )


def test_cycle_message_lists_only_the_cycle():
    dag, (s, a, b, c) = dagWith("s", "a", "b", "c")
    dag.edge(Edge.between(s, a)).edge(Edge.between(a, b)).edge(Edge.between(b, c))
    dag.edge(Edge.from_(c).to(a, 1))
    with pytest.raises(DagError) as raised:
        dag.validate()
    assert str(raised.value) == "DAG contains a cycle: a -> b -> c -> a"


def test_iterating_a_cyclic_dag_raises():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.between(a, b)).edge(Edge.from_(b).to(a, 0))
    with pytest.raises(DagError, match="DAG contains a cycle"):
        list(dag)


def test_empty_dag_is_invalid():
    with pytest.raises(DagError) as raised:
        DAG().validate()
    assert str(raised.value) == "DAG must contain at least one vertex"


def test_single_vertex_dag_is_valid():
    dag, _ = dagWith("a")
    assert dag.validate() is dag


def test_isolated_distributed_edge_is_invalid():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.between(a, b).isolated().distributed())
    with pytest.raises(DagError) as raised:
        dag.validate()
    assert str(raised.value) == (
        'Isolated edges must be local: between("a", "b").isolated().distributed()'
    )


def test_isolated_local_edge_is_valid():
    dag, (a, b) = dagWith("a", "b")
    dag.edge(Edge.between(a, b).isolated())
    assert dag.validate() is dag


def test_iteration_is_topological_whatever_the_insertion_order():
    dag, (d, c, b, a) = dagWith("d", "c", "b", "a")
    dag.edge(Edge.between(a, b)).edge(Edge.between(b, c)).edge(Edge.between(c, d))
    assert [v.name for v in dag] == ["a", "b", "c", "d"]


def test_iteration_puts_every_source_before_its_destinations():
    dag, (e, d, c, b, a) = dagWith("e", "d", "c", "b", "a")
    for edge in (
        Edge.between(a, c),
        Edge.from_(b).to(c, 1),
        Edge.between(c, d),
        Edge.from_(a, 1).to(e),
        Edge.from_(d).to(e, 1),
    ):
        dag.edge(edge)
    position = {v.name: i for i, v in enumerate(dag)}
    assert sorted(position) == ["a", "b", "c", "d", "e"]
    assert all(position[edge.sourceName] < position[edge.destName] for edge in dag.edges())


def test_iteration_keeps_insertion_order_between_unrelated_vertices():
    dag, _ = dagWith("z", "y", "x")
    assert [v.name for v in dag] == ["z", "y", "x"]


def test_inbound_edges_are_ordered_by_destination_ordinal():
    dag, (a, b, c, d) = dagWith("a", "b", "c", "d")
    second = Edge.from_(c).to(b, 2)
    zeroth = Edge.from_(a).to(b, 0)
    first = Edge.from_(d).to(b, 1)
    dag.edge(second).edge(zeroth).edge(first)
    assert dag.getInboundEdges("b") == [zeroth, first, second]
    assert dag.getInboundEdges("a") == []


def test_outbound_edges_are_ordered_by_source_ordinal():
    dag, (a, b, c, d) = dagWith("a", "b", "c", "d")
    second = Edge.from_(a, 2).to(c)
    zeroth = Edge.from_(a, 0).to(b)
    first = Edge.from_(a, 1).to(d)
    dag.edge(second).edge(zeroth).edge(first)
    assert dag.getOutboundEdges("a") == [zeroth, first, second]
    assert dag.getOutboundEdges("b") == []


def test_building_validating_and_printing_a_dag_never_imports_pyspark():
    code = (
        "import sys\n"
        "from sparkjet.coredag import DAG, Edge\n"
        "import sparkjet.coredag.model.dot, sparkjet.coredag.runtime.tasklet, sparkjet.coredag.processors.sources\n"
        "import sparkjet.coredag.processors.sinks, sparkjet.coredag.processors.aggregation\n"
        "dag = DAG()\n"
        "a, b = dag.newVertex('a', print), dag.newVertex('b', print)\n"
        "dag.edge(Edge.between(a, b).partitioned(str).distributed()).validate()\n"
        "dag.toDotString()\n"
        "sparkjet.coredag.model.dot.dagToGraphviz(dag).source\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT,
        env={"PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"
