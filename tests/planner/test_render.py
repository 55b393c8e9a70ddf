"""Pictures of a plan: which vertices run each stage, and the SVG that draws the pipeline, its
Core DAG and, after a run, the job's figures. SVG tests read the drawing as XML."""

import os
import re
import runpy
import shutil
import warnings
import xml.etree.ElementTree as ET
from collections import Counter

import attrs
import graphviz
import pytest

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import edgeCaption
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, StageMetrics, VertexMetrics
from sparkjet.pipeline import AggregateOperations, BatchStage, JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.render import legendRows, planSvg, planToGraphviz, writePlanSvg
from tests.conftest import PROJECT

TUTORIALS = PROJECT / "tutorials"
SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
LONG_NAME = "keep the words that are at least seven letters long, as tutorial three does"

needsDot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot program is not installed")


def wordCount() -> Pipeline:
    """Word count over items, with a filter and a two-stage aggregation."""
    p = Pipeline.create()
    (p.readFrom(Sources.items(["a b"])).flatMap(str.split).filter(bool)
      .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts")))
    return p


WORD_COUNT_VERTICES = {
    "items": ("items",),
    "flat-map": ("fused(flat-map, filter)",),
    "filter": ("fused(flat-map, filter)",),
    "group-and-aggregate": ("group-and-aggregate-prepare", "group-and-aggregate"),
    "listSink(counts)": ("listSink(counts)",),
}


def wordCountMetrics() -> JobMetrics:
    """Figures of a word count run: 100 lines, 1,000 words, the filter keeps one in ten."""
    vertices = (
        VertexMetrics("items", 1, 0, 100, 0.01, ()),
        VertexMetrics(
            "fused(flat-map, filter)", 2, 100, 100, 0.5,
            (StageMetrics("flat-map", 100, 1000), StageMetrics("filter", 1000, 100)),
        ),
        VertexMetrics("group-and-aggregate-prepare", 2, 100, 40, 0.25, ()),
        VertexMetrics("group-and-aggregate", 2, 40, 25, 0.125, ()),
        VertexMetrics("listSink(counts)", 1, 25, 0, 0.0625, ()),
    )
    edges = (
        EdgeMetrics("items", "fused(flat-map, filter)", 100, None),
        EdgeMetrics("fused(flat-map, filter)", "group-and-aggregate-prepare", 100, None),
        EdgeMetrics("group-and-aggregate-prepare", "group-and-aggregate", 40, 1234),
        EdgeMetrics("group-and-aggregate", "listSink(counts)", 25, None),
    )
    return JobMetrics("word count", 1.5, vertices, edges)


def drawing(work, metrics=None) -> ET.Element:
    """Return the root of the plan's SVG."""
    return ET.fromstring(planSvg(work, metrics))


def drawn(root: ET.Element, kind: str) -> list[ET.Element]:
    """Return the SVG groups of class ``kind`` (stage, vertex, dag-edge, runs, group, legend)."""
    return [g for g in root.iter(f"{SVG}g") if kind in g.get("class", "").split()]


def tooltip(group: ET.Element) -> list[str]:
    """Return the lines of a group's tooltip."""
    return next(group.iter(f"{SVG}a")).get(XLINK_TITLE).split("\n")


def texts(group: ET.Element) -> list[str]:
    """Return the lines of text a group shows."""
    return [text.text for text in group.iter(f"{SVG}text")]


def idsAndNames(root: ET.Element, kind: str) -> dict[str, str]:
    """Return the id of each group of class ``kind`` and the first line of its tooltip."""
    return {group.get("id"): tooltip(group)[0] for group in drawn(root, kind)}


def named(root: ET.Element, kind: str) -> dict[str, ET.Element]:
    """Return the groups of class ``kind`` by the first line of their tooltip."""
    return {tooltip(group)[0]: group for group in drawn(root, kind)}


def strokeWidth(group: ET.Element) -> float:
    """Return the stroke width of an edge's line."""
    return float(next(group.iter(f"{SVG}path")).get("stroke-width", "1"))


# Which vertices run each stage


def test_each_stage_of_the_word_count_maps_to_the_vertices_running_it():
    assert plan(wordCount()).stageVertices() == WORD_COUNT_VERTICES


def test_vertex_roles_say_which_stages_and_which_step():
    roles = plan(wordCount()).vertexRoles()
    assert roles["fused(flat-map, filter)"].stages == ("flat-map", "filter")
    assert roles["group-and-aggregate-prepare"].stages == ("group-and-aggregate",)
    assert roles["group-and-aggregate-prepare"].step == "prepare"
    assert roles["group-and-aggregate"].step is None


def severalVertexStages(table=lambda stage, n: stage.setName(f"table {n}")) -> tuple[Pipeline, BatchStage]:
    """Return a pipeline with a stage of each kind that lowers to several vertices (or, for an
    aggregation without combine, to one), and its ``numbers`` stage; ``table`` shapes each of
    the two joined tables."""
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items([3, 1, 2])).setName("numbers")
    numbers.sort().writeTo(Sinks.list("sorted"))
    numbers.distinct().writeTo(Sinks.list("distinct"))
    numbers.aggregate(AggregateOperations.summing(int)).writeTo(Sinks.list("sum"))
    noCombine = attrs.evolve(AggregateOperations.counting(), combineFn=None)
    numbers.groupingKey(wholeItem()).aggregate(noCombine).writeTo(Sinks.list("counts"))
    tables = [table(p.readFrom(Sources.items([(n, str(n))])), n) for n in (1, 2)]
    clause = JoinClause.onKeys(lambda n: n, lambda entry: entry[0])
    numbers.hashJoin2(tables[0], clause, tables[1], clause, lambda n, a, b: (n, a, b)).writeTo(Sinks.list("j"))
    return p, numbers


