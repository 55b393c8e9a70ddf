"""Planning time of a pipeline of 1000 chained map stages: no JVM, no Spark."""

import time

from sparkjet import Pipeline, Sinks, Sources, plan

STAGES = 1000
ROUNDS = 5


def increment(number: int) -> int:
    """The function of every map stage."""
    return number + 1


def chainedPipeline(stages: int) -> Pipeline:
    """Return items -> ``stages`` maps -> list sink."""
    p = Pipeline.create()
    stage = p.readFrom(Sources.items(range(10)))
    for _ in range(stages):
        stage = stage.map(increment)
    stage.writeTo(Sinks.list("out"))
    return p


def measure(_directory: str) -> dict:
    """Time building the pipeline and ``planner.plan`` separately, ``ROUNDS`` times each."""
    builds, plans = [], []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        pipeline = chainedPipeline(STAGES)
        built = time.perf_counter()
        dag = plan(pipeline)
        plans.append(time.perf_counter() - built)
        builds.append(built - started)
    return {
        "stages": STAGES,
        "buildSeconds": builds,
        "planSeconds": plans,
        "vertices": len(dag.vertices()),
    }
