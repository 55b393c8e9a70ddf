"""Jet's windowed aggregation in a pipeline: ``addTimestamps``, ``window``, ``aggregate``, over a
bounded source; Jet's plan shapes, and results equal a plain count per window at every parallelism
(the lines' disorder is within the allowed lag, so no event is late)."""

import random
from collections import Counter

import pytest

from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.coredag.model.window_result import KeyedWindowResult, WindowResult
from sparkjet.pipeline import (
    AggregateOperation,
    AggregateOperations,
    Pipeline,
    PipelineError,
    Sinks,
    Sources,
    wholeItem,
)
from sparkjet.pipeline.window_definition import WindowDefinition
from sparkjet.planner import plan

RANDOM = random.Random(5)
LINES = [f"{number * 110 // 150 + RANDOM.randrange(0, 10)} " + " ".join(RANDOM.choice(["ant", "bee", "cat", ""]) for _ in range(4))
         for number in range(150)]


def timestampOf(line: str) -> int:
    return int(line.split(" ", 1)[0])


def wordsOf(line: str) -> list[str]:
    return line.split(" ", 1)[1].split(" ")


def nonEmpty(word: str) -> bool:
    return word != ""


def wordCount(p: Pipeline, window, op=None, parallelism: int = -1):
    return (
        p.readFrom(Sources.items(LINES)).setLocalParallelism(parallelism)
        .addTimestamps(timestampOf, 10)
        .flatMap(wordsOf)
        .filter(nonEmpty)
        .groupingKey(wholeItem())
        .window(window)
        .aggregate(op or AggregateOperations.counting())
        .setLocalParallelism(parallelism)
    )


def plainCounts(size: int, slide: int) -> Counter:
    counts = Counter()
    for line in LINES:
        t = timestampOf(line)
        for word in filter(nonEmpty, wordsOf(line)):
            for start in range(t - t % slide, t - size, -slide):
                counts[(start, start + size, word)] += 1
    return counts


def test_a_keyed_window_plans_as_jets_two_stages():
    p = Pipeline.create()
    wordCount(p, WindowDefinition.tumbling(10)).writeTo(Sinks.logger())
    planned = plan(p)
    dot = planned.toDotString()
    assert '"items" -> "add-timestamps" [label="isolated"' in dot
    assert '"fused(flat-map, filter)" -> "sliding-window-prepare" [label="partitioned"' in dot
    assert 'subgraph cluster_0 {\n\t\t"sliding-window-prepare" -> "sliding-window" [label="distributed-partitioned"' in dot


def test_no_combine_or_early_results_plan_one_stage_and_say_why():
    noCombine = AggregateOperation(int, lambda acc, word: acc + 1)
    for window, op, reason in [
        (WindowDefinition.tumbling(10), noCombine, "the operation has no combine"),
        (WindowDefinition.tumbling(10).setEarlyResultsPeriod(100), None, "early results come from the one stage"),
    ]:
        p = Pipeline.create()
        wordCount(p, window, op).writeTo(Sinks.logger())
        planned = plan(p)
        assert [v.name for v in planned.dag.vertices()][-2] == "sliding-window"
        assert "sliding-window-prepare" not in planned.toDotString() and reason in planned.explain(2)


def test_a_global_window_ends_in_one_processor():
    p = Pipeline.create()
    p.readFrom(Sources.items(LINES)).addTimestamps(timestampOf, 0).window(WindowDefinition.tumbling(10)).aggregate(
        AggregateOperations.counting()
    ).writeTo(Sinks.logger())
    dag = plan(p).dag
    assert dag.getVertex("sliding-window").localParallelism == 1
    [edge] = dag.getInboundEdges("sliding-window")
    assert edge.isDistributed and edge.routing is RoutingPolicy.ALL_TO_ONE


def test_window_needs_a_window_definition():
    stream = Pipeline.create().readFrom(Sources.items(LINES)).addTimestamps(timestampOf, 0)
    with pytest.raises(PipelineError, match="window\\(\\) takes a WindowDefinition"):
        stream.window(10)
    with pytest.raises(PipelineError, match="the allowed lag must be 0 or more"):
        Pipeline.create().readFrom(Sources.items(LINES)).addTimestamps(timestampOf, -1)


@pytest.mark.spark
@pytest.mark.parametrize("parallelism", [1, 3])
def test_windowed_word_counts_equal_a_plain_count_per_window(jet, parallelism):
    p = Pipeline.create()
    wordCount(p, WindowDefinition.tumbling(10), parallelism=parallelism).writeTo(Sinks.list(f"tumbling{parallelism}"))
    wordCount(p, WindowDefinition.sliding(30, 10), parallelism=parallelism).writeTo(Sinks.list(f"sliding{parallelism}"))
    jet.newJob(p).join()
    for name, (size, slide) in [("tumbling", (10, 10)), ("sliding", (30, 10))]:
        results = list(jet.getList(f"{name}{parallelism}"))
        assert all(isinstance(r, KeyedWindowResult) and not r.isEarly for r in results)
        assert Counter({(r.start, r.end, r.key): r.result for r in results}) == plainCounts(size, slide)
        assert len(results) == len(plainCounts(size, slide))


@pytest.mark.spark
def test_global_and_session_windows_and_a_stream_written_directly(jet):
    p = Pipeline.create()
    stream = p.readFrom(Sources.items(sorted(LINES, key=timestampOf))).addTimestamps(timestampOf, 0)
    stream.window(WindowDefinition.tumbling(40)).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("global"))
    stream.map(timestampOf).window(WindowDefinition.session(3)).aggregate(AggregateOperations.counting()).writeTo(
        Sinks.list("sessions")
    )
    stream.map(timestampOf).writeTo(Sinks.list("timestamps"))
    jet.newJob(p).join()
    assert sorted(jet.getList("global"), key=lambda r: r.start) == [
        WindowResult(start, start + 40, sum(1 for line in LINES if start <= timestampOf(line) < start + 40))
        for start in range(0, 120, 40)
    ]
    stamps = sorted({timestampOf(line) for line in LINES})
    sessions = [r for r in jet.getList("sessions")]
    assert sum(r.result for r in sessions) == len(LINES)
    assert all(r.end - r.start >= 3 for r in sessions)
    assert Counter(jet.getList("timestamps")) == Counter(timestampOf(line) for line in LINES)
    assert len(sessions) == 1 + sum(1 for a, b in zip(stamps, stamps[1:]) if b - a >= 3)


def test_the_picture_marks_watermark_and_window_vertices():
    from sparkjet.coredag.model.dot import dagToGraphviz

    p = Pipeline.create()
    wordCount(p, WindowDefinition.tumbling(10)).writeTo(Sinks.logger())
    source = dagToGraphviz(plan(p).dag).source
    assert 'add-timestamps\nparallelism default\ninserts watermarks" class=vertex fillcolor="#E3F1E4"' in source
    assert source.count('fillcolor="#FCEFD2"') == 2  # sliding-window-prepare and sliding-window
    assert source.count("windows by event time") == 4  # in each one's label and tooltip
    [itemsNode] = [line for line in source.splitlines() if line.startswith('\t"vertex-0" [')]
    assert "fillcolor" not in itemsNode