def test_stages_of_several_vertices_map_to_all_of_them():
    p, _ = severalVertexStages()
    vertices = plan(p).stageVertices()
    assert vertices["sort"] == ("sort", "sort-collect")
    assert vertices["distinct"] == ("distinct-prepare", "distinct")
    assert vertices["aggregate"] == ("aggregate-prepare", "aggregate")
    assert vertices["group-and-aggregate"] == ("group-and-aggregate",)
    assert sorted(vertices["3-way hash-join"]) == [
        "3-way hash-join-collector1", "3-way hash-join-collector2", "3-way hash-join-joiner",
    ]


def test_names_that_look_like_steps_belong_to_the_stage_named_so():
    p = Pipeline.create()
    counted = p.readFrom(Sources.items([1])).groupingKey(wholeItem()).aggregate(AggregateOperations.counting())
    counted.setName("count").map(str).setName("count-joiner").writeTo(Sinks.logger())
    p.readFrom(Sources.items([2])).map(str).setName("total-prepare").writeTo(Sinks.logger())
    vertices = plan(p).stageVertices()
    assert vertices["count"] == ("count-prepare", "count")
    assert vertices["count-joiner"] == ("count-joiner",)
    assert vertices["total-prepare"] == ("total-prepare",)


def test_without_fusion_each_stateless_stage_has_its_own_vertex():
    p = wordCount().setFusionEnabled(False)
    vertices = plan(p).stageVertices()
    assert (vertices["flat-map"], vertices["filter"]) == (("flat-map",), ("filter",))


def test_a_vertex_added_to_a_plan_by_hand_runs_no_stage():
    planned = plan(wordCount())
    extended = DAG()
    for vertex in planned.vertices():
        extended.vertex(vertex)
    for edge in planned.edges():
        extended.edge(edge)
    extended.newVertex("by hand", print)
    dag = attrs.evolve(planned, dag=extended)
    assert dag.vertexRoles()["by hand"].stages == ()
    assert "  by hand (parallelism default)\n    runs no stage of the pipeline" in dag.explain()
    assert dag.stageVertices() == WORD_COUNT_VERTICES


