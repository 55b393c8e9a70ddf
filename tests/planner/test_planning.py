"""Planning is pure: no JVM, no change to the pipeline."""

import json
import os
import pathlib
import sys

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from tests.conftest import run

PROJECT = pathlib.Path(__file__).resolve().parents[2]

PLAN_IN_A_FRESH_INTERPRETER = """
import json, sys
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan

p = Pipeline.create()
(p.readFrom(Sources.files("/no/such/dir"))
   .flatMap(str.split)
   .filter(bool)
   .groupingKey(wholeItem())
   .aggregate(AggregateOperations.counting())
   .writeTo(Sinks.logger()))
dag = plan(p)
dag.validate()
print(json.dumps({
    "vertices": len(dag.vertices()),
    "jvmModules": sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j")),
}))
"""


def test_planning_starts_no_jvm_and_loads_neither_pyspark_nor_py4j():
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    done = run([sys.executable, "-c", PLAN_IN_A_FRESH_INTERPRETER], cwd=PROJECT, env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"vertices": 5, "jvmModules": []}


def test_planning_leaves_the_pipeline_and_its_stage_names_unchanged():
    p = Pipeline.create()
    first = p.readFrom(Sources.items([1, 2])).map(str)
    second = first.map(len)
    second.writeTo(Sinks.list("out"))
    before = p.graph()
    plan(p)
    assert p.graph() == before
    assert (first.name(), second.name()) == ("map", "map")


def test_planning_twice_gives_the_same_dag():
    p = Pipeline.create()
    p.readFrom(Sources.items("ab")).groupingKey(wholeItem()).aggregate(
        AggregateOperations.counting()
    ).writeTo(Sinks.logger())
    assert plan(p).toDotString() == plan(p).toDotString()


def test_planned_dag_passes_validation():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1, 2, 3]))
    source.map(str).writeTo(Sinks.list("a"))
    source.aggregate(AggregateOperations.summing(int)).writeTo(Sinks.logger())
    dag = plan(p)
    assert dag.validate() is dag
