"""job.metrics(): what a job did, per vertex, per fused stage and per edge, against Counter."""

import re

import pytest

from sparkjet.coredag.errors import UserFunctionError
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from tests.conftest import CORPUS

pytestmark = pytest.mark.spark


def longWordCount(parallelism: int) -> Pipeline:
    """Counts the words of seven letters or more: the filter drops about nine words in ten."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.files(str(CORPUS.parent), "*.txt")).setLocalParallelism(parallelism)
        .flatMap(lambda line: re.split(r"\W+", line.lower())).setName("split").setLocalParallelism(parallelism)
        .filter(lambda word: len(word) >= 7).setName("long words").setLocalParallelism(parallelism)
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting()).setName("count").setLocalParallelism(parallelism)
        .writeTo(Sinks.list("long"))
    )
    return p


@pytest.fixture(scope="module")
def expected(corpusLines):
    """Independent figures: lines, words (empty strings included), long words, distinct long."""
    words = [word for line in corpusLines for word in re.split(r"\W+", line.lower())]
    long = [word for word in words if len(word) >= 7]
    return {"lines": len(corpusLines), "words": len(words), "long": len(long), "distinct": len(set(long))}


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_metrics_count_items_per_vertex_and_per_fused_stage(jet, expected, parallelism):
    job = jet.newJob(longWordCount(parallelism))
    metrics = job.metrics()
    assert len(jet.getList("long")) == expected["distinct"]
    fused = metrics.vertex("fused(split, long words)")
    assert [(s.name, s.itemsIn, s.itemsOut) for s in fused.stages] == [
        ("split", expected["lines"], expected["words"]),
        ("long words", expected["words"], expected["long"]),
    ]
    assert (fused.itemsIn, fused.itemsOut, fused.processors) == (expected["lines"], expected["long"], parallelism)
    assert expected["long"] < expected["words"] / 8
    assert metrics.vertex("count-prepare").itemsIn == expected["long"]
    assert metrics.vertex("count").itemsOut == expected["distinct"]
    assert metrics.vertex("listSink(long)").itemsIn == expected["distinct"]
    assert all(vertex.seconds >= 0 for vertex in metrics.vertices) and metrics.seconds > 0


def test_only_the_shuffle_between_prepare_and_combine_moves_bytes(jet, expected):
    metrics = jet.newJob(longWordCount(2)).metrics()
    shuffle = metrics.edge("count-prepare", "count")
    assert shuffle.items == metrics.vertex("count-prepare").itemsOut >= expected["distinct"]
    assert shuffle.shuffleBytes > shuffle.items
    kept = metrics.edge("fused(split, long words)", "count-prepare")
    assert (kept.items, kept.shuffleBytes) == (expected["long"], None)


def test_a_busy_vertex_has_the_most_busy_time(jet):
    p = Pipeline.create()
    slow = p.readFrom(Sources.items(range(20))).map(lambda n: __import__("time").sleep(0.01) or n)
    slow.setName("sleepy").writeTo(Sinks.list("slept"))
    metrics = jet.newJob(p).metrics()
    busiest = max(metrics.vertices, key=lambda vertex: vertex.seconds)
    assert busiest.name == "sleepy" and busiest.seconds >= 0.2


def test_metrics_of_a_failed_job_raise_its_error(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 0])).map(lambda n: 1 // n).setName("invert").writeTo(Sinks.list("inverted"))
    job = jet.newJob(p)
    with pytest.raises(UserFunctionError, match="invert"):
        job.metrics()


def test_a_planned_job_has_no_metrics(capsys):
    from sparkjet.coredag.errors import JobError
    from sparkjet.planner import Jet
    from sparkjet.planner.jet import watchingJobs

    with watchingJobs(runs=False) as jobs:
        Jet().newJob(longWordCount(1))
    with pytest.raises(JobError, match="only planned"):
        jobs[0].metrics()
