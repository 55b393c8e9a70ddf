"""The Spark runtime executes a physical plan: the one its session gives, or the one given."""

from collections import Counter

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.execution import executeDag, physicalPlanOn
from sparkjet.coredag.runtime.physical_plan import physicalPlan

pytestmark = pytest.mark.spark


class TagWithIndex(AbstractProcessor):
    """Emits ``(globalProcessorIndex, totalParallelism)`` for every item."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit((self.context.globalProcessorIndex, self.context.totalParallelism))


def taggingDag(listName: str) -> DAG:
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(30))))
    tagger = dag.newVertex("tagger", TagWithIndex)
    sink = dag.newVertex("sink", ListSinkP(listName), 1)
    return dag.edge(Edge.between(source, tagger).distributed()).edge(Edge.between(tagger, sink))


def test_a_job_runs_the_physical_plan_its_session_gives(spark):
    dag = taggingDag("planned")
    outcome = executeDag(spark, dag, "planned")
    assert physicalPlanOn(spark, dag).vertex("tagger").parallelism == 1  # a small job
    assert Counter(outcome.lists["planned"]) == Counter({(0, 1): 30})


def test_a_given_physical_plan_is_obeyed(spark):
    dag = taggingDag("given")
    plan = physicalPlan(dag, 3)
    outcome = executeDag(spark, dag, "given", plan=plan)
    assert Counter(index for index, _ in outcome.lists["given"]).keys() == {0, 1, 2}
    assert {total for _, total in outcome.lists["given"]} == {3}
    assert outcome.metrics.edge("source", "tagger").shuffleBytes > 0
    assert outcome.metrics.edge("tagger", "sink").shuffleBytes is None
