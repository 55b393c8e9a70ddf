"""Workers need nothing installed: on a cluster whose executors run a Python that sees neither
the checkout nor the driver's virtual environment, sparkjet ships itself and its jobs run."""

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from tests.conftest import CORPUS, PROJECT, tokenize

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

DRIVER = PROJECT / "tests" / "cluster" / "bare_driver.py"


@pytest.fixture(scope="module")
def seen(bareCluster, tmp_path_factory):
    """What bare_driver.py saw on the bare cluster (one driver process, two applications)."""
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYSPARK_GATEWAY_PORT")}
    environment.update(
        PYSPARK_PYTHON=str(bareCluster.python),
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARKJET_CACHE=str(tmp_path_factory.mktemp("shipped")),
    )
    finished = subprocess.run(
        [sys.executable, str(DRIVER), bareCluster.masterUrl, str(CORPUS.parent)],
        capture_output=True, text=True, env=environment, cwd=tmp_path_factory.mktemp("driver"), timeout=300,
    )
    assert finished.returncode == 0, finished.stderr[-5000:]
    seen = json.loads(finished.stdout.strip().splitlines()[-1])
    print(json.dumps(seen["seconds"]))
    return seen


def test_without_shipping_the_workers_cannot_import_sparkjet_nor_its_dependencies(seen, bareCluster):
    assert len({worker["pid"] for worker in seen["plain"]}) == 2
    for worker in seen["plain"]:
        assert worker["python"] == str(bareCluster.python)
        assert worker["modules"] == {
            name: f"ImportError: No module named '{name}'"
            for name in ("sparkjet", "attrs", "toolz", "cloudpickle", "graphviz", "mmh3")
        }


def test_a_given_session_gets_sparkjet_and_its_pure_python_dependencies_in_one_zip(seen):
    for worker in seen["given"]:
        modules = worker["modules"]
        for name in ("sparkjet", "attrs", "toolz", "cloudpickle", "graphviz"):
            assert re.search(r"/sparkjet-[0-9a-f]{16}\.zip/", modules[name]), (name, modules[name])
        assert modules["mmh3"].endswith(".so") and modules["C murmur3"] is True


def test_word_count_on_a_given_session_equals_counter(seen):
    assert seen["given word count"] == Counter(tokenize(CORPUS.read_text(encoding="utf-8")))


def test_a_session_sparkjet_starts_ships_at_start_and_its_daemon_imports_sparkjet_from_the_zip(seen):
    daemon, path = seen["conf"]["spark.python.daemon.module"], seen["conf"]["spark.executorEnv.PYTHONPATH"]
    assert daemon == "sparkjet.coredag.runtime.worker_daemon"
    shipped = path.split(":")[0]
    assert re.fullmatch(r"sparkjet-[0-9a-f]{16}\.zip", shipped)
    for worker in seen["started"]:
        for name in ("sparkjet", "attrs", "toolz", "cloudpickle", "graphviz"):
            assert f"/{shipped}/" in worker["modules"][name], (name, worker["modules"][name])


def test_word_count_aggregation_and_join_on_a_session_sparkjet_starts(seen):
    from tests.cluster.bare_driver import LEFT, RIGHT

    assert seen["word count"] == Counter(tokenize(CORPUS.read_text(encoding="utf-8")))
    sums = Counter()
    for n in range(1000):
        sums[f"key-{n % 7}"] += n
    assert seen["keyed sums"] == sorted([key, total] for key, total in sums.items())
    assert seen["joined"] == sorted([l[1], r[1]] for l in LEFT for r in RIGHT if l[0] == r[0])
