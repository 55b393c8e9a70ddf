"""A job keeps the plan it ran: the pipeline is planned once, when the job is submitted, and
changing the pipeline afterwards changes nothing about the job, its picture or its report."""

import pytest

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner.planning import Plan, plan

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



def test_a_job_keeps_the_physical_plan_it_ran_and_explains_it(jet, tmp_path):
    books = tmp_path / "books"
    books.mkdir()
    (books / "a.txt").write_text("to be or not to be\n")
    p = Pipeline.create()
    (p.readFrom(Sources.files(str(books))).flatMap(str.split).groupingKey(wholeItem())
      .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("physical")))
    assert "assumed" in Plan.explain(plan(p)), "before a job, the session is assumed"
    job = jet.newJob(p)
    job.join()
    physical = job.plan.physical
    assert physical is not None and physical.defaultParallelism == 1, "19 bytes of input: a small job"
    shuffle = next(edge for edge in job.plan.edges() if edge.isDistributed)
    assert physical.exchangeOf(shuffle).description == "kept in the task"
    shuffledByMetrics = {(e.sourceName, e.destName) for e in job.metrics().edges if e.shuffleBytes is not None}
    assert shuffledByMetrics == set(physical.shuffledEdges()) == set()
    explained = job.plan.explain()
    assert "a small job (its sources read 19 bytes, under 4 MiB" in explained
    assert "assumed" not in explained
