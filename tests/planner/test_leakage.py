"""The leakage check: a stage that feeds nothing (other than a sink) is a planning error."""


import pytest

from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.pipeline.naming import makeNamesUnique
from sparkjet.planner import PlanningError, plan
from sparkjet.planner.leakage import rejectDanglingStages
from tests.conftest import here

ADVICE = "attach a stage or a sink (writeTo) to each, or remove it"


def test_one_dangling_map_is_named_in_the_error():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.writeTo(Sinks.list("out"))
    source.map(str)
    line = here() - 1
    with pytest.raises(PlanningError) as raised:
        plan(p)
    assert str(raised.value) == (
        f"These transforms have nothing attached to them: [map] (defined at test_leakage.py:{line}); {ADVICE}"
    )


def test_several_dangling_stages_are_listed_in_creation_order_with_unique_names():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str)
    source.filter(bool).filter(bool)
    line = here() - 1
    with pytest.raises(PlanningError) as raised:
        plan(p)
    assert str(raised.value) == (
        "These transforms have nothing attached to them: [map, filter-2] "
        f"(defined at test_leakage.py:{line - 1}, test_leakage.py:{line}); {ADVICE}"
    )


def test_a_source_alone_is_dangling():
    p = Pipeline.create()
    p.readFrom(Sources.items([1]))
    line = here() - 1
    with pytest.raises(PlanningError) as raised:
        plan(p)
    assert str(raised.value) == (
        f"These transforms have nothing attached to them: [items] (defined at test_leakage.py:{line}); {ADVICE}"
    )


def test_sinks_are_not_dangling_and_the_check_returns_its_input():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.writeTo(Sinks.list("a"))
    source.map(str).writeTo(Sinks.logger())
    graph = makeNamesUnique(p.graph())
    assert rejectDanglingStages(graph) is graph


def test_planning_error_is_a_value_error():
    assert issubclass(PlanningError, ValueError)
