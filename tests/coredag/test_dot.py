"""Jet's DOT text (ported from Jet's DotTest) and the graphviz picture of a DAG."""

import re
import shutil

import graphviz
import pytest

from sparkjet.coredag import DAG, Edge, EdgeConfig
from sparkjet.coredag.model.dot import (
    ROUTING_DRAWING,
    dagToGraphviz,
    edgeDrawing,
    itemChange,
    shortened,
    writeSvg,
)
from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, StageMetrics, VertexMetrics


def noop():
    """A processor supplier that is never called."""


def jetDotTestDag():
    """The DAG of Jet's DotTest: a feeds c (partitioned) and b (distributed broadcast)."""
    dag = DAG()
    a = dag.newVertex("a", noop, 1)
    b = dag.newVertex("b", noop)
    c = dag.newVertex("c", noop, 1)
    dag.newVertex("d", noop, 1)
    dag.edge(Edge.from_(a, 0).to(c, 0).partitioned(str).setConfig(EdgeConfig(queueSize=128)))
    dag.edge(Edge.from_(a, 1).to(b, 0).broadcast().distributed())
    return dag


def test_dot_string_has_jets_vertex_and_edge_lines():
    actual = jetDotTestDag().toDotString()
    assert actual.startswith("digraph DAG {")
    assert '"a" [localParallelism=1];' in actual
    assert '"b" [localParallelism=default];' in actual
    assert '"c" [localParallelism=1];' in actual
    assert '"d" [localParallelism=1];' in actual
    assert '"a" -> "c" [label="partitioned", taillabel=0, queueSize=128];' in actual
    assert '"a" -> "b" [label="distributed-broadcast", taillabel=1, queueSize=1024]' in actual
    assert actual.endswith("\n}")


def test_dot_string_with_default_parallelism_shows_it_for_unset_vertices():
    actual = jetDotTestDag().toDotString(16)
    assert '"b" [localParallelism=16];' in actual
    assert '"a" [localParallelism=1];' in actual
    assert "default" not in actual


def test_dot_string_of_a_chain_is_exact():
    dag = DAG()
    source = dag.newVertex("source", noop, 1)
    mapper = dag.newVertex("map", noop)
    sink = dag.newVertex("sink", noop, 1)
    dag.edge(Edge.between(source, mapper)).edge(Edge.between(mapper, sink).allToOne().distributed())
    assert dag.toDotString() == (
        "digraph DAG {\n"
        '\t"source" [localParallelism=1];\n'
        '\t"map" [localParallelism=default];\n'
        '\t"sink" [localParallelism=1];\n'
        '\t"source" -> "map" [queueSize=1024];\n'
        '\t"map" -> "sink" [label="distributed-partitioned", queueSize=1024];\n'
        "}"
    )


def test_headlabel_only_where_a_vertex_has_several_inbound_edges():
    dag = DAG()
    a, b, c, d = (dag.newVertex(name, noop) for name in "abcd")
    dag.edge(Edge.from_(a).to(c, 0)).edge(Edge.from_(b).to(c, 1)).edge(Edge.between(c, d))
    actual = dag.toDotString()
    assert '"a" -> "c" [headlabel=0, queueSize=1024];' in actual
    assert '"b" -> "c" [headlabel=1, queueSize=1024];' in actual
    assert '"c" -> "d" [queueSize=1024];' in actual


def test_prepare_edge_sits_in_its_own_cluster():
    dag = DAG()
    prepare = dag.newVertex("x-prepare", noop)
    combine = dag.newVertex("x", noop)
    sink = dag.newVertex("sink", noop)
    dag.edge(Edge.between(prepare, combine).partitioned(str).distributed())
    dag.edge(Edge.between(combine, sink))
    actual = dag.toDotString()
    assert (
        "\tsubgraph cluster_0 {\n"
        '\t\t"x-prepare" -> "x" [label="distributed-partitioned", queueSize=1024];\n'
        "\t}\n"
    ) in actual
    assert '\t"x" -> "sink" [queueSize=1024];\n' in actual
    assert "cluster_1" not in actual


def test_each_prepare_edge_gets_a_new_cluster_number():
    dag = DAG()
    for name in ("p", "q"):
        dag.edge(Edge.between(dag.newVertex(f"{name}-prepare", noop), dag.newVertex(name, noop)))
    actual = dag.toDotString()
    assert 'subgraph cluster_0 {\n\t\t"p-prepare" -> "p"' in actual
    assert 'subgraph cluster_1 {\n\t\t"q-prepare" -> "q"' in actual


