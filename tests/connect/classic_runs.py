"""Running a DAG of ``tests.connect.dags`` on an engine, for the Connect tests to compare the
two engines' lists and figures (the figures but for the times, which no two runs share)."""

from collections import Counter

from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.runtime.classic_engine import ClassicEngine
from sparkjet.coredag.runtime.physical_plan import physicalPlan

from tests.connect.dags import DAGS

TIMES = ("seconds", "upstreamSeconds")


def runOn(engine, name: str, parallelism: int) -> tuple[dict, Counter]:
    """Run DAG ``name`` on ``engine`` at ``parallelism``; return its lists and its figures."""
    dag = preflightDag(DAGS[name]())
    outcome = engine.runBatch(dag, physicalPlan(dag, parallelism), name, engine.jobControl(name))
    return outcome.lists, figuresOf(outcome.counts)


def figuresOf(counts: Counter) -> Counter:
    """Return ``counts`` without the times."""
    return Counter({key: value for key, value in counts.items() if key[0] not in TIMES})


def runOnClassicEngine(spark, name: str, parallelism: int) -> tuple[dict, Counter]:
    """Run DAG ``name`` on the classic engine of ``spark``."""
    return runOn(ClassicEngine(spark), name, parallelism)
