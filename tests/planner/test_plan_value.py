"""A plan is a frozen value made once: lowering records each vertex's role and the reasons, so
nothing reads them back from vertex names, and an unknown kind of stage is a PlanningError."""

import attrs
import pytest

from sparkjet.coredag.model.dag import DAG
from sparkjet.pipeline import AggregateOperations, JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.pipeline.stage import BatchStage
from sparkjet.pipeline.transforms import MapTransform, Transform
from sparkjet.planner import Jet, PlanningError, plan, planning
from sparkjet.planner.jet import watchingJobs
from sparkjet.planner.lowering import VertexRole, lowerToDag
from sparkjet.planner.planning import Plan, planOf
from sparkjet.planner.render import planToGraphviz
from sparkjet.planner.report import reportHtml
from tests.conftest import here
from tests.planner.test_peek import peekedPipeline
from tests.planner.test_render import oddNamesPipeline, severalVertexStages, wordCount
from tests.planner.test_report import madeUpMetrics
from tests.planner.test_report_names import namedPipeline


def everyKindPipeline() -> Pipeline:
    """A pipeline with a stage of each kind that lowers to more than one vertex (its joined
    tables fused chains), a rebalance and a merge."""
    p, numbers = severalVertexStages(lambda stage, n: stage.map(tuple).filter(bool))
    numbers.rebalance().map(str).merge(numbers.map(str)).writeTo(Sinks.logger())
    return p


PIPELINES = {
    "word count": wordCount,
    "named": lambda: namedPipeline(["s", "a", "b", "c", "d", "e"]),
    "odd names": oddNamesPipeline,
    "peeked": peekedPipeline,
    "every kind": everyKindPipeline,
}


def submittedPlan(p: Pipeline) -> Plan:
    """Return the plan of ``p`` submitted as a job (planned and checked, not run)."""
    with watchingJobs(runs=False) as jobs:
        Jet().newJob(p)
    return jobs[0].plan


# Planned once, a frozen value


def test_a_pipeline_extended_after_new_job_changes_nothing_about_the_jobs_plan():
    p = Pipeline.create()
    words = p.readFrom(Sources.items(["to", "be", "or"]))
    words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    planned = submittedPlan(p)
    dot, explained, named = planned.toDotString(), planned.explain(), planned.pipelineGraph()
    words.filter(lambda word: word != "or").setName("later").writeTo(Sinks.list("later"))
    p.setFusionEnabled(False)
    assert (planned.toDotString(), planned.explain(), planned.pipelineGraph()) == (dot, explained, named)
    assert "later" not in planned.stageVertices()
    assert "later" in plan(p).stageVertices()


def test_new_job_plans_once_and_its_picture_report_and_explanation_plan_no_more(monkeypatch):
    lowered = []
    monkeypatch.setattr(planning, "lowerToDag", lambda graph: lowered.append(graph) or lowerToDag(graph))
    planned = submittedPlan(wordCount())
    planToGraphviz(planned)
    reportHtml(planned, madeUpMetrics(planned))
    planned.explain()
    assert len(lowered) == 1


def test_the_plan_value_is_frozen():
    planned = plan(wordCount())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        planned.dag = DAG()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        planned.reasons = ()
    with pytest.raises(TypeError):
        planned.roles["items"] = VertexRole(("filter",))


def test_a_dag_built_by_hand_is_a_plan_whose_vertices_run_no_stage():
    dag = DAG()
    dag.newVertex("by hand", print)
    planned = planOf(dag)
    assert (planned.dag, planned.hasStages(), planned.reasons) == (dag, False, ())
    assert planned.vertexRoles() == {"by hand": VertexRole(())}
    assert planOf(planned) is planned


def test_something_else_is_neither_a_pipeline_nor_a_dag():
    with pytest.raises(TypeError, match=r"^Expected a Pipeline, a Core DAG or a Plan, got str: 'p'$"):
        planOf("p")


# Roles come from lowering