def test_quotes_in_names_are_escaped():
    dag = DAG()
    source = dag.newVertex('"source vertex"', noop, 1)
    sink = dag.newVertex('si"nk', noop, 1)
    dag.edge(Edge.between(source, sink))
    actual = dag.toDotString()
    assert '\t"\\"source vertex\\"" [localParallelism=1];' in actual
    assert '\t"\\"source vertex\\"" -> "si\\"nk" [queueSize=1024];' in actual


def test_graphviz_picture_is_left_to_right_and_names_every_vertex():
    dag = jetDotTestDag()
    graph = dagToGraphviz(dag)
    assert isinstance(graph, graphviz.Digraph)
    assert "rankdir=LR" in graph.source
    for name in ("a", "b", "c", "d"):
        assert re.search(rf'label="{name}\nparallelism ', graph.source)


def test_graphviz_picture_shows_parallelism_and_edge_kind():
    source = dagToGraphviz(jetDotTestDag(), defaultParallelism=16).source
    assert 'label="b\nparallelism 16"' in source
    assert 'label="a\nparallelism 1"' in source
    assert "distributed broadcast" in source
    assert "local partitioned" in source


def nodeIdsAndEdgeEnds(source):
    """Return the node ids a DOT text declares and the tail and head of each of its edges."""
    ids = set(re.findall(r'^\t("(?:[^"\\]|\\.)*"|\w+) \[label=', source, re.MULTILINE))
    ends = re.findall(r"^\t(.+?) -> (.+?) \[", source, re.MULTILINE)
    return ids, ends


def test_graphviz_edges_join_declared_nodes():
    source = dagToGraphviz(jetDotTestDag()).source
    ids, ends = nodeIdsAndEdgeEnds(source)
    assert len(ids) == 4 and len(ends) == 2
    assert all(tail in ids and head in ids for tail, head in ends)


def test_graphviz_edges_join_declared_nodes_when_a_name_has_a_colon():
    # Digraph.edge reads "a:b" as node a, port b; vertex names must not reach it as node ids
    dag = DAG()
    dag.edge(Edge.between(dag.newVertex("read: lines", noop), dag.newVertex("count", noop)))
    ids, ends = nodeIdsAndEdgeEnds(dagToGraphviz(dag).source)
    assert len(ids) == 2 and len(ends) == 1
    assert all(tail in ids and head in ids for tail, head in ends)


def test_graphviz_vertices_and_edges_carry_ids_classes_and_tooltips():
    source = dagToGraphviz(jetDotTestDag()).source
    assert '"vertex-0" [label="a\nparallelism 1" class=vertex id="vertex-0" tooltip="a\nparallelism 1"]' in source
    assert '"vertex-0" -> "vertex-2" [label=<<table' in source and "<td>local partitioned</td>" in source
    assert 'class="dag-edge"' in source and 'id="edge-1"' in source
    assert 'tooltip="a -> b\ndistributed broadcast"' in source


def test_each_routing_has_its_own_colour_and_arrowhead():
    assert len(set(ROUTING_DRAWING.values())) == len(RoutingPolicy) == len(ROUTING_DRAWING)
    edge = Edge("a", destName="b").broadcast()
    assert edgeDrawing(edge) == {"color": "#D55E00", "fontcolor": "#D55E00", "arrowhead": "crow", "style": "solid"}


def test_a_distributed_edge_has_a_circle_at_its_tail_and_a_priority_is_dotted():
    edge = Edge("a", destName="b")
    assert "arrowtail" not in edgeDrawing(edge)
    assert edgeDrawing(edge.distributed()) == edgeDrawing(edge) | {"dir": "both", "arrowtail": "odot"}
    assert edgeDrawing(edge.priority(-1))["style"] == "dotted"


def test_each_prepare_and_combine_pair_sits_in_a_cluster_named_after_the_combine():
    dag = DAG()
    prepare, combine, sink = (dag.newVertex(name, noop) for name in ("x-prepare", "x", "sink"))
    dag.edge(Edge.between(prepare, combine).distributed()).edge(Edge.between(combine, sink))
    source = dagToGraphviz(dag).source
    cluster = source.split("subgraph cluster_group_0 {")[1].split("}")[0]
    assert 'graph [class=group color=gray50 id="group-0" label=x labelloc=b' in cluster
    assert re.findall(r'^\t+"(vertex-\d)" \[', cluster, re.MULTILINE) == ["vertex-0", "vertex-1"]
    assert "cluster_group_1" not in source