# The picture without figures


def test_the_picture_is_left_to_right_each_stage_beside_its_vertices():
    source = planToGraphviz(wordCount()).source
    assert source.startswith("digraph Plan {") and "rankdir=LR" in source.split("subgraph")[0]
    assert "subgraph Pipeline {" in source and "subgraph DAG {" in source
    assert "cluster_pipeline" not in source and "cluster_dag" not in source


@needsDot
def test_every_stage_and_vertex_is_drawn_with_its_id_class_and_name():
    root = drawing(wordCount())
    assert idsAndNames(root, "stage") == {f"stage-{n}": name for n, name in enumerate(WORD_COUNT_VERTICES)}
    assert idsAndNames(root, "vertex") == {f"vertex-{n}": v.name for n, v in enumerate(plan(wordCount()))}
    assert all(texts(g)[0] == tooltip(g)[0] for g in drawn(root, "stage") + drawn(root, "vertex"))
    assert texts(named(root, "vertex")["listSink(counts)"])[1] == "parallelism 1"


@needsDot
def test_every_edge_is_drawn_with_its_kind():
    root = drawing(wordCount())
    edges = {g.get("id"): g for g in drawn(root, "dag-edge")}
    dag = plan(wordCount())
    assert {id: tooltip(g)[:2] for id, g in edges.items()} == {
        f"edge-{n}": [f"{e.sourceName} -> {e.destName}", edgeCaption(e)] for n, e in enumerate(dag.edges())
    }
    physical = dag.physicalPlan()
    assert {id: texts(g) for id, g in edges.items()} == {
        f"edge-{n}": [edgeCaption(e), physical.exchangeOf(e).value] for n, e in enumerate(dag.edges())
    }
    shuffle = named(root, "dag-edge")["group-and-aggregate-prepare -> group-and-aggregate"]
    colours = {path.get("stroke") for path in shuffle.iter(f"{SVG}path")}
    assert colours == {"#0072b2"}, "partitioned edges are blue"
    assert len(list(shuffle.iter(f"{SVG}ellipse"))) == 1, "a distributed edge has a circle at its tail"
    assert len(drawn(root, "stage-edge")) == 4


@needsDot
def test_one_dashed_link_joins_each_stage_to_each_vertex_running_it():
    root = drawing(wordCount())
    links = drawn(root, "runs")
    expected = [(stage, vertex) for stage, names in WORD_COUNT_VERTICES.items() for vertex in names]
    assert Counter(tooltip(g)[0] for g in links) == Counter(f"{stage} runs in {vertex}" for stage, vertex in expected)
    stageIds = {name: id for id, name in idsAndNames(root, "stage").items()}
    vertexIds = {name: id for id, name in idsAndNames(root, "vertex").items()}
    ends = Counter(g.find(f"{SVG}title").text for g in links)
    assert ends == Counter(f"{stageIds[stage]}->{vertexIds[vertex]}" for stage, vertex in expected)
    assert all(next(g.iter(f"{SVG}path")).get("stroke-dasharray") for g in links)


@needsDot
def test_the_legend_explains_each_way_of_drawing_an_edge():
    root = drawing(wordCount())
    (legend,) = [g for g in drawn(root, "legend") if g.get("id") == "legend"]
    assert "cluster" in legend.get("class").split()
    assert texts(legend) == ["Legend", "grey ellipse: a stage of the pipeline", "white box: a vertex of the Core DAG"]
    captions = [" ".join(texts(g)) for g in drawn(root, "legend") if "edge" in g.get("class")]
    assert captions == [
        "distributed: circle at the tail", "local", "with a priority", "shuffle: bold", "in task or coalesced: dashed",
        "stage to the next stage", "stage to a vertex running it",
        "unicast", "isolated", "partitioned", "broadcast", "all-to-one", "fanout",
    ]


