"""The physical plan, a pure step: each vertex's parallelism and loop, each edge's exchange."""

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, AggregateOperation, DagError, Edge
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT
from sparkjet.coredag.processors.aggregation import AccumulateByKeyP, AggregateP, CombineByKeyP
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.physical_plan import SMALL_JOB_BYTES, Loop, measureInputBytes, physicalPlan

DEFAULT = LOCAL_PARALLELISM_USE_DEFAULT
COUNT = AggregateOperation(int, lambda total, _: total + 1, lambda a, b: a + b)


class Doubler(AbstractProcessor):
    """A user processor."""

    def tryProcess0(self, item):
        return self.tryEmit(item * 2)


def chain(*vertices, edgeOf=lambda e: e) -> tuple[DAG, list[Edge]]:
    """Return a DAG of ``(name, supplier, parallelism)`` vertices in a line, and its edges."""
    dag = DAG()
    made = [dag.newVertex(name, supplier, parallelism) for name, supplier, parallelism in vertices]
    edges = [edgeOf(Edge.between(a, b)) for a, b in zip(made, made[1:])]
    for edge in edges:
        dag.edge(edge)
    return dag, edges


def wordCountDag() -> DAG:
    dag = DAG()
    source = dag.newVertex("items", ItemsP(("a b", "b")), DEFAULT)
    words = dag.newVertex("fused(flat-map, filter)", Doubler, DEFAULT)
    prepare = dag.newVertex("count-prepare", AccumulateByKeyP(str, COUNT, "count"), DEFAULT)
    combine = dag.newVertex("count", CombineByKeyP(COUNT, "count"), DEFAULT)
    sink = dag.newVertex("list", ListSinkP("counts"), 1)
    dag.edge(Edge.between(source, words)).edge(Edge.between(words, prepare).partitioned(str))
    dag.edge(Edge.between(prepare, combine).distributed().partitioned(lambda pair: pair[0]))
    return dag.edge(Edge.between(combine, sink))


def test_a_small_job_runs_its_default_parallelism_vertices_as_one_processor():
    dag = wordCountDag()
    plan = physicalPlan(dag, 4, {"items": SMALL_JOB_BYTES - 1})
    assert {v.name: v.parallelism for v in plan.vertices} == dict.fromkeys(
        ["items", "fused(flat-map, filter)", "count-prepare", "count", "list"], 1
    )
    assert plan.defaultParallelism == 1 and plan.sessionParallelism == 4
    assert plan.vertex("items").origin == "a small job"
    assert all(e.exchange is Exchange.NARROW for e in plan.edges)


@pytest.mark.parametrize(
    "inputBytes", [{"items": SMALL_JOB_BYTES}, {"items": None}, None], ids=["big", "unknown", "unmeasured"]
)
def test_a_job_not_known_to_be_small_runs_at_the_sessions_parallelism(inputBytes):
    plan = physicalPlan(wordCountDag(), 4, inputBytes)
    assert [v.parallelism for v in plan.vertices] == [4, 4, 4, 4, 4]
    assert plan.vertex("count").origin == "the default"
    assert plan.vertex("list").origin == "beside its upstream"


def test_measure_input_bytes_asks_each_source_and_knows_nothing_of_a_user_source():
    dag, _ = chain(("items", ItemsP((1, 2, 3)), 2), ("user", Doubler, 2))
    assert measureInputBytes(dag) == {"items": ItemsP((1, 2, 3)).inputBytes()}
    userSource = DAG()
    userSource.newVertex("user", Doubler)
    assert measureInputBytes(userSource) == {"user": None}


def test_a_list_sink_runs_beside_its_upstream_on_a_local_unicast_edge():
    dag, (edge,) = chain(("source", ItemsP(tuple(range(9))), 3), ("sink", ListSinkP("out"), 1))
    plan = physicalPlan(dag, 8)
    assert plan.vertex("sink").parallelism == 3 and plan.vertex("sink").origin == "beside its upstream"
    assert plan.exchangeOf(edge) is Exchange.NARROW


def test_a_list_sink_behind_a_distributed_edge_keeps_its_parallelism():
    dag, (edge,) = chain(
        ("source", ItemsP(tuple(range(9))), 3), ("sink", ListSinkP("out"), 1), edgeOf=Edge.distributed
    )
    plan = physicalPlan(dag, 8)
    assert plan.vertex("sink").parallelism == 1
    assert plan.exchangeOf(edge) is Exchange.SHUFFLED


