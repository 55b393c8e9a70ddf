"""Jet's DOT text for any vertex or stage name: graphviz's ``dot`` reads it and gives each name
back, and ordinary names keep Jet's bytes."""

import json
import re
import subprocess

from sparkjet.coredag import DAG, Edge
from sparkjet.pipeline import Pipeline, Sinks, Sources
from tests.planner.test_render import needsDot

ODD_NAMES = (
    "a\\",
    "back\\slash\\\\",
    'say "hi"',
    'quoted\\"',
    '\\"',
    "two\nlines",
    "line\n# looks like a preprocessor line",
    "carriage\rreturn",
    "tab\there",
    "ünïcödé ✓ 名前",
    "{braces}",
    "semi;colon",
    "<angle>",
    "<<b>html</b>>",
    "C:\\logs\\new",
    "\\N \\G \\E \\L",
    "node",
    "a -> b [x=1]; // /* not a comment",
    "&lt; &amp; &",
)
"""Names Jet's quoting (``"`` becomes ``\\"``, nothing else) breaks or changes, with some it keeps."""


def noop():
    """A processor supplier that is never called."""


def chainDag(names) -> DAG:
    """A DAG of one vertex per name, each feeding the next; the last two a prepare and combine pair."""
    dag = DAG()
    vertices = [dag.newVertex(name, noop) for name in names]
    combine = dag.newVertex(names[0] + " combined", noop)
    prepare = dag.newVertex(names[0] + " combined-prepare", noop)
    for source, dest in zip(vertices, vertices[1:] + [prepare]):
        dag.edge(Edge.between(source, dest))
    dag.edge(Edge.between(prepare, combine).distributed().partitioned(str))
    return dag


def chainPipeline(names) -> Pipeline:
    """A pipeline of one stage per name, each feeding the next."""
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1])).setName(names[0])
    for name in names[1:]:
        stage = stage.map(str).setName(name)
    stage.writeTo(Sinks.list("out"))
    return p


def escStringValue(text: str) -> str:
    """Read a DOT id as graphviz's escString does: ``\\n`` a newline, ``\\r`` a carriage return,
    ``\\`` before any other character drops."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), text, flags=re.DOTALL)


def readByDot(dotText: str) -> dict:
    """Return what graphviz's ``dot`` reads from ``dotText`` (its -Tjson output); fail on any
    syntax error or warning."""
    done = subprocess.run(["dot", "-Tjson"], input=dotText.encode("utf-8"), capture_output=True, timeout=60)
    assert (done.returncode, done.stderr.decode()) == (0, ""), dotText
    return json.loads(done.stdout)


def nodeNames(graph: dict) -> dict[int, str]:
    """Return the name of each node of ``dot``'s -Tjson output, by its id, escStrings read."""
    return {o["_gvid"]: escStringValue(o["name"]) for o in graph["objects"] if "nodes" not in o}


def edgeNames(graph: dict) -> list[tuple[str, str]]:
    """Return the names of the tail and head of each edge of ``dot``'s -Tjson output."""
    names = nodeNames(graph)
    return [(names[edge["tail"]], names[edge["head"]]) for edge in graph.get("edges", [])]


def shownLines(graph: dict) -> dict[str, list[str]]:
    """Return the lines of text ``dot`` draws for each node, by the node's name."""
    return {
        escStringValue(o["name"]): [op["text"] for op in o["_ldraw_"] if op["op"] == "T"]
        for o in graph["objects"]
        if "nodes" not in o
    }


@needsDot
def test_every_vertex_name_comes_back_from_dot():
    dag = chainDag(ODD_NAMES)
    graph = readByDot(dag.toDotString())
    assert sorted(nodeNames(graph).values()) == sorted(vertex.name for vertex in dag)
    assert sorted(edgeNames(graph)) == sorted((e.sourceName, e.destName) for e in dag.edges())


@needsDot
def test_dot_draws_each_name_as_it_is():
    # graphviz draws an escString's \r as a line break, and reads HTML entities in labels; the
    # node ids, above, keep both
    graph = readByDot(chainDag(ODD_NAMES).toDotString())
    shown = shownLines(graph)
    for name in ODD_NAMES:
        if "\r" not in name and "&" not in name:
            assert shown[name] == name.split("\n")


@needsDot
def test_every_stage_name_of_a_pipeline_comes_back_from_dot():
    p = chainPipeline(ODD_NAMES)
    graph = readByDot(p.toDotString())
    names = [*ODD_NAMES, "listSink(out)"]
    assert sorted(set(nodeNames(graph).values())) == sorted(names)
    assert sorted(edgeNames(graph)) == sorted(zip(names, names[1:]))


def test_a_trailing_backslash_is_escaped_not_left_to_escape_the_quote():
    dag = DAG()
    dag.edge(Edge.between(dag.newVertex("a\\", noop, 1), dag.newVertex('b\\"', noop, 1)))
    assert dag.toDotString().splitlines()[1:4] == [
        '\t"a\\\\" [localParallelism=1];',
        '\t"b\\\\\\"" [localParallelism=1];',
        '\t"a\\\\" -> "b\\\\\\"" [queueSize=1024];',
    ]


def test_each_vertex_and_edge_keeps_one_line_whatever_its_names():
    lines = chainDag(ODD_NAMES).toDotString().splitlines()
    vertexLines, edgeLines = len(ODD_NAMES) + 2, len(ODD_NAMES) + 3  # the prepare edge in a cluster: 3
    assert len(lines) == 1 + vertexLines + edgeLines + 1
    assert '\t"two\\nlines" [localParallelism=default];' in lines
    assert '\t"carriage\\rreturn" -> "tab\there" [queueSize=1024];' in lines


def test_names_without_backslashes_or_line_breaks_keep_jets_bytes():
    dag = DAG()
    names = ('say "hi"', "ünïcödé\ttab {x};<y>", "&lt; &amp; &", "<<b>html</b>>")
    vertices = [dag.newVertex(name, noop) for name in names]
    for source, dest in zip(vertices, vertices[1:]):
        dag.edge(Edge.between(source, dest))
    assert dag.toDotString() == (
        "digraph DAG {\n"
        '\t"say \\"hi\\"" [localParallelism=default];\n'
        '\t"ünïcödé\ttab {x};<y>" [localParallelism=default];\n'
        '\t"&lt; &amp; &" [localParallelism=default];\n'
        '\t"<<b>html</b>>" [localParallelism=default];\n'
        '\t"say \\"hi\\"" -> "ünïcödé\ttab {x};<y>" [queueSize=1024];\n'
        '\t"ünïcödé\ttab {x};<y>" -> "&lt; &amp; &" [queueSize=1024];\n'
        '\t"&lt; &amp; &" -> "<<b>html</b>>" [queueSize=1024];\n'
        "}"
    )


def test_a_pipelines_dot_escapes_a_trailing_backslash():
    assert chainPipeline(["a\\", 'b"\n']).toDotString() == (
        "digraph Pipeline {\n"
        '\t"a\\\\" -> "b\\"\\n";\n'
        '\t"b\\"\\n" -> "listSink(out)";\n'
        "}"
    )
