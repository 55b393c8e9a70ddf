"""A job's HTML report: one page holding the drawing, the figures and the explanation, checked in
the page's source and, after its script ran, in headless Chromium's DOM."""

import json
import shutil
from html.parser import HTMLParser

import attrs
import graphviz
import pytest

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, StageMetrics, VertexMetrics
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.report import reportHtml, writeReport
from tests.conftest import run
from tests.planner.test_render import needsDot

CHROMIUM = shutil.which("chromium")
needsChromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="opening the report needs Debian's chromium: apt-get install chromium "
    "(make test installs it, through .ci/chromium)",
)


@attrs.define
class Element:
    """An element of a page: its tag, attributes, text and parent."""

    tag: str
    attributes: dict
    parent: "Element | None"
    text: list = attrs.field(factory=list)

    def classes(self) -> list[str]:
        """Return the element's classes."""
        return (self.attributes.get("class") or "").split()


class Page(HTMLParser):
    """The elements of an HTML page, in document order."""

    VOID = {"meta", "br", "img", "input", "link", "hr"}

    def __init__(self, source: str) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self._open[-1] if self._open else None)
        self.elements.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_endtag(self, tag):
        while self._open and self._open.pop().tag != tag:
            pass

    def handle_data(self, data):
        for element in self._open:
            element.text.append(data)

    def byId(self, elementId: str) -> Element:
        """Return the element whose id is ``elementId``."""
        [element] = [element for element in self.elements if element.attributes.get("id") == elementId]
        return element

    def cellsOf(self, row: Element) -> list[Element]:
        """Return the cells of ``row``."""
        return [element for element in self.elements if element.parent is row]

    def rows(self, kind: str) -> list[dict[str, str]]:
        """Return the table rows of class ``kind``: their data attributes and the text of their
        cells that have a class, keyed by the cell's first class."""
        return [
            {
                **{key[5:]: value for key, value in row.attributes.items() if key.startswith("data-")},
                **{cell.classes()[0]: "".join(cell.text) for cell in self.cellsOf(row) if cell.classes()},
            }
            for row in self.elements
            if row.tag == "tr" and kind in row.classes()
        ]


def wordCount(source) -> Pipeline:
    """Words of the lines, the blank ones dropped by a stage with an awkward name, counted."""
    p = Pipeline.create()
    (
        p.readFrom(source)
        .flatMap(lambda line: line.lower().split())
        .filter(lambda word: word.isalpha())
        .setName("keep <words> & only words")
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("report-counts"))
    )
    return p


def madeUpMetrics(dag: DAG) -> JobMetrics:
    """Figures of a job that never ran: vertex n had 1000 n items in; every other edge shuffled."""
    vertices = tuple(
        VertexMetrics(
            vertex.name, processors=n, itemsIn=1000 * n, itemsOut=1000 * n + 7, seconds=0.25 * n, stages=()
        )
        for n, vertex in enumerate(dag.vertices(), start=1)
    )
    edges = tuple(
        EdgeMetrics(edge.sourceName, edge.destName, 10 * n, 4096 * n if n % 2 else None, edge.sourceOrdinal)
        for n, edge in enumerate(dag.edges(), start=1)
    )
    return JobMetrics("made-up", 12.3456, vertices, edges)


def withFusedStages(metrics: JobMetrics) -> JobMetrics:
    """``metrics`` with figures for the stages fused into the word count's fused vertex."""
    stages = (StageMetrics("flat-map", 2000, 9000), StageMetrics("keep <words> & only words", 9000, 8500))
    vertices = tuple(
        attrs.evolve(vertex, stages=stages) if vertex.name.startswith("fused(") else vertex
        for vertex in metrics.vertices
    )
    return attrs.evolve(metrics, vertices=vertices)


@pytest.fixture
def pipeline() -> Pipeline:
    return wordCount(Sources.items(["a b", "c"]))


def test_the_report_is_one_page_that_loads_nothing_else(pipeline):
    page = reportHtml(pipeline, madeUpMetrics(plan(pipeline)))
    assert page.startswith("<!DOCTYPE html>") and page.count("<html") == 1
    for reference in ("src=", "href=", "url(", "@import", "<link"):
        assert reference not in page
    assert "<svg" in page and "<?xml" not in page