EDGE_CASES = {
    "unicast-equal": (Edge.unicast, 3, 3, Exchange.NARROW, "a local unicast edge between equal parallelisms"),
    "unicast-fewer": (Edge.unicast, 4, 2, Exchange.COALESCED, "a local unicast edge into fewer processors, 4 -> 2"),
    "unicast-more": (Edge.unicast, 2, 5, Exchange.SHUFFLED, "a local unicast edge into more processors, 2 -> 5"),
    "into-one": (Edge.broadcast, 3, 1, Exchange.COALESCED, "a local edge into parallelism 1, from 3"),
    "one-to-one": (Edge.distributed, 1, 1, Exchange.NARROW, "parallelism 1 at both ends"),
    "partitioned": (lambda e: e.partitioned(str), 3, 3, Exchange.SHUFFLED, "a local partitioned edge: each key"),
    "distributed": (
        lambda e: e.distributed().partitioned(str), 2, 2, Exchange.SHUFFLED, "a distributed partitioned edge",
    ),
    "broadcast": (Edge.broadcast, 2, 3, Exchange.SHUFFLED, "a local broadcast edge: every processor gets every item"),
}


@pytest.mark.parametrize(
    ("edgeOf", "upstream", "downstream", "exchange", "reason"), EDGE_CASES.values(), ids=EDGE_CASES
)
def test_each_edge_is_narrow_coalesced_or_shuffled_with_its_reason(edgeOf, upstream, downstream, exchange, reason):
    dag, (edge, _) = chain(
        ("source", ItemsP((1, 2)), upstream), ("user", Doubler, downstream), ("sink", ListSinkP("x"), 1),
        edgeOf=lambda e: edgeOf(e) if e.sourceName == "source" else e,
    )
    planned = physicalPlan(dag, 8).edge(edge)
    assert planned.exchange is exchange
    assert planned.reason.startswith(reason)


def test_a_local_edge_into_a_prepare_vertex_stays_in_the_task_whatever_its_routing():
    dag, (edge,) = chain(
        ("source", ItemsP(("a",)), 3), ("prepare", AccumulateByKeyP(str, COUNT, "count"), 3),
        edgeOf=lambda e: e.partitioned(str),
    )
    planned = physicalPlan(dag, 8).edge(edge)
    assert (planned.exchange, planned.narrow) == (Exchange.NARROW, True)
    assert planned.reason == "a local edge into a prepare vertex, which accepts any routing"


def test_the_inputs_of_a_vertex_with_several_are_shuffled_keeping_narrow_routes():
    dag = DAG()
    a, b = dag.newVertex("a", ItemsP((1,)), 2), dag.newVertex("b", ItemsP((2,)), 2)
    join = dag.newVertex("join", Doubler, 2)
    dag.edge(Edge.between(a, join)).edge(Edge.from_(b).to(join, 1).partitioned(str))
    plan = physicalPlan(dag, 8)
    fromA, fromB = plan.edge(dag.getInboundEdges("join")[0]), plan.edge(dag.getInboundEdges("join")[1])
    assert (fromA.exchange, fromA.narrow) == (Exchange.SHUFFLED, True)
    assert (fromB.exchange, fromB.narrow) == (Exchange.SHUFFLED, False)
    assert fromA.reason.endswith("; one of 2 inputs of 'join', merged by priority")
    assert plan.shuffledEdges() == {("a", 0), ("b", 0)}


def test_a_user_processor_runs_the_cooperative_loop_and_a_standard_one_the_standard_loop():
    dag, _ = chain(("source", ItemsP((1,)), 2), ("user", Doubler, 2), ("total", AggregateP(COUNT, "n"), 1))
    plan = physicalPlan(dag, 8)
    assert [v.loop for v in plan.vertices] == [Loop.STANDARD, Loop.COOPERATIVE, Loop.STANDARD]


def test_a_standard_processor_with_inputs_it_cannot_tell_apart_runs_the_cooperative_loop():
    dag = DAG()
    a, b = dag.newVertex("a", ItemsP((1,)), 1), dag.newVertex("b", ItemsP((2,)), 1)
    total = dag.newVertex("total", AggregateP(COUNT, "n"), 1)
    dag.edge(Edge.between(a, total)).edge(Edge.from_(b).to(total, 1))
    assert physicalPlan(dag, 8).vertex("total").loop is Loop.COOPERATIVE