@needsDot
def test_prepare_and_combine_sit_in_a_cluster_named_after_their_stage():
    root = drawing(wordCount())
    (group,) = drawn(root, "group")
    assert (group.get("id"), tooltip(group), texts(group)) == ("group-0", ["group-and-aggregate"], ["group-and-aggregate"])
    source = planToGraphviz(wordCount()).source
    cluster = source.split("subgraph cluster_group_0 {")[1].split("}")[0]
    assert re.findall(r'^\t*"(vertex-\d+)" \[', cluster, re.MULTILINE) == ["vertex-2", "vertex-3"]


@needsDot
def test_long_names_are_shortened_with_the_full_name_in_the_tooltip():
    p = Pipeline.create()
    p.readFrom(Sources.items(["word"])).filter(bool).setName(LONG_NAME).rebalance().map(str.upper).writeTo(Sinks.logger())
    root = drawing(p)
    shown = LONG_NAME[:39] + "…"
    for kind in ("stage", "vertex"):
        group = named(root, kind)[LONG_NAME]
        assert texts(group)[0] == shown
    assert not any(LONG_NAME in line for g in root.iter(f"{SVG}g") for line in texts(g))


@needsDot
def test_a_dag_alone_is_drawn_with_its_prepare_cluster_and_the_legend():
    tutorial = runpy.run_path(str(TUTORIALS / "02_core_dag_word_count.py"))
    dag = tutorial["wordCountDag"]("books", "*.txt")
    root = drawing(dag)
    assert idsAndNames(root, "vertex") == {f"vertex-{n}": v.name for n, v in enumerate(dag)}
    assert len(drawn(root, "dag-edge")) == len(dag.edges())
    assert drawn(root, "stage") == [] and drawn(root, "runs") == []
    assert "stage to a vertex running it" not in [" ".join(texts(g)) for g in drawn(root, "legend")]
    assert "distributed: circle at the tail" in [" ".join(texts(g)) for g in drawn(root, "legend")]
    assert [g.get("id") for g in drawn(root, "legend") if "cluster" in g.get("class")] == ["legend"]


# The picture with a job's figures


@needsDot
def test_vertices_show_items_time_and_each_fused_stages_figures():
    vertices = named(drawing(wordCount(), wordCountMetrics()), "vertex")
    assert texts(vertices["fused(flat-map, filter)"])[1:] == [
        "parallelism default, 2 processors",
        "100 in -> 100 out",
        "0.50 s busy",
        "flat-map: 100 -> 1,000 (×10.0)",
        "filter: 1,000 -> 100 (-90%)",
    ]
    assert texts(vertices["group-and-aggregate-prepare"])[2:] == ["100 in -> 40 out (-60%)", "0.25 s busy"]
    assert texts(vertices["items"])[2] == "100 out"
    assert texts(vertices["listSink(counts)"])[1:] == ["parallelism 1, 1 processor", "25 in", "0.06 s busy"]
    assert tooltip(vertices["fused(flat-map, filter)"])[-1] == "filter: 1,000 -> 100 (-90%)"


@needsDot
def test_edges_show_their_items_and_the_bytes_they_shuffled():
    edges = named(drawing(wordCount(), wordCountMetrics()), "dag-edge")
    assert texts(edges["group-and-aggregate-prepare -> group-and-aggregate"]) == [
        "distributed partitioned", "in task", "40 items", "1,234 bytes shuffled",
    ]
    assert texts(edges["items -> fused(flat-map, filter)"]) == ["local unicast", "in task", "100 items"]


