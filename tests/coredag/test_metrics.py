"""Counting what a job did: per batch in each task, summed into frozen JobMetrics."""

from collections import Counter

import pytest

from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.metrics import CountsAccumulatorParam, EdgeMetrics, JobMetrics, TaskMetrics
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind


def chain() -> StatelessChainP:
    return StatelessChainP(
        (
            StatelessStep(StepKind.FLAT_MAP, str.split, "split"),
            StatelessStep(StepKind.FILTER, lambda word: len(word) > 2, "long"),
            StatelessStep(StepKind.MAP, str.upper, "upper"),
        )
    )


BATCHES = [["a bb ccc dddd", "eeeee f"], [], ["gg hhh"]]


def test_a_fused_vertex_counts_each_stage_and_gives_the_uncounted_output():
    metrics = TaskMetrics()
    context = ProcessorContext("fused", 0, 1, metrics=metrics)
    counted = list(chain().batchFunction(context)(iter(BATCHES)))
    plain = list(chain().batchFunction(ProcessorContext("fused", 0, 1))(iter(BATCHES)))
    assert counted == plain == [["CCC", "DDDD", "EEEEE"], ["HHH"]]
    total = metrics.total()
    assert [(total["stageIn", "fused", s], total["stageOut", "fused", s]) for s in ("split", "long", "upper")] == [
        (3, 8),
        (8, 4),
        (4, 4),
    ]


def test_task_metrics_count_items_in_and_out_and_processors():
    metrics = TaskMetrics()
    inputs = metrics.countedInput("v", iter([[1, 2], [3]]))
    outputs = list(metrics.countedOutput("v", ([item * 2 for item in batch] + [0] for batch in inputs)))
    assert outputs == [[2, 4, 0], [6, 0]]
    total = metrics.total()
    assert (total["itemsIn", "v"], total["itemsOut", "v"], total["processors", "v"]) == (3, 5, 1)
    assert total["seconds", "v"] >= total["upstreamSeconds", "v"] >= 0


def test_the_accumulator_parameter_adds_counters_key_by_key():
    param = CountsAccumulatorParam()
    total = param.addInPlace(param.zero(Counter()), Counter({("itemsIn", "v"): 2}))
    total = param.addInPlace(total, Counter({("itemsIn", "v"): 3, ("seconds", "v"): 0.5}))
    assert total == Counter({("itemsIn", "v"): 5, ("seconds", "v"): 0.5})


def dag() -> DAG:
    graph = DAG()
    for name in ("source", "fused", "sink"):
        graph.newVertex(name, IdentityP())
    graph.edge(Edge.between(graph.getVertex("source"), graph.getVertex("fused")))
    graph.edge(Edge.between(graph.getVertex("fused"), graph.getVertex("sink")).partitioned(str).distributed())
    return graph


def counts() -> Counter:
    return Counter(
        {
            ("processors", "source"): 2, ("itemsOut", "source"): 10,
            ("processors", "fused"): 2, ("itemsIn", "fused"): 10, ("itemsOut", "fused"): 1,
            ("seconds", "fused"): 3.0, ("upstreamSeconds", "fused"): 1.0,
            ("stageIn", "fused", "map"): 10, ("stageOut", "fused", "map"): 10,
            ("stageIn", "fused", "filter"): 10, ("stageOut", "fused", "filter"): 1,
            ("processors", "sink"): 1, ("itemsIn", "sink"): 1, ("itemsOut", "sink"): 1,
            ("edgeItems", "fused", 0): 1, ("edgeBytes", "fused", 0): 42,
        }
    )


def test_job_metrics_summarize_vertices_stages_and_edges():
    metrics = JobMetrics.of("job", 1.5, dag(), counts(), {("fused", 0)})
    fused = metrics.vertex("fused")
    assert (fused.itemsIn, fused.itemsOut, fused.seconds, fused.processors) == (10, 1, 2.0, 2)
    assert [stage.name for stage in fused.stages] == ["map", "filter"]
    assert (metrics.stage("filter").itemsIn, metrics.stage("filter").itemsOut) == (10, 1)
    assert (metrics.stage("sink").itemsIn, metrics.stage("sink").itemsOut) == (1, 1)
    assert metrics.edges == (
        EdgeMetrics("source", "fused", 10, None),
        EdgeMetrics("fused", "sink", 1, 42),
    )
    text = metrics.format()
    assert "fused: 10 in, 1 out, 2.00 s busy in 2 processors" in text
    assert "    filter: 10 in, 1 out" in text
    assert "fused -> sink: 1 item, 42 bytes shuffled" in text
    assert "source -> fused: 10 items, not shuffled" in text


def test_asking_for_an_unknown_vertex_or_edge_names_it():
    metrics = JobMetrics.of("job", 1.5, dag(), counts(), set())
    with pytest.raises(KeyError, match="No vertex named 'nowhere'; there are: source, fused, sink"):
        metrics.vertex("nowhere")
    with pytest.raises(KeyError, match="no edge sink -> source"):
        metrics.edge("sink", "source")


def test_a_peeked_stage_counts_once():
    steps = (
        StatelessStep(StepKind.MAP, str, "map"),
        StatelessStep(StepKind.PEEK, str, "map"),
        StatelessStep(StepKind.FILTER, lambda text: text != "0", "filter"),
    )
    metrics = TaskMetrics()
    list(StatelessChainP(steps).batchFunction(ProcessorContext("fused", 0, 1, metrics=metrics))(iter([range(10)])))
    total = metrics.total()
    assert [(total["stageIn", "fused", s], total["stageOut", "fused", s]) for s in ("map", "filter")] == [
        (10, 10),
        (10, 9),
    ]


def test_a_vertex_of_one_stage_lists_no_fused_stages():
    single = counts() + Counter({("stageIn", "sink", "sink"): 1, ("stageOut", "sink", "sink"): 1})
    metrics = JobMetrics.of("job", 1.5, dag(), single, set())
    assert metrics.vertex("sink").stages == ()
    assert len(metrics.vertex("fused").stages) == 2
