"""A job keeps the plan it ran: the pipeline is planned once, when the job is submitted, and
changing the pipeline afterwards changes nothing about the job, its picture or its report."""

import pytest

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner.planning import Plan

pytestmark = pytest.mark.spark


def test_extending_the_pipeline_after_submission_changes_nothing_about_the_job(jet, tmp_path):
    p = Pipeline.create()
    words = p.readFrom(Sources.items(["to", "be", "or", "not", "to", "be"]))
    words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    job = jet.newJob(p)
    words.filter(lambda word: word != "or").writeTo(Sinks.list("later"))
    job.join()
    assert isinstance(job.plan, Plan)
    assert [vertex.name for vertex in job.plan.vertices()] == [
        "items", "group-and-aggregate-prepare", "group-and-aggregate", "listSink(counts)"
    ]
    svg, _ = job.renderSvg(str(tmp_path / "plan.svg"))
    report = job.renderHtml(str(tmp_path / "report.html"))
    for drawn in (open(svg, encoding="utf-8").read(), open(report, encoding="utf-8").read()):
        assert "listSink(counts)" in drawn
        assert "listSink(later)" not in drawn