@needsDot
def test_edge_widths_follow_their_items():
    metrics = wordCountMetrics()
    edges = named(drawing(wordCount(), metrics), "dag-edge")
    widths = {(e.sourceName, e.destName): strokeWidth(edges[f"{e.sourceName} -> {e.destName}"]) for e in metrics.edges}
    items = {(e.sourceName, e.destName): e.items for e in metrics.edges}
    assert sorted(widths, key=widths.get) == sorted(items, key=items.get)
    assert max(widths.values()) == 6 and min(widths.values()) == pytest.approx(1 + 5 * 25 / 100, abs=0.01)


@needsDot
def test_the_legend_says_what_widths_mean():
    root = drawing(wordCount(), wordCountMetrics())
    assert "width: items, up to 100" in [" ".join(texts(g)) for g in drawn(root, "legend")]


@needsDot
def test_write_plan_svg_writes_the_svg_plan_svg_returns(tmp_path):
    path = tmp_path / "plan.svg"
    assert writePlanSvg(wordCount(), str(path), wordCountMetrics()) == (str(path), None)
    assert path.read_text(encoding="utf-8") == planSvg(wordCount(), wordCountMetrics())


def test_without_dot_the_plan_with_figures_is_written_as_dot_text(tmp_path, monkeypatch):
    def missingDot(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(graphviz.Digraph, "pipe", missingDot)
    written, note = writePlanSvg(wordCount(), str(tmp_path / "plan.svg"), wordCountMetrics())
    assert written == str(tmp_path / "plan.dot") and "apt-get install graphviz" in note
    assert "filter: 1,000 -> 100 (-90%)" in (tmp_path / "plan.dot").read_text()


def test_the_plan_is_written_into_directories_made_for_it(tmp_path):
    path = tmp_path / "out" / "plans" / "plan.svg"
    written, note = writePlanSvg(wordCount(), str(path))
    assert os.path.dirname(written) == str(path.parent) and os.path.isfile(written)


def test_without_dot_the_dot_text_goes_into_directories_made_for_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    written, note = writePlanSvg(wordCount(), str(tmp_path / "out" / "plan.svg"))
    assert written == str(tmp_path / "out" / "plan.dot") and "apt-get install graphviz" in note
    assert (tmp_path / "out" / "plan.dot").read_text().startswith("digraph")


def test_a_directory_that_cannot_be_made_is_named_in_one_line(tmp_path):
    (tmp_path / "out").write_text("a file where the directory should be")
    path = tmp_path / "out" / "plan.svg"
    with pytest.raises(OutputError) as raised:
        writePlanSvg(wordCount(), str(path))
    assert str(raised.value) == (
        f"Cannot write the plan's picture to '{path}': '{path.parent}' is a file, not a directory; "
        "give a path whose directories you can create and write in"
    )


# Every tutorial's plan, and a big one


class StandInDataFrame:
    """Enough of a DataFrame for planning, which never reads it."""

    rdd = None


def tutorialPipelines() -> dict[str, Pipeline]:
    """The pipelines of tutorials 01, 03 and 04, planned on stand-in inputs."""
    first = runpy.run_path(str(TUTORIALS / "01_word_count.py"))
    third = runpy.run_path(str(TUTORIALS / "03_aggregate_operations.py"))
    fourth = runpy.run_path(str(TUTORIALS / "04_hash_join.py"))
    frame, speeches = StandInDataFrame(), [("romeo", "but soft")]
    return {
        "word count": first["wordCountPipeline"]("books"),
        "built-ins": third["builtInsPipeline"]("books", "*.txt", 5),
        "allOf": third["allOfPipeline"]("books", "*.txt"),
        "richness": third["richnessPipeline"](speeches, third["VOCABULARY_RICHNESS"]),
        "named and speaking": third["namedAndSpeakingPipeline"](speeches),
        "hashJoin": fourth["speechesWithPlayPipeline"](speeches, frame),
        "innerHashJoin": fourth["speechesPerPlayPipeline"](speeches, frame),
        "hashJoin2": fourth["spokenWordsPipeline"](speeches, frame),
        "hashJoinBuilder": fourth["spokenWordsPipeline"](speeches, frame, fourth["joinWithBuilder"]),
    }


def assertDrawsWhole(p: Pipeline) -> None:
    """Check the drawing has every stage, vertex and edge, and one link per stage and vertex."""
    planned = plan(p)
    root = drawing(p)
    stages = planned.pipelineGraph().transforms
    assert idsAndNames(root, "stage") == {f"stage-{n}": t.name for n, t in enumerate(stages)}
    assert idsAndNames(root, "vertex") == {f"vertex-{n}": v.name for n, v in enumerate(planned)}
    assert idsAndNames(root, "dag-edge") == {
        f"edge-{n}": f"{e.sourceName} -> {e.destName}" for n, e in enumerate(planned.edges())
    }
    links = Counter(tuple(tooltip(g)[0].split(" runs in ")) for g in drawn(root, "runs"))
    assert links == Counter((s, v) for s, names in planned.stageVertices().items() for v in names)
    assert set(links.values()) == {1} and {v for _, v in links} == {v.name for v in planned}
    multiVertexStages = [s for s, names in planned.stageVertices().items() if len(names) > 1]
    assert sorted(tooltip(g)[0] for g in drawn(root, "group")) == sorted(multiVertexStages)


@needsDot
@pytest.mark.parametrize("name", list(tutorialPipelines()))
def test_every_tutorial_plan_is_drawn_whole(name):
    assertDrawsWhole(tutorialPipelines()[name])


def bigPipeline(sections: int) -> Pipeline:
    """A pipeline of 6 stages per section: fused maps, an aggregation, a side branch, a merge."""
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(range(100))).setName("numbers")
    for section in range(sections):
        stage = stage.map(lambda n: n + 1).setName(f"add one to each number of section {section} of this long pipeline")
        side = stage.filter(lambda n: n % 3).setLocalParallelism(2)
        stage = stage.groupingKey(lambda n: n % 7).aggregate(AggregateOperations.counting())
        stage = stage.map(lambda entry: entry[1]).merge(side.map(int))
    stage.writeTo(Sinks.list("out"))
    return p


