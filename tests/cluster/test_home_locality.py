"""A keyed stream processor's tasks go back to the executor whose Python worker keeps it alive
(issue 26): on a cluster of two workers on two loopback hosts, the benchmark's running count at
four partitions over eight micro-batches (``python -m benchmarks.home_locality``). Without the
home RDD Spark placed 320 of 576 (56%) where their partition ran before."""

import os
import re
import subprocess
import sys

import pytest

from benchmarks.home_locality import STAYED_LINE
from tests.conftest import PROJECT

pytestmark = pytest.mark.cluster


def test_a_keyed_processor_s_next_task_runs_where_its_processor_is_kept(request):
    if request.config.getoption("--spark-master") != "cluster":
        pytest.skip("starts a cluster of its own: pytest --spark-master=cluster -m cluster")
    ownSession = {key: value for key, value in os.environ.items() if not key.startswith("PYSPARK_GATEWAY_")}
    finished = subprocess.run(
        [sys.executable, "-m", "benchmarks.home_locality", "--micro-batches", "8"],
        capture_output=True, text=True, cwd=PROJECT, env=ownSession, timeout=600,
    )
    assert finished.returncode == 0, finished.stderr[-5000:]
    pattern = STAYED_LINE.format(stayed=r"(\d+)", total=r"(\d+)", executors=r"(\d+)")
    stayed, total, executors = map(int, re.fullmatch(pattern, finished.stdout.splitlines()[-1]).groups())
    assert total == 7 * 64 and executors == 2
    assert stayed / total >= 0.9, f"{stayed} of {total} stayed on their executor"