def test_given_groups_replace_the_prepare_pairs():
    dag = DAG()
    a, b, c = (dag.newVertex(name, noop) for name in ("a", "b-prepare", "b"))
    dag.edge(Edge.between(a, b)).edge(Edge.between(b, c))
    source = dagToGraphviz(dag, groups={"one stage": ("a", "b-prepare")}).source
    cluster = source.split("subgraph cluster_group_0 {")[1].split("}")[0]
    assert '"one stage"' in cluster and re.findall(r'"(vertex-\d)" \[', cluster) == ["vertex-0", "vertex-1"]
    assert "cluster_group_1" not in source


def test_names_are_shortened_and_taken_literally():
    assert shortened("x" * 40) == "x" * 40
    assert shortened("x" * 41) == "x" * 39 + "…"
    dag = DAG()
    dag.newVertex("C:\\logs\\<b>", noop)
    source = dagToGraphviz(dag).source
    assert 'label="C:\\\\logs\\\\<b>\nparallelism default"' in source


def test_item_change_says_how_many_were_dropped_or_made():
    assert [itemChange(1000, 100), itemChange(1000, 1), itemChange(1000, 0)] == [" (-90%)", " (-99%)", " (-100%)"]
    assert [itemChange(10, 25), itemChange(10, 10), itemChange(0, 5)] == [" (×2.5)", "", ""]


def test_figures_label_vertices_and_edges_and_widen_the_busiest_edge():
    dag = DAG()
    source, fused, sink = (dag.newVertex(name, noop) for name in ("source", "fused(a, b)", "sink"))
    dag.edge(Edge.between(source, fused)).edge(Edge.between(fused, sink).distributed())
    metrics = JobMetrics(
        "job",
        1.0,
        (
            VertexMetrics("source", 1, 0, 10, 0.5, ()),
            VertexMetrics("fused(a, b)", 2, 10, 5, 0.25, (StageMetrics("a", 10, 50), StageMetrics("b", 50, 5))),
            VertexMetrics("sink", 1, 5, 0, 0.0, ()),
        ),
        (EdgeMetrics("source", "fused(a, b)", 10, None), EdgeMetrics("fused(a, b)", "sink", 5, 321)),
    )
    graph = dagToGraphviz(dag, metrics).source
    assert 'label="source\nparallelism default, 1 processor\n10 out\n0.50 s busy"' in graph
    assert (
        'label="fused(a, b)\nparallelism default, 2 processors\n10 in -> 5 out (-50%)\n0.25 s busy\n'
        'a: 10 -> 50 (×5.0)\nb: 50 -> 5 (-90%)"'
    ) in graph
    assert 'label="sink\nparallelism default, 1 processor\n5 in\n0.00 s busy"' in graph
    assert "<td>local unicast<br/>10 items</td>" in graph and "penwidth=6.00" in graph
    assert "<td>distributed unicast<br/>5 items<br/>321 bytes shuffled</td>" in graph and "penwidth=3.50" in graph


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot program is not installed")
def test_write_svg_draws_the_picture(tmp_path):
    path = tmp_path / "plan.svg"
    written, note = writeSvg(dagToGraphviz(jetDotTestDag()), str(path))
    assert (written, note) == (str(path), None)
    assert "<svg" in path.read_text()


def test_write_svg_without_dot_writes_dot_text_and_says_how_to_install(tmp_path, monkeypatch):
    def missingDot(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    graph = dagToGraphviz(jetDotTestDag())
    monkeypatch.setattr(graphviz.Digraph, "pipe", missingDot)
    written, note = writeSvg(graph, str(tmp_path / "plan.svg"))
    assert written == str(tmp_path / "plan.dot")
    assert (tmp_path / "plan.dot").read_text() == graph.source
    assert not (tmp_path / "plan.svg").exists()
    assert "apt-get install graphviz" in note and written in note


def test_fanout_edge_is_labelled_as_jet_lowercases_its_routing_policy():
    dag = DAG()
    a, b = dag.newVertex("a", noop, 1), dag.newVertex("b", noop, 2)
    dag.edge(Edge.between(a, b).fanout().distributed())
    assert '"a" -> "b" [label="distributed-fanout", queueSize=1024];' in dag.toDotString()