@needsDot
def test_a_plan_of_sixty_stages_is_drawn_whole():
    p = bigPipeline(10)
    assert len(plan(p).pipelineGraph().transforms) >= 60
    assertDrawsWhole(p)


# A run on Spark: a filter that drops nine words in ten shows it


@needsDot
@pytest.mark.spark
def test_render_svg_shows_the_figures_of_the_run(jet, corpusLines, tmp_path):
    lines = corpusLines[:500]
    p = Pipeline.create()
    (p.readFrom(Sources.items(lines)).setLocalParallelism(2)
      .flatMap(lambda line: re.split(r"\W+", line.lower())).setName("split").setLocalParallelism(2)
      .filter(lambda word: len(word) >= 7).setName("long words").setLocalParallelism(2)
      .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).setName("count").setLocalParallelism(2)
      .writeTo(Sinks.list("long words")))
    written, note = jet.newJob(p).renderSvg(str(tmp_path / "x.svg"))
    words = [word for line in lines for word in re.split(r"\W+", line.lower())]
    long = Counter(word for word in words if len(word) >= 7)
    dropped = (len(words) - long.total()) * 100 // len(words)
    assert (written, note) == (str(tmp_path / "x.svg"), None) and dropped >= 85
    root = ET.parse(written).getroot()
    vertices, edges = named(root, "vertex"), named(root, "dag-edge")
    assert texts(vertices["fused(split, long words)"])[-2:] == [
        f"split: {len(lines):,} -> {len(words):,} (×{len(words) / len(lines):.1f})",
        f"long words: {len(words):,} -> {long.total():,} (-{dropped}%)",
    ]
    assert texts(vertices["count"])[1] == "parallelism 2, 2 processors"
    assert re.fullmatch(rf"[\d,]+ in -> {len(long):,} out \(-\d+%\)", texts(vertices["count"])[2])
    assert texts(edges["fused(split, long words) -> count-prepare"])[1:] == ["in task", f"{long.total():,} items"]
    assert texts(edges["count -> listSink(long words)"])[1:] == ["in task", f"{len(long):,} items"]
    assert texts(edges["count-prepare -> count"])[1] == "shuffle"
    assert texts(edges["count-prepare -> count"])[3].endswith(" bytes shuffled")
    assert strokeWidth(edges["count -> listSink(long words)"]) < strokeWidth(edges["fused(split, long words) -> count-prepare"])