@pytest.mark.parametrize("name", PIPELINES)
def test_lowering_records_the_role_of_every_vertex(name):
    planned = plan(PIPELINES[name]())
    stages = {transform.name for transform in planned.pipelineGraph().transforms}
    assert set(planned.roles) == {vertex.name for vertex in planned}
    assert all(role.stages and set(role.stages) <= stages for role in planned.roles.values())


def test_a_stage_named_like_the_prepare_step_of_a_single_stage_aggregation_leaves_it_single_stage():
    p = Pipeline.create()
    items = p.readFrom(Sources.items([1, 2]))
    noCombine = attrs.evolve(AggregateOperations.counting(), combineFn=None)
    items.groupingKey(wholeItem()).aggregate(noCombine).setName("x").writeTo(Sinks.logger())
    items.map(str).setName("x-prepare").writeTo(Sinks.logger())
    planned = plan(p)
    assert (planned.vertexRoles()["x"], planned.vertexRoles()["x-prepare"]) == (
        VertexRole(("x",)), VertexRole(("x-prepare",))
    )
    logical = planned.explain().split("\n\nPhysical plan")[0]
    assert logical.endswith("\nWhy\n  `x`: single-stage aggregation: the operation has no combine")


def test_steps_of_stages_with_any_name_get_their_roles_from_lowering():
    p = Pipeline.create()
    items = p.readFrom(Sources.items([1, 2]))
    items.aggregate(AggregateOperations.counting()).setName("a\nb").writeTo(Sinks.logger())
    items.map(str).setName("a-collector1").writeTo(Sinks.logger())
    items.sort().setName("s\n").writeTo(Sinks.logger())
    roles = plan(p).vertexRoles()
    assert roles["a\nb-prepare"] == VertexRole(("a\nb",), "prepare")
    assert roles["a\nb"] == VertexRole(("a\nb",))
    assert roles["a-collector1"] == VertexRole(("a-collector1",))
    assert roles["s\n-collect"] == VertexRole(("s\n",), "collect")


def test_a_join_named_like_a_step_gets_its_steps_from_lowering():
    p = Pipeline.create()
    primary = p.readFrom(Sources.items([1])).setName("primary")
    side = p.readFrom(Sources.items([(1, "a")])).setName("side")
    clause = JoinClause.onKeys(lambda n: n, lambda entry: entry[0])
    primary.hashJoin(side, clause, lambda n, a: (n, a)).setName("j-prepare").writeTo(Sinks.logger())
    roles = plan(p).vertexRoles()
    assert roles["j-prepare-joiner"] == VertexRole(("j-prepare",), "joiner")
    assert roles["j-prepare-collector1"] == VertexRole(("j-prepare",), "collector1")


# Adding a stage kind


@attrs.frozen
class PivotTransform(Transform):
    """A kind of stage the planner does not know."""


def test_an_unknown_kind_of_stage_names_the_kind_the_stage_and_where_it_was_defined():
    p = Pipeline.create()
    items = p.readFrom(Sources.items([1]))
    pivot = PivotTransform("pivot")  # its definition site is this line, not attrs' __init__
    BatchStage(p, items.attachDownstream(pivot)).writeTo(Sinks.logger())
    message = (
        r"^Unknown transform: kind 'tests\.planner\.test_plan_value\.PivotTransform' of Stage 'pivot' "
        rf"\(defined at test_plan_value\.py:{here() - 4}\) has no lowering; register one with "
        r"@sparkjet\.planner\.lowering\.lowerStage\.register$"
    )
    with pytest.raises(PlanningError, match=message):
        plan(p)


@attrs.frozen
class ShoutTransform(MapTransform):
    """A user's own kind of map: lowered as a map, as singledispatch follows the MRO."""


def test_a_subclass_of_a_known_kind_is_lowered_as_that_kind():
    p = Pipeline.create()
    items = p.readFrom(Sources.items(["a"]))
    BatchStage(p, items.attachDownstream(ShoutTransform("shout", str.upper))).writeTo(Sinks.logger())
    planned = plan(p)
    steps = planned.getVertex("shout").processorSupplier.steps
    assert [(step.kind.value.label, step.fn) for step in steps] == [("map", str.upper)]
