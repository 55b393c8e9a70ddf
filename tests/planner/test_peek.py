"""peek(): logs a stage's output on the worker, adds no vertex, changes no result."""

import logging
import re

import pytest

from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.processors.peeking import PeekingP
from sparkjet.coredag.processors.stateless import StepKind
from sparkjet.coredag.model.edge import RoutingPolicy
from sparkjet.pipeline import AggregateOperations, Pipeline, PipelineError, Sinks, Sources
from sparkjet.planner import plan

CONTEXT = ProcessorContext("v", 0, 1)


def peekedPipeline() -> Pipeline:
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(range(6)))
    numbers.map(lambda x: x * 10).peek(lambda x: x > 20, lambda x: f"big {x}").filter(bool).writeTo(
        Sinks.list("out")
    )
    numbers.aggregate(AggregateOperations.counting()).peek().writeTo(Sinks.list("n"))
    return p


def test_peek_adds_no_vertex():
    assert [v.name for v in plan(peekedPipeline())] == [
        "items", "fused(map, filter)", "aggregate-prepare", "listSink(out)", "aggregate", "listSink(n)",
    ]


def test_peek_of_a_fused_stage_logs_right_after_it(caplog):
    chain = plan(peekedPipeline()).getVertex("fused(map, filter)").processorSupplier
    assert [step.kind for step in chain.steps] == [StepKind.MAP, StepKind.PEEK, StepKind.FILTER]
    with caplog.at_level(logging.INFO, logger="sparkjet.peek.map"):
        assert list(chain.fastPath(CONTEXT)(iter(range(6)))) == [10, 20, 30, 40, 50]
    assert [r.getMessage() for r in caplog.records] == ["big 30", "big 40", "big 50"]


def test_peek_of_an_aggregation_wraps_the_vertex_emitting_its_result(caplog):
    supplier = plan(peekedPipeline()).getVertex("aggregate").processorSupplier
    assert isinstance(supplier, PeekingP)
    with caplog.at_level(logging.INFO, logger="sparkjet.peek.aggregate"):
        assert list(supplier.fastPath(CONTEXT)(iter([2, 4]))) == [6]
    assert [r.getMessage() for r in caplog.records] == ["6"]


# Jet's RebalanceBatchStageTest: peek before rebalance, never right after it


def test_peek_and_rebalance_by_key_and_map_then_the_edge_is_partitioned_and_distributed():
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).peek().rebalance(str).map(str).writeTo(Sinks.noop())
    dag = plan(p)
    assert isinstance(dag.getVertex("items").processorSupplier, PeekingP)
    (edge,) = dag.getInboundEdges("map")
    assert edge.isDistributed and edge.routing is RoutingPolicy.PARTITIONED


@pytest.mark.parametrize("keyFn", [None, str], ids=["round-robin", "by-key"])
def test_rebalance_and_peek_is_refused_as_jet_refuses_it(keyFn):
    rebalanced = Pipeline.create().readFrom(Sources.items(range(10))).rebalance(keyFn)
    with pytest.raises(PipelineError) as raised:
        rebalanced.peek()
    assert re.fullmatch(
        r"Stage 'items' \(defined at test_peek\.py:\d+\): peek\(\) not supported after rebalance\(\), as in Jet; "
        r"call peek\(\) before rebalance\(\): stage\.peek\(\)\.rebalance\(\)",
        str(raised.value),
    )


@pytest.mark.spark
def test_peeked_pipeline_gives_the_same_results(jet):
    jet.newJob(peekedPipeline()).join()
    assert sorted(jet.getList("out")) == [10, 20, 30, 40, 50]
    assert jet.getList("n") == [6]
