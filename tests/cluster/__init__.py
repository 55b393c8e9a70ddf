"""The end-to-end set, run again on a standalone Spark cluster of two workers started for the run:
``pytest --spark-master=cluster -m cluster``."""

import contextlib
import pathlib
import runpy
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator

import attrs

PROJECT = pathlib.Path(__file__).resolve().parents[2]
CLUSTER_TUTORIAL = PROJECT / "tutorials" / "06_running_on_a_spark_cluster.py"

END_TO_END = (
    "tests/planner/test_jet_word_count.py",
    "tests/planner/test_batch_stages_jobs.py::test_hash_join",
    "tests/planner/test_batch_stages_jobs.py::test_inner_hash_join",
    "tests/coredag/test_routing_matrix.py",
    "tests/coredag/test_worker_daemon.py",
    "tests/tutorials/",
    "tests/cluster/",
)
"""Node-id prefixes of the end-to-end set; its tests that use ``spark`` are marked ``cluster``."""

WORKERS = 2
EXECUTOR_SECONDS = 60


def startCluster(directory):
    """Tutorial 06's cluster: ``WORKERS`` one-core workers whose executors import this project."""
    start = runpy.run_path(str(CLUSTER_TUTORIAL))["standaloneCluster"]
    return start(directory, WORKERS, environment={"PYTHONPATH": str(PROJECT)})


@attrs.frozen
class BareCluster:
    """A standalone cluster (tutorial 06's) and the Python its executors are to run."""

    cluster: object
    python: pathlib.Path

    @property
    def masterUrl(self) -> str:
        """The master's URL."""
        return self.cluster.masterUrl


@contextlib.contextmanager
def startBareCluster(directory: pathlib.Path) -> Iterator[BareCluster]:
    """``WORKERS`` one-core workers on which neither the project nor its dependencies can be
    imported: a venv of this Python's base interpreter (the same version, so PySpark's check
    passes) without pip and without site-packages, and a PYTHONPATH without the project."""
    environment = directory / "bare-python"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(environment)], check=True)
    python = environment / "bin" / "python"
    start = runpy.run_path(str(CLUSTER_TUTORIAL))["standaloneCluster"]
    workers = {"PYTHONPATH": "", "PYSPARK_PYTHON": str(python)}
    with start(directory, WORKERS, environment=workers) as cluster:
        yield BareCluster(cluster, python)


def clusterSession(cluster, appName: str, shipped: pathlib.Path):
    """A SparkSession on ``cluster`` once all its workers' executors have joined it, with the
    tests package shipped to them in ``shipped`` (a zip), as a user ships their own modules:
    sparkjet ships only itself to a cluster's executors."""
    from sparkjet.coredag.runtime.session import embeddedSession

    session = embeddedSession(cluster.masterUrl, appName=appName)
    driverPath = list(sys.path)
    session.sparkContext.addPyFile(str(zipOfTests(shipped)))
    sys.path[:] = driverPath
    awaitExecutors(session, WORKERS)
    return session


def zipOfTests(path: pathlib.Path) -> pathlib.Path:
    """Write the tests package's Python modules into the zip ``path``; return it."""
    with zipfile.ZipFile(path, "w") as archive:
        for module in sorted((PROJECT / "tests").rglob("*.py")):
            archive.write(module, module.relative_to(PROJECT))
    return path


def awaitExecutors(session, count: int) -> None:
    """Wait until ``count`` executors have joined ``session``, so every job can use every slot."""
    deadline = time.monotonic() + EXECUTOR_SECONDS
    while executorCount(session) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{executorCount(session)} of {count} executors joined the session within "
                f"{EXECUTOR_SECONDS} s: see the workers' logs"
            )
        time.sleep(0.2)


def executorCount(session) -> int:
    """The executors of ``session``: its block managers but the driver's."""
    return session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
