"""Stage names that look like HTML, comments or scripts stay text in a job's report: the page has
the elements it has for ordinary names, and shows the names."""

import json
import re

import attrs

from sparkjet.coredag.model.metrics import JobMetrics, StageMetrics
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.report import reportHtml, writeReport
from tests.planner.test_render import needsDot
from tests.planner.test_report import Page, madeUpMetrics, needsChromium, renderedPage

HOSTILE_NAMES = (
    "<!--<script>",
    "</script><b>x",
    "<script>alert(1)</script>",
    "]]>",
    "a & b &amp; &lt;",
    "--><!--",
    "<style>body{display:none}</style>",
    "'\"quoted\"'",
    "a\\",
)
ORDINARY_NAMES = tuple(f"stage {n}" for n in range(len(HOSTILE_NAMES)))
HOSTILE_JOB = "</title><script>alert(2)</script>"


def namedPipeline(names) -> Pipeline:
    """Source, two fused stages, an aggregation and more stages, named ``names`` in order."""
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(["a b"])).setName(names[0])
    stage = stage.flatMap(str.split).setName(names[1]).filter(bool).setName(names[2])
    stage = stage.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).setName(names[3])
    for name in names[4:]:
        stage = stage.map(str).setName(name).rebalance()
    stage.writeTo(Sinks.list("out"))
    return p


def figures(p: Pipeline, jobName: str) -> JobMetrics:
    """Made-up figures of ``p``'s plan, with the figures of each stage fused into a vertex."""
    dag = plan(p)
    roles = dag.vertexRoles()
    vertices = tuple(
        attrs.evolve(v, stages=tuple(StageMetrics(s, 10, 5) for s in roles[v.name].stages))
        if len(roles[v.name].stages) > 1
        else v
        for v in madeUpMetrics(dag).vertices
    )
    return attrs.evolve(madeUpMetrics(dag), jobName=jobName, vertices=vertices)


class Skeleton(Page):
    """An HTML page's elements as (depth, tag) and its comments, without text or attributes."""

    def __init__(self, source: str) -> None:
        self.comments: list[str] = []
        super().__init__(source)

    def handle_comment(self, data):
        self.comments.append(data)

    def shape(self) -> list[tuple[int, str]]:
        """Return each element's depth and tag, in document order."""
        return [(len(list(ancestors(element))), element.tag) for element in self.elements]


def ancestors(element):
    """Yield the ancestors of ``element``, its parent first."""
    while element.parent is not None:
        element = element.parent
        yield element


def report(names, jobName="made-up") -> str:
    """The report page of the pipeline named ``names``."""
    p = namedPipeline(names)
    return reportHtml(p, figures(p, jobName))


@needsDot
def test_hostile_names_leave_the_page_with_the_elements_ordinary_names_give():
    hostile, ordinary = Skeleton(report(HOSTILE_NAMES, HOSTILE_JOB)), Skeleton(report(ORDINARY_NAMES))
    assert hostile.shape() == ordinary.shape()
    assert len(hostile.comments) == len(ordinary.comments)
    assert [e.tag for e in hostile.elements].count("script") == 3
    assert "b" not in [e.tag for e in hostile.elements]


def test_script_blocks_hold_nothing_that_ends_or_escapes_them():
    # HTML's rule for the text of a script: no "<!--", "<script" or "</script" (any case), or the
    # browser reads the rest of the page otherwise than Python's parser does
    page = Page(report(HOSTILE_NAMES, HOSTILE_JOB))
    for script in [e for e in page.elements if e.tag == "script"]:
        assert not re.search(r"<!--|</?script", "".join(script.text), re.IGNORECASE)


def test_the_plan_graph_json_gives_the_names_back():
    p = namedPipeline(HOSTILE_NAMES)
    page = Page(reportHtml(p, figures(p, HOSTILE_JOB)))
    graph = json.loads("".join(page.byId("plan-graph").text))
    assert graph["vertices"] == [v.name for v in plan(p).vertices()]
    assert graph["edges"] == [[e.sourceName, e.destName] for e in plan(p).edges()]


def test_hostile_names_are_text_in_the_title_tables_and_explanation():
    p = namedPipeline(HOSTILE_NAMES)
    page = Page(reportHtml(p, figures(p, HOSTILE_JOB)))
    assert "".join(page.byId("title").text) == f"sparkjet job '{HOSTILE_JOB}'"
    assert [row["name"] for row in page.rows("vertex")] == [v.name for v in plan(p).vertices()]
    assert [row["name"] for row in page.rows("stage")] == list(HOSTILE_NAMES[1:3])
    assert [(row["source"], row["dest"]) for row in page.rows("edge")] == [
        (e.sourceName, e.destName) for e in plan(p).edges()
    ]
    assert "".join(page.byId("plan-text").text) == plan(p).explain()


@needsDot
def test_hostile_names_are_text_in_the_drawing():
    page = Page(report(HOSTILE_NAMES, HOSTILE_JOB))
    shown = {"".join(e.text) for e in page.elements if e.tag == "text"}
    assert set(HOSTILE_NAMES) <= shown
    titles = {e.attributes.get("xlink:title") for e in page.elements if e.tag == "a"}
    assert set(HOSTILE_NAMES) <= titles


@needsChromium
def test_chromium_runs_the_check_and_finds_every_hostile_name_drawn(tmp_path):
    # the check runs only if the JSON's script element ends where the page means it to
    # no "-->" among these names: it would close the comment "<!--" opens, hiding the fault
    p = namedPipeline(("<!--<script>", "</script><b>x", "a & b &amp; &lt;", "a\\", "two\nlines", "\\N \\G"))
    metrics = figures(p, HOSTILE_JOB)
    path = writeReport(p, str(tmp_path / "report.html"), metrics)
    page = renderedPage(tmp_path, path)
    check = page.byId("drawing-check").attributes
    assert check["data-missing"] == ""
    assert (check["data-vertices-drawn"], check["data-edges-drawn"]) == (
        str(len(metrics.vertices)), str(len(metrics.edges))
    )
    assert "".join(page.byId("title").text) == f"sparkjet job '{HOSTILE_JOB}'"
