"""Pictures measured where they are seen, in headless Chromium: the report's Fit shows the whole
plan in its box, and no edge's label lies on its own line or arrowhead."""

import json
import pathlib

import pytest

from sparkjet.pipeline import Sources
from sparkjet.planner import plan
from sparkjet.planner.planning import planOf
from sparkjet.planner.render import planPicture
from sparkjet.planner.report import writeReport
from tests.planner.test_plan_readability import LINES, eighteenVertexPipeline, tenStagePipeline
from tests.planner.test_render import needsDot, tutorialPipelines
from tests.planner.test_report import Page, chromium, madeUpMetrics, needsChromium, wordCount

BOX_SCRIPT = """
<script>
(() => {
  document.getElementById("zoom-fit").click();
  const box = document.getElementById("drawing");
  const drawn = box.querySelector("svg").getBoundingClientRect();
  const style = getComputedStyle(box);
  document.body.dataset.measured = JSON.stringify({
    drawing: [drawn.width, drawn.height],
    box: [box.clientWidth, parseFloat(style.maxHeight)],
    zoom: parseFloat(box.dataset.zoom),
  });
})();
</script>
"""
"""Added to a report after its own scripts: clicks Fit, then writes into the page the size of the
drawing on screen and of the room its box has (its width, its highest height), in CSS pixels."""

OVERLAP_SCRIPT = """
<script>
(() => {
  const near = (point, box, pad) => point.x >= box.x - pad && point.x <= box.x + box.width + pad
    && point.y >= box.y - pad && point.y <= box.y + box.height + pad;
  const overlaps = [];
  let labels = 0;
  for (const svg of document.querySelectorAll("svg[data-name]")) {
    for (const edge of svg.querySelectorAll("g.edge")) {
      const texts = [...edge.querySelectorAll("text")];
      if (texts.length === 0) continue;
      labels += 1;
      const points = [];
      for (const mark of edge.querySelectorAll("path, polygon, ellipse")) {
        const half = (parseFloat(mark.getAttribute("stroke-width")) || 1) / 2;
        const length = mark.getTotalLength();
        for (let at = 0; at <= length; at += 0.5) points.push([mark.getPointAtLength(at), half]);
      }
      for (const text of texts) {
        const box = text.getBBox();
        if (points.some(([point, half]) => near(point, box, half)))
          overlaps.push(`${svg.dataset.name}, ${edge.id}: '${text.textContent}'`);
      }
    }
  }
  document.body.dataset.measured = JSON.stringify({ labels, overlaps });
})();
</script>
"""
"""Added to a page of pictures (``<svg data-name=...>``): writes into it how many edges have a
label and each line of a label whose box (as the browser lays the text out) touches its edge's
line or the outline of its arrowhead or tail, by points every half a unit along them (half the
line's width around each)."""


def measuredIn(tmp_path, page: str, script: str, *arguments: str) -> dict:
    """Return what ``script``, added to ``page``, writes into it in Chromium."""
    path = tmp_path / "measured.html"
    path.write_text(page.replace("</body>", f"{script}</body>"), encoding="utf-8")
    dom = Page(chromium(tmp_path, *arguments, "--dump-dom", f"file://{path}"))
    [body] = [element for element in dom.elements if element.tag == "body"]
    return json.loads(body.attributes["data-measured"])


@needsDot
@needsChromium
@pytest.mark.parametrize(
    ("name", "make", "window"),
    [
        ("word count, a window wider than it", lambda: wordCount(Sources.items(LINES)), "1600,1000"),
        ("ten stages, a window narrower than them", tenStagePipeline, "900,1000"),
        ("eighteen vertices, a short window", eighteenVertexPipeline, "1600,700"),
    ],
)
def test_fit_shows_the_whole_plan_in_its_box(name, make, window, tmp_path):
    p = make()
    path = pathlib.Path(writeReport(p, str(tmp_path / "report.html"), madeUpMetrics(plan(p))))
    sizes = measuredIn(tmp_path, path.read_text(encoding="utf-8"), BOX_SCRIPT, f"--window-size={window}")
    (width, height), (roomWidth, roomHeight) = sizes["drawing"], sizes["box"]
    assert width <= roomWidth + 0.5 and height <= roomHeight + 0.5, sizes
    assert width >= roomWidth - 1 or height >= roomHeight - 1, f"as large as the box allows: {sizes}"


def picturesPage(tmp_path) -> str:
    """Return a page of every tutorial's plan with made-up figures, left to right and top to bottom."""
    svgs = []
    for name, p in tutorialPipelines().items():
        planned = planOf(p)
        for rankdir in ("LR", "TB"):
            svg = planPicture(planned, madeUpMetrics(planned), rankdir).pipe(format="svg", encoding="utf-8")
            svgs.append(svg[svg.index("<svg"):].replace("<svg ", f'<svg data-name="{name}, {rankdir}" ', 1))
    return "<!DOCTYPE html><html><body>" + "\n".join(svgs) + "</body></html>"


@needsDot
@needsChromium
def test_no_edge_label_lies_on_its_line_or_arrowhead(tmp_path):
    found = measuredIn(tmp_path, picturesPage(tmp_path), OVERLAP_SCRIPT)
    assert found["labels"] > 100 and found["overlaps"] == []
