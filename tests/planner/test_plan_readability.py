"""Plans that stay readable as they grow: the standalone picture fits a 1600-pixel screen or says
how to view it, links from stages to vertices stay short, and the report's plan zooms and pans
with its text never below MIN_TEXT_PIXELS, measured in headless Chromium.

``python -m tests.planner.test_plan_readability tutorials/images`` takes the screenshots, at
1600x1000, of the reports and pictures of word count, a 10-stage pipeline and an 18-vertex Core DAG."""

import argparse
import json
import pathlib
import tempfile
import xml.etree.ElementTree as ET

import attrs
import pytest

from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.pipeline import AggregateOperations, JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.render import (
    SCREEN_WIDTH,
    planSvg,
    planToGraphviz,
    screenPicture,
    svgWidth,
    viewingNote,
    writePlanSvg,
)
from sparkjet.planner.report import MIN_TEXT_PIXELS, writeReport
from tests.planner.test_render import SVG, drawn, needsDot
from tests.planner.test_report import Page, chromium, madeUpMetrics, needsChromium
from tests.planner.test_report import wordCount as reportWordCount

LINES = ["the quick brown fox", "jumps over the lazy dog"]
SCREEN = "--window-size=1600,1000"


def tenStagePipeline() -> Pipeline:
    """A word count of ten stages in a line: four fused, an aggregation, a sort."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(LINES)).setName("read lines")
        .map(str.lower).setName("lower-case")
        .flatMap(str.split).setName("split into words")
        .filter(str.isalpha).setName("keep words")
        .rebalance()
        .map(lambda word: word.strip("'")).setName("strip quotes")
        .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).setName("count each word")
        .filter(lambda entry: entry[1] > 1).setName("frequent words")
        .sort(lambda entry: -entry[1]).setName("most frequent first")
        .map(lambda entry: f"{entry[0]}: {entry[1]}").setName("format")
        .writeTo(Sinks.list("frequent words"))
    )
    return p


def eighteenVertexPipeline() -> Pipeline:
    """Words read once and used by five branches: counts, a total, distinct words, sorted words
    and a hash join, 13 stages lowered to a Core DAG of 18 vertices."""
    p = Pipeline.create()
    words = p.readFrom(Sources.items(LINES)).setName("read lines").flatMap(str.split).setName("split into words")
    byWord = words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).setName("count each word")
    byWord.writeTo(Sinks.list("counts"))
    words.aggregate(AggregateOperations.counting()).setName("count all words").writeTo(Sinks.list("total"))
    words.distinct().setName("distinct words").writeTo(Sinks.list("vocabulary"))
    words.sort().setName("sort words").writeTo(Sinks.list("sorted"))
    initials = p.readFrom(Sources.items([("t", "tango")])).setName("read alphabet")
    clause = JoinClause.onKeys(lambda word: word[0], lambda entry: entry[0])
    spelled = words.hashJoin(initials, clause, lambda word, entry: (word, entry[1])).setName("spell initials")
    spelled.writeTo(Sinks.list("spelled"))
    return p


EXAMPLES = {
    "word-count": lambda: reportWordCount(Sources.items(LINES)),
    "ten-stage-pipeline": tenStagePipeline,
    "eighteen-vertex-dag": eighteenVertexPipeline,
}
"""The plans the screenshots show, by the name of their file."""


def test_the_examples_have_ten_stages_and_eighteen_vertices():
    assert len(plan(tenStagePipeline()).pipelineGraph().transforms) == 10
    assert len(plan(eighteenVertexPipeline()).vertices()) == 18


# The standalone picture


def svgOf(path: pathlib.Path) -> ET.Element:
    """Return the root of the SVG file at ``path``."""
    return ET.parse(path).getroot()


def noteOf(root: ET.Element) -> list[str]:
    """Return the lines of text drawn on the picture's own graph, outside any node, edge or cluster."""
    graph = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "graph")
    return [text.text for text in graph.findall(f"{SVG}text")]


@needsDot
@pytest.mark.parametrize("make", [tenStagePipeline, eighteenVertexPipeline, lambda: plan(eighteenVertexPipeline()).dag])
def test_the_picture_of_ten_stages_or_eighteen_vertices_fits_a_screen(make, tmp_path):
    written, note = writePlanSvg(make(), str(tmp_path / "plan.svg"))
    svg = pathlib.Path(written).read_text(encoding="utf-8")
    assert note is None and svgWidth(svg) <= SCREEN_WIDTH
    assert noteOf(ET.fromstring(svg)) == []


@needsDot
def test_a_long_pipeline_is_drawn_top_to_bottom_when_only_that_fits():
    planned = plan(tenStagePipeline())
    assert svgWidth(planToGraphviz(planned).pipe(format="svg", encoding="utf-8")) > SCREEN_WIDTH
    assert screenPicture(planned).graph_attr["rankdir"] == "TB"
    assert screenPicture(plan(eighteenVertexPipeline())).graph_attr["rankdir"] == "LR"


