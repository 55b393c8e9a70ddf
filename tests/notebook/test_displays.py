"""What a notebook shows of a pipeline, a plan and a job's figures, without a kernel or Spark."""

import html
import xml.etree.ElementTree as ET

import pytest

from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, MicroBatchMetrics, StageMetrics, VertexMetrics
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.notebook import pipelineBundle, planBundle, summaryRows
from sparkjet.planner.render import NOTEBOOK_WIDTH, PIXELS_PER_POINT
from tests.planner.test_render import SVG, bigPipeline, needsDot
from tests.planner.test_report import madeUpMetrics


def wordLengths() -> tuple[Pipeline, object]:
    p = Pipeline.create()
    lengths = p.readFrom(Sources.items(["a", "bb"])).map(len).setName("lengths")
    return p, lengths


def test_a_pipeline_shows_as_its_plan_s_picture_drawn_by_the_planner():
    p, lengths = wordLengths()
    lengths.writeTo(Sinks.list("out"))
    bundle = p._repr_mimebundle_()
    assert Pipeline.notebookDisplay is not None and bundle == pipelineBundle(p)
    assert bundle["text/plain"] == repr(plan(p))
    assert ">lengths<" in html.unescape(bundle["image/svg+xml"])
    assert plan(p)._repr_mimebundle_() == bundle


def test_a_pipeline_not_plannable_yet_says_why_in_text():
    p, _ = wordLengths()
    bundle = p._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"].startswith("<Pipeline of 2 stages, not planned: ")
    assert "[lengths]" in bundle["text/plain"]


def test_without_a_planner_a_pipeline_shows_its_plain_repr(monkeypatch):
    monkeypatch.setattr(Pipeline, "notebookDisplay", None)
    assert wordLengths()[0]._repr_mimebundle_() is None


def test_figures_show_as_a_table_of_vertices_and_their_stages_and_one_of_edges():
    vertices = (
        VertexMetrics("source", 2, 0, 3, 0.25, ()),
        VertexMetrics("fused(map, filter)", 2, 3, 2, 1.5, (StageMetrics("map", 3, 3), StageMetrics("filter", 3, 2))),
        VertexMetrics("window", 1, 2, 1, 0.1, (), watermark=12_000, lateEventsDropped=1),
    )
    edges = (EdgeMetrics("source", "fused(map, filter)", 3, None), EdgeMetrics("fused(map, filter)", "window", 2, 1234))
    page = JobMetrics("job-9", 4.5, vertices, edges, (MicroBatchMetrics(0, 1.0, 3),))._repr_html_()
    right = '<td style="text-align: right">'
    assert page.startswith(f"<p>{html.escape('Job ' + repr('job-9'))}: 4.50 s</p><p>1 micro-batch, 3 items read; ")
    assert (
        f'<tr class="vertex"><td>fused(map, filter)</td>{right}3</td>{right}2</td>{right}1.50</td>{right}2</td><td></td></tr>'
        '<tr class="stage"><td>\u00a0\u00a0\u00a0map</td>'
    ) in page
    assert f'<tr class="vertex"><td>window</td>{right}2</td>{right}1</td>{right}0.10</td>{right}1</td>' in page
    assert "<td>watermark 12,000, 1 late event dropped</td>" in page and "<th>Event time</th>" in page
    assert f'<tr class="edge"><td>fused(map, filter) \u2192 window</td>{right}2</td>{right}1,234</td></tr>' in page
    assert '<tr class="edge"><td>source \u2192 fused(map, filter)</td>' in page and "<td>not shuffled</td>" in page


def notebookWordCount() -> Pipeline:
    """The notebook's word count: five vertices, an aggregation of two."""
    p = Pipeline.create()
    (p.readFrom(Sources.items(["to be or not to be", "that is the question"])).flatMap(str.split)
      .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts")))
    return p


def pictureParts(svg: str) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """Return the width and height in CSS pixels of a notebook's picture and of its parts, the
    plan and the legend, each a nested SVG."""
    root = ET.fromstring(svg)
    scale = float(root.get("width").removesuffix("pt")) / float(root.get("viewBox").split()[2]) * PIXELS_PER_POINT
    parts = [(float(part.get("width")) * scale, float(part.get("height")) * scale) for part in root.findall(f"{SVG}svg")]
    size = [float(root.get(side).removesuffix("pt")) * PIXELS_PER_POINT for side in ("width", "height")]
    return (size[0], size[1]), parts


@needsDot
def test_a_pipeline_s_picture_fits_a_notebook_its_legend_a_few_rows_below_it():
    picture = pipelineBundle(notebookWordCount())["image/svg+xml"]
    (width, height), [(_, planHeight), (legendWidth, legendHeight)] = pictureParts(picture)
    assert width <= NOTEBOOK_WIDTH and legendWidth <= NOTEBOOK_WIDTH
    assert legendHeight < planHeight / 2 and height == pytest.approx(planHeight + legendHeight)


@needsDot
def test_a_job_s_picture_with_figures_and_a_big_plan_s_fit_a_notebook():
    planned = plan(notebookWordCount())
    (width, _), _ = pictureParts(planBundle(planned, madeUpMetrics(planned))["image/svg+xml"])
    (bigWidth, _), [(planWidth, _), _] = pictureParts(pipelineBundle(bigPipeline(10))["image/svg+xml"])
    assert width <= NOTEBOOK_WIDTH and bigWidth == pytest.approx(planWidth) == pytest.approx(NOTEBOOK_WIDTH, abs=1)


def test_a_job_s_time_shows_beside_its_vertices_busy_time():
    planned = plan(notebookWordCount())
    assert dict(summaryRows(madeUpMetrics(planned)))["Time"] == "12.35 s, its vertices busy 3.75 s"