def test_the_tables_hold_every_vertex_fused_stage_and_edge(pipeline):
    metrics = withFusedStages(madeUpMetrics(plan(pipeline)))
    page = Page(reportHtml(pipeline, metrics))
    assert "".join(page.byId("title").text) == "sparkjet job 'made-up'"
    assert "".join(page.byId("job-time").text) == (
        "The job ran in 12.35 s; its vertices were busy 3.75 s in all, summed over their processors "
        "(the rest is Spark's and sparkjet's own work: scheduling, starting workers, moving items)."
    )
    vertices = page.rows("vertex")
    assert [row["name"] for row in vertices] == [vertex.name for vertex in plan(pipeline).vertices()]
    fused = vertices[1]["name"]
    assert vertices[1] == {
        "name": fused, "items-in": "2,000", "items-out": "2,007", "busy": "0.50", "processors": "2"
    }
    assert page.rows("stage") == [
        {"vertex": fused, "name": "flat-map", "items-in": "2,000", "items-out": "9,000"},
        {"vertex": fused, "name": "keep <words> & only words", "items-in": "9,000", "items-out": "8,500"},
    ]
    edges = page.rows("edge")
    assert [(row["source"], row["dest"]) for row in edges] == [
        (edge.sourceName, edge.destName) for edge in plan(pipeline).edges()
    ]
    assert [(row["items"], row["shuffled-bytes"]) for row in edges[:2]] == [("10", "4,096"), ("20", "not shuffled")]


def test_names_cannot_break_out_of_the_page(pipeline):
    page = reportHtml(pipeline, madeUpMetrics(plan(pipeline)))
    assert page.count("</script>") == 3
    assert "keep &lt;words&gt; &amp; only words" in page
    graph = json.loads("".join(Page(page).byId("plan-graph").text))
    assert graph["vertices"] == [vertex.name for vertex in plan(pipeline).vertices()]


def test_the_report_of_a_pipeline_explains_its_plan(pipeline):
    page = Page(reportHtml(pipeline, madeUpMetrics(plan(pipeline))))
    assert "".join(page.byId("plan-text").text) == plan(pipeline).explain()


def handBuilt(planned: DAG) -> DAG:
    """Return a Core DAG of ``planned``'s vertices and edges, as a user would build it by hand."""
    dag = DAG()
    for vertex in planned.vertices():
        dag.vertex(vertex)
    for edge in planned.edges():
        dag.edge(edge)
    return dag


def test_the_report_of_a_core_dag_shows_its_dot_text(pipeline):
    dag = handBuilt(plan(pipeline))
    page = Page(reportHtml(dag, madeUpMetrics(dag)))
    assert "".join(page.byId("plan-text").text) == dag.toDotString()
    assert page.byId("drawing-check").attributes["data-vertices-expected"] == str(len(list(dag.vertices())))