# Names graphviz would read as escapes, entities, HTML or line breaks

ODD_NAMES = (
    "a\\",
    'quoted\\"',
    "\\N \\G \\E \\T \\H \\L",
    "C:\\logs\\new",
    "&lt; &amp; & ;",
    "<!--<script>",
    "<b>bold</b>",
    "two\nlines",
    "cr\rhere",
    "tab\there",
    "ünï 名前 ✓",
    "{b};<a>|x",
)
ODD_AGGREGATE = "count\\ &amp; \\N\\"


def oddNamesPipeline() -> Pipeline:
    """One unfused stage per odd name, each feeding the next, then an aggregation of two vertices."""
    p = Pipeline.create().setFusionEnabled(False)
    stage = p.readFrom(Sources.items(["a"])).setName(ODD_NAMES[0])
    for name in ODD_NAMES[1:]:
        stage = stage.map(str).setName(name)
    stage.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).setName(ODD_AGGREGATE).writeTo(
        Sinks.list("out")
    )
    return p


def tooltipText(group: ET.Element) -> str:
    """Return a group's whole tooltip."""
    return next(group.iter(f"{SVG}a")).get(XLINK_TITLE)


def readByXml(text: str) -> str:
    """Return ``text`` as XML reads it in an attribute where graphviz wrote it: a raw tab is a space."""
    return text.replace("\t", " ")


@needsDot
def test_odd_names_are_shown_and_tooltipped_as_they_are():
    root = drawing(oddNamesPipeline())
    stages = {tooltipText(g): g for g in drawn(root, "stage")}
    vertices = {tooltipText(g).removesuffix("\nparallelism default"): g for g in drawn(root, "vertex")}
    for name in ODD_NAMES:
        assert texts(stages[readByXml(name)]) == name.split("\n")
        assert texts(vertices[readByXml(name)]) == [*name.split("\n"), "parallelism default"]
    (group,) = drawn(root, "group")
    assert (tooltipText(group), texts(group)) == (ODD_AGGREGATE, [ODD_AGGREGATE])
    assert {ODD_AGGREGATE + "-prepare", ODD_AGGREGATE} <= set(vertices)


@needsDot
def test_odd_names_are_whole_in_the_tooltips_of_edges_and_links():
    p = oddNamesPipeline()
    root = drawing(p)
    planned = plan(p)
    edges = Counter(tooltipText(g).rsplit("\n", 2)[0] for g in drawn(root, "dag-edge"))
    assert edges == Counter(readByXml(f"{e.sourceName} -> {e.destName}") for e in planned.edges())
    links = Counter(tooltipText(g) for g in drawn(root, "runs"))
    stageVertices = planned.stageVertices().items()
    assert links == Counter(readByXml(f"{s} runs in {v}") for s, names in stageVertices for v in names)


def test_odd_names_are_quoted_strings_not_html_and_draw_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = planToGraphviz(oddNamesPipeline()).source
    htmlLabels = re.findall(r"label=<<table [^>]*><tr><td>(.*?)</td></tr></table>>", source)
    samples = sum(len(row) for row in legendRows(True, None))
    assert source.count("=<") == len(htmlLabels) == len(plan(oddNamesPipeline()).edges()) + samples
    assert not any(name in label for label in htmlLabels for name in ODD_NAMES), "only edges' kinds are HTML"