def gridPipeline(branches: int, length: int) -> Pipeline:
    """A source feeding ``branches`` chains of ``length`` unfused maps each: too wide for a
    screen whichever way it is drawn."""
    p = Pipeline.create().setFusionEnabled(False)
    source = p.readFrom(Sources.items([1])).setName("numbers")
    for branch in range(branches):
        stage = source
        for step in range(length):
            stage = stage.map(abs).setName(f"branch {branch} step {step}")
        stage.writeTo(Sinks.list(f"out {branch}"))
    return p


@needsDot
def test_a_picture_too_wide_for_a_screen_says_how_to_view_it(tmp_path):
    written, _ = writePlanSvg(gridPipeline(8, 8), str(tmp_path / "plan.svg"))
    svg = pathlib.Path(written).read_text(encoding="utf-8")
    width = svgWidth(svg)
    assert width > SCREEN_WIDTH
    assert noteOf(ET.fromstring(svg)) == viewingNote(width)
    assert viewingNote(width)[0] == f"This plan is {width:,.0f} pixels wide, wider than a 1600-pixel screen:"
    assert noteOf(ET.fromstring(planSvg(gridPipeline(8, 8), noted=False))) == []


@needsDot
def test_each_link_from_a_stage_to_a_vertex_is_short_and_crosses_no_other():
    # the old layout, the whole pipeline above the whole DAG, sent links across every branch
    root = ET.fromstring(planSvg(eighteenVertexPipeline()))
    centres = {g.get("id"): centre(g) for g in drawn(root, "stage") + drawn(root, "vertex")}
    ends = [g.find(f"{SVG}title").text.split("->") for g in drawn(root, "runs")]
    segments = [(centres[stage], centres[vertex]) for stage, vertex in ends]
    longest = max(distance(a, b) for a, b in segments)
    assert longest < 300, f"a link from a stage to its vertex is {longest:.0f} points long"
    crossings = [(s, t) for n, s in enumerate(segments) for t in segments[n + 1 :] if crosses(s, t)]
    assert crossings == []


def centre(group: ET.Element) -> tuple[float, float]:
    """Return the centre of a node's ellipse or box."""
    ellipse = group.find(f".//{SVG}ellipse")
    if ellipse is not None:
        return float(ellipse.get("cx")), float(ellipse.get("cy"))
    outline = group.find(f".//{SVG}path").get("d")[1:].replace("C", " ")
    points = [tuple(map(float, point.split(","))) for point in outline.split()]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2


def distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Return the distance between two points."""
    return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5


def crosses(s, t) -> bool:
    """Tell whether two segments cross at a point inside both (sharing an end is not crossing)."""
    (p, q), (r, u) = s, t
    if {p, q} & {r, u}:
        return False

    def side(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    return side(p, q, r) * side(p, q, u) < 0 and side(r, u, p) * side(r, u, q) < 0


# The report: zoom, pan and the size of its text, measured in Chromium

MEASURE_SCRIPT = """
<script>
(() => {
  ACTIONS
  const pixels = text => parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM().a;
  const sizes = kind => [...document.querySelectorAll(`#drawing svg g.${kind} text`)].map(pixels);
  const svg = document.querySelector("#drawing svg");
  document.body.dataset.measured = JSON.stringify({
    vertexText: Math.min(...sizes("vertex")),
    edgeText: Math.min(...sizes("dag-edge")),
    drawingWidth: svg.getBoundingClientRect().width,
    windowWidth: document.documentElement.clientWidth,
    zoom: document.getElementById("drawing").dataset.zoom,
  });
})();
</script>
"""
"""Added to a report after its own scripts: does ACTIONS (clicks), then writes into the page the
smallest size on screen, in CSS pixels, of the text of its vertices and edges (a text's font size
in the SVG's units times their scale on the screen) and how wide the drawing is."""


def measured(tmp_path, p: Pipeline, actions: str = "", style: str = "", window: str = SCREEN) -> dict:
    """Return the sizes MEASURE_SCRIPT finds in ``p``'s report in Chromium, after ``actions``,
    with ``style`` added to the page's CSS."""
    path = pathlib.Path(writeReport(p, str(tmp_path / "report.html"), madeUpMetrics(plan(p))))
    page = path.read_text(encoding="utf-8").replace("</style>", f"{style}</style>", 1)
    path.write_text(page.replace("</body>", MEASURE_SCRIPT.replace("ACTIONS", actions) + "</body>"), encoding="utf-8")
    dom = Page(chromium(tmp_path, window, "--dump-dom", f"file://{path}"))
    [body] = [element for element in dom.elements if element.tag == "body"]
    return json.loads(body.attributes["data-measured"])


def click(button: str, times: int = 1) -> str:
    """Return the script that clicks the zoom bar's ``button`` ``times`` times."""
    return f'for (let n = 0; n < {times}; n++) document.getElementById("{button}").click();'


@needsDot
@needsChromium
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_vertex_labels_in_the_report_are_at_least_eleven_pixels_at_100_percent(name, tmp_path):
    sizes = measured(tmp_path, EXAMPLES[name]())
    assert sizes["vertexText"] >= MIN_TEXT_PIXELS and sizes["edgeText"] >= MIN_TEXT_PIXELS, sizes


@needsDot
@needsChromium
def test_the_measure_finds_text_a_deliberately_tiny_drawing_shrinks(tmp_path):
    # the old report capped the drawing at the page's width: this is what that did, and worse
    tiny = "#drawing svg { width: 400px !important; height: auto !important; }"
    sizes = measured(tmp_path, eighteenVertexPipeline(), style=tiny)
    assert sizes["vertexText"] < MIN_TEXT_PIXELS, sizes


@needsDot
@needsChromium
def test_zooming_out_keeps_text_readable_and_fitting_shows_the_whole_plan(tmp_path):
    zoomedOut = measured(tmp_path, eighteenVertexPipeline(), click("zoom-out", 20))
    assert float(zoomedOut["zoom"]) < 1 and zoomedOut["edgeText"] >= MIN_TEXT_PIXELS - 0.01, zoomedOut
    fitted = measured(tmp_path, eighteenVertexPipeline(), click("zoom-fit"), window="--window-size=800,1000")
    assert fitted["drawingWidth"] <= fitted["windowWidth"], "Fit shows the whole plan, however small its text (issue 28)"


@needsDot
@needsChromium
def test_fit_is_a_toggle_not_a_cap(tmp_path):
    natural = measured(tmp_path, tenStagePipeline(), window="--window-size=700,1000")
    assert natural["drawingWidth"] > natural["windowWidth"], "at 100% a wide plan keeps its size and scrolls"
    fitted = measured(tmp_path, tenStagePipeline(), click("zoom-fit"))
    unfitted = measured(tmp_path, tenStagePipeline(), click("zoom-fit", 2))
    assert float(fitted["zoom"]) != 1 and float(unfitted["zoom"]) == 1
    assert fitted["drawingWidth"] <= fitted["windowWidth"]
    zoomedIn = measured(tmp_path, tenStagePipeline(), click("zoom-in", 2))
    assert zoomedIn["vertexText"] == pytest.approx(unfitted["vertexText"] * 1.25**2, rel=0.01)


# Screenshots


def runFigures(p: Pipeline) -> JobMetrics:
    """Made-up figures of a run of ``p`` that read like a real one: bytes only where an edge
    crosses a shuffle."""
    planned = plan(p)
    exchanges = planned.physicalPlan().exchanges()
    figures = madeUpMetrics(planned)
    edges = tuple(
        attrs.evolve(edge, shuffleBytes=None)
        if exchanges[edge.sourceName, edge.sourceOrdinal] is not Exchange.SHUFFLED
        else attrs.evolve(edge, shuffleBytes=edge.shuffleBytes or 2048)
        for edge in figures.edges
    )
    return attrs.evolve(figures, jobName="readable plans", edges=edges)


def screenshots(directory: pathlib.Path, work: pathlib.Path) -> list[pathlib.Path]:
    """Write the report and the picture of each example into ``work`` and their screenshots in
    headless Chromium at 1600x1000 into ``directory``, as ``screen-<example>-report.png`` and
    ``screen-<example>-plan.png``; return the screenshots' paths."""
    shots = []
    for name, make in EXAMPLES.items():
        p = make()
        report = writeReport(p, str(work / f"{name}.html"), runFigures(p))
        picture, _ = writePlanSvg(p, str(work / f"{name}.svg"))
        for page, kind in ((report, "report"), (picture, "plan")):
            shot = directory / f"screen-{name}-{kind}.png"
            chromium(work, "--hide-scrollbars", SCREEN, f"--screenshot={shot}", f"file://{page}")
            shots.append(shot)
    return shots


@needsDot
@needsChromium
def test_the_screenshots_are_taken_at_1600_by_1000(tmp_path):
    for shot in screenshots(tmp_path, tmp_path):
        header = shot.read_bytes()[:24]
        assert header.startswith(b"\x89PNG") and header[16:24] == (1600).to_bytes(4, "big") + (1000).to_bytes(4, "big")


def main(argv=None) -> None:
    """Take the screenshots into a directory (tutorials/images, shown by the docs' page on plans)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=pathlib.Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        for shot in screenshots(args.directory, pathlib.Path(work)):
            print(shot)


if __name__ == "__main__":
    main()
