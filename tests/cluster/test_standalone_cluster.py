"""The cluster set really runs on a cluster: a standalone master, two workers, their own JVMs."""

import json
import os
import pathlib
import urllib.request

from tests.cluster import WORKERS, executorCount
from tests.conftest import APP_NAME


def whereAmI(partition):
    """Yield the process id and working directory of the Python worker running this task."""
    yield os.getpid(), os.getcwd()


def masterStatus(cluster) -> dict:
    with urllib.request.urlopen(f"{cluster.webUi}/json/", timeout=10) as response:
        return json.load(response)


def test_the_session_is_the_one_app_of_a_master_with_two_one_core_workers(spark, standaloneCluster):
    status = masterStatus(standaloneCluster)
    assert spark.sparkContext.master == standaloneCluster.masterUrl
    assert status["aliveworkers"] == WORKERS and [w["cores"] for w in status["workers"]] == [1, 1]
    assert [(app["name"], app["cores"]) for app in status["activeapps"]] == [(APP_NAME, WORKERS)]
    assert executorCount(spark) == WORKERS
    assert spark.sparkContext.defaultParallelism == WORKERS


def test_two_tasks_at_once_run_in_python_workers_of_both_workers_executors(spark, standaloneCluster):
    tasks = spark.sparkContext.parallelize(range(WORKERS), WORKERS).barrier().mapPartitions(whereAmI)
    places = tasks.collect()
    pids = {pid for pid, _ in places}
    assert len(pids) == WORKERS and os.getpid() not in pids
    workDirectories = {
        directory
        for _, cwd in places
        for directory in standaloneCluster.workDirectories
        if pathlib.Path(cwd).is_relative_to(directory)
    }
    assert workDirectories == set(standaloneCluster.workDirectories), places