def test_without_the_dot_program_the_report_says_how_to_install_it(pipeline, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    path = tmp_path / "report.html"
    assert writeReport(pipeline, str(path), madeUpMetrics(plan(pipeline))) == str(path)
    page = path.read_text(encoding="utf-8")
    assert "<svg" not in page and "apt-get install graphviz" in page
    assert len(Page(page).rows("vertex")) == len(list(plan(pipeline).vertices()))


def test_the_report_is_written_into_directories_made_for_it(pipeline, tmp_path):
    path = tmp_path / "out" / "reports" / "report.html"
    assert writeReport(pipeline, str(path), madeUpMetrics(plan(pipeline))) == str(path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def chromium(tmp_path, *arguments: str) -> str:
    """Run headless Chromium with a profile of its own on ``arguments``; return its output."""
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", profile, *arguments]
    done = run(command)
    assert done.returncode == 0, f"chromium failed: {done.stderr[-3000:]}"
    return done.stdout


def renderedPage(tmp_path, path: str) -> Page:
    """The page at ``path`` as Chromium holds it after its script ran."""
    return Page(chromium(tmp_path, "--dump-dom", f"file://{path}"))


@needsChromium
@pytest.mark.spark
def test_chromium_shows_every_vertex_and_edge_drawn_and_the_figures(jet, corpusLines, tmp_path):
    lines = corpusLines[:2000]
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "part.txt").write_text("\n".join(lines) + "\n")
    pipeline = wordCount(Sources.files(str(tmp_path / "books")))
    job = jet.newJob(pipeline)
    path = writeReport(job.plan, str(tmp_path / "report.html"), job.metrics())

    page = renderedPage(tmp_path, path)
    dag = plan(pipeline)
    check = page.byId("drawing-check").attributes
    assert check["data-missing"] == ""
    assert check["data-vertices-drawn"] == str(len(list(dag.vertices())))
    assert check["data-edges-drawn"] == str(len(list(dag.edges())))
    words = [word for line in lines for word in line.lower().split()]
    kept = [word for word in words if word.isalpha()]
    stages = {row["name"]: row for row in page.rows("stage")}
    assert stages["flat-map"]["items-in"] == f"{len(lines):,}"
    assert stages["flat-map"]["items-out"] == f"{len(words):,}"
    assert stages["keep <words> & only words"]["items-out"] == f"{len(kept):,}"
    vertices = {row["name"]: row for row in page.rows("vertex")}
    assert set(vertices) == {vertex.name for vertex in dag.vertices()}
    assert vertices["listSink(report-counts)"]["items-in"] == f"{len(set(kept)):,}"
    assert len(page.rows("edge")) == len(list(dag.edges()))

    screenshot = tmp_path / "report.png"  # to look at: pytest keeps the tmp_path of its last runs
    size = "--window-size=1600,1200"
    chromium(tmp_path, "--hide-scrollbars", size, f"--screenshot={screenshot}", f"file://{path}")
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 30_000


@needsChromium
def test_chromium_names_what_the_drawing_lacks(pipeline, tmp_path, monkeypatch):
    dag = plan(pipeline)
    first, second, third = [vertex.name for vertex in dag.vertices()][:3]
    partial = graphviz.Digraph()
    partial.node("a", "a", tooltip=first, **{"class": "vertex"})
    partial.node("b", "b", tooltip=second, **{"class": "vertex"})
    partial.node("c", "c", tooltip=third, **{"class": "stage"})
    partial.edge("a", "b", tooltip=f"{first} -> {second}", **{"class": "stage-edge"})
    drawing = partial.pipe(format="svg", encoding="utf-8")
    monkeypatch.setattr("sparkjet.planner.report.planSvg", lambda work, metrics, noted: drawing)
    path = writeReport(pipeline, str(tmp_path / "report.html"), madeUpMetrics(dag))

    check = renderedPage(tmp_path, path).byId("drawing-check").attributes
    assert (check["data-vertices-drawn"], check["data-edges-drawn"]) == ("2", "0")
    assert check["data-missing"].startswith(f"{third}; ")
    assert f"{first} -> {second}" in check["data-missing"]


def descendants(page: Page, ancestor: Element) -> list[Element]:
    """Return the elements inside ``ancestor``, in document order."""
    return [element for element in page.elements if ancestor in ancestorsOf(element)]


def ancestorsOf(element: Element) -> list[Element]:
    """Return the ancestors of ``element``, its parent first."""
    found = []
    while element.parent is not None:
        element = element.parent
        found.append(element)
    return found


@needsDot
def test_the_table_labels_each_edge_as_the_picture_does():
    p = Pipeline.create()
    words = p.readFrom(Sources.items(["a b"])).flatMap(str.split).setLocalParallelism(1)
    words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    words.sort().writeTo(Sinks.list("sorted"))
    words.rebalance().map(str.upper).setLocalParallelism(3).writeTo(Sinks.list("upper"))
    dag = plan(p)
    page = Page(reportHtml(p, madeUpMetrics(dag)))
    pictured = {}
    for group in [e for e in page.elements if e.tag == "g" and "dag-edge" in e.classes()]:
        inside = descendants(page, group)
        title = next(e for e in inside if e.tag == "a").attributes["xlink:title"]
        pictured[title.split("\n")[0]] = ["".join(e.text) for e in inside if e.tag == "text"]
    rows = [row for row in page.elements if row.tag == "tr" and "edge" in row.classes()]
    assert len(rows) == len(pictured) == len(dag.edges())
    kinds = set()
    for row in rows:
        source, dest, kind, items, shuffled = page.cellsOf(row)
        lines = pictured[f"{''.join(source.text)} -> {''.join(dest.text)}"]
        assert lines[: len(kind.text)] == kind.text and len(kind.text) == 2
        assert lines[len(kind.text)] == f"{''.join(items.text)} items"
        kinds.add(tuple(kind.text))
    assert {exchange for _, exchange in kinds} == {"in task", "shuffle"}


@needsDot
@needsChromium
def test_the_check_under_the_drawing_reads_as_a_statement_for_users(pipeline, tmp_path):
    dag = plan(pipeline)
    path = writeReport(pipeline, str(tmp_path / "report.html"), madeUpMetrics(dag))
    check = renderedPage(tmp_path, path).byId("drawing-check")
    counts = f"{len(dag.vertices())} vertices and {len(dag.edges())} edges"
    assert "".join(check.text) == f"All {counts} of the Core DAG are drawn."