def test_a_user_processor_with_two_outbound_edges_emits_into_two_buckets():
    dag = DAG()
    source, user = dag.newVertex("source", ItemsP((1,)), 1), dag.newVertex("user", Doubler, 1)
    left, right = dag.newVertex("left", ListSinkP("l"), 1), dag.newVertex("right", ListSinkP("r"), 1)
    dag.edge(Edge.between(source, user)).edge(Edge.between(user, left)).edge(Edge.from_(user, 1).to(right))
    plan = physicalPlan(dag, 8)
    assert (plan.vertex("user").buckets, plan.vertex("source").buckets) == (2, 1)


def test_an_isolated_edge_into_fewer_processors_is_coalesced():
    """Jet 4.4 allows LP_upstream >= LP_downstream on an isolated edge: each upstream
    processor sends to one downstream processor, so the items stay in their tasks."""
    dag, (edge,) = chain(("source", ItemsP((1,)), 3), ("user", Doubler, 2), edgeOf=Edge.isolated)
    planned = physicalPlan(dag, 8).edge(edge)
    assert (planned.exchange, planned.narrow) == (Exchange.COALESCED, True)
    assert planned.reason == "a local isolated edge into fewer processors, 3 -> 2"


def test_a_multigraph_plans_each_edge_on_its_own():
    dag = DAG()
    a, b = dag.newVertex("a", ItemsP((1,)), 2), dag.newVertex("b", Doubler, 2)
    dag.edge(Edge.from_(a, 0).to(b, 0)).edge(Edge.from_(a, 1).to(b, 1).partitioned(str))
    plan = physicalPlan(dag, 8)
    first, second = (plan.edge(e) for e in dag.getInboundEdges("b"))
    assert (first.sourceOrdinal, first.narrow) == (0, True)
    assert (second.sourceOrdinal, second.narrow) == (1, False)
    assert plan.shuffledEdges() == {("a", 0), ("a", 1)}


def test_the_plan_reads_as_text_one_line_per_vertex_and_edge():
    assert physicalPlan(wordCountDag(), 2).lines() == [
        "Physical plan: default parallelism 2 (the session's)",
        "Vertices",
        "  items: parallelism 2 (the default), standard loop",
        "  fused(flat-map, filter): parallelism 2 (the default), cooperative loop",
        "  count-prepare: parallelism 2 (the default), standard loop",
        "  count: parallelism 2 (the default), standard loop",
        "  list: parallelism 2 (beside its upstream), standard loop",
        "Edges",
        "  items -> fused(flat-map, filter): kept in the task (a local unicast edge between equal parallelisms)",
        "  fused(flat-map, filter) -> count-prepare: kept in the task "
        "(a local edge into a prepare vertex, which accepts any routing)",
        "  count-prepare -> count: shuffled (a distributed partitioned edge: each key to one processor of the job)",
        "  count -> list: kept in the task (a local unicast edge between equal parallelisms)",
    ]


def test_a_small_jobs_heading_says_why():
    heading = physicalPlan(wordCountDag(), 4, {"items": 1234}).lines()[0]
    assert heading == (
        "Physical plan: default parallelism 1, a small job (its sources read 1,234 bytes, "
        f"under {SMALL_JOB_BYTES >> 20} MiB; the session's is 4)"
    )


def test_the_exchanges_by_edge_feed_the_picture():
    dag = wordCountDag()
    plan = physicalPlan(dag, 2)
    assert plan.exchanges()[("count-prepare", 0)] is Exchange.SHUFFLED
    assert [plan.exchangeOf(e) for e in dag.edges()] == [
        Exchange.NARROW, Exchange.NARROW, Exchange.SHUFFLED, Exchange.NARROW
    ]


def test_planning_a_dag_with_an_ordinal_gap_fails_as_iterating_it_does():
    dag = DAG()
    a, b, c = (dag.newVertex(name, ItemsP((1,)), 1) for name in "abc")
    dag.edge(Edge.from_(a, 0).to(c, 0)).edge(Edge.from_(b, 0).to(c, 2))
    with pytest.raises(DagError, match=r"Input ordinals for vertex c are not properly numbered. Actual: \[0, 2\]"):
        physicalPlan(dag, defaultParallelism=2)


def test_planning_an_empty_dag_fails():
    with pytest.raises(DagError, match="DAG must contain at least one vertex"):
        physicalPlan(DAG(), defaultParallelism=2)
