"""What a notebook shows of a pipeline, a plan and a job's figures, without a kernel or Spark."""

import html

from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, MicroBatchMetrics, StageMetrics, VertexMetrics
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import plan
from sparkjet.planner.notebook import pipelineBundle


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
