"""Load: a pipeline of 1000 stages, and 200 small jobs submitted from 4 threads on one Jet."""

import concurrent.futures
import functools

import pytest

from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import plan

STAGES = 1000


def increment(item: int) -> int:
    """Each map stage's function."""
    return item + 1


def mapChain(stages: int, fused: bool) -> Pipeline:
    """items -> ``stages`` maps adding 1 -> list 'chain'."""
    p = Pipeline.create().setFusionEnabled(fused)
    stage = p.readFrom(Sources.items(range(100)))
    for _ in range(stages):
        stage = stage.map(increment)
    stage.writeTo(Sinks.list("chain"))
    return p


@pytest.mark.spark
def test_a_chain_of_1000_maps_fuses_into_one_vertex_and_runs(jet):
    p = mapChain(STAGES, fused=True)
    source, fused, sink = plan(p).vertices()
    assert fused.name.startswith("fused(map, map-2, ") and fused.name.endswith(", map-1000)")
    jet.newJob(p).join()
    assert sorted(jet.getList("chain")) == [item + STAGES for item in range(100)]


def test_a_chain_of_1000_maps_without_fusion_plans_a_vertex_each():
    assert len(plan(mapChain(STAGES, fused=False)).vertices()) == STAGES + 2


@pytest.mark.spark
def test_a_chain_of_200_vertices_runs_although_pyspark_nests_each_chain_into_one_function(jet):
    jet.newJob(mapChain(200, fused=False)).join()
    assert sorted(jet.getList("chain")) == [item + 200 for item in range(100)]


JOBS = 200
THREADS = 4


def times(factor: int, item: int) -> int:
    """The map function of job ``factor``."""
    return item * factor


def submitAndJoin(jet, number: int) -> tuple[str, list]:
    """Run job ``number``: its own items times its own factor into its own list."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(number, number + 5)))
        .map(functools.partial(times, number))
        .writeTo(Sinks.list(f"list-{number}"))
    )
    job = jet.newJob(p)
    job.join()
    return job.getName(), jet.getList(f"list-{number}")


@pytest.mark.spark
def test_200_jobs_from_4_threads_each_get_their_own_answer(jet):
    with concurrent.futures.ThreadPoolExecutor(THREADS) as threads:
        outcomes = list(threads.map(functools.partial(submitAndJoin, jet), range(JOBS)))
    names = [name for name, _ in outcomes]
    assert len(set(names)) == JOBS
    for number, (_, items) in enumerate(outcomes):
        assert sorted(items) == [item * number for item in range(number, number + 5)]
