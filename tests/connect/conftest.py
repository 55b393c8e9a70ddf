"""The Connect engine's tests: a Spark Connect server on ``local[2]`` in a process of its own,
started once per run, and a Connect session of it. This process stays a Connect client with no
SparkContext; the server's process runs the same DAGs on the classic engine when asked, so that
the tests compare the two engines' answers and figures."""

import base64
import os
import pickle
import subprocess
import sys
import threading

import pytest

from tests.conftest import CONNECT, PROJECT, freePort, givenJavaOptions
from tests.connect.classic_runs import runOnClassicEngine
from tests.connect.streams import runMicroBatchesOnClassicEngine

SERVER = PROJECT / "tests" / "connect" / "connect_server.py"
PORT_ATTEMPTS = 3
"""Ports tried: another process can take the free port found before the server binds it."""


class ConnectServer:
    """The server's process: its URL, and the classic engine's runs it makes on request."""

    def __init__(self, logDirectory) -> None:
        paths = [str(PROJECT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        with givenJavaOptions():  # a JVM for the whole run: its JIT's code cache fills up under the short-lived options
            environment = {
                name: value for name, value in os.environ.items()
                if name not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE")
            }
        environment |= {"PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(paths)}
        self._lock = threading.Lock()
        for attempt in range(PORT_ATTEMPTS):
            self.port = freePort()
            self._log = open(logDirectory / "server.log", "w")
            self._process = subprocess.Popen(
                [sys.executable, str(SERVER), str(self.port)], env=environment, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            )
            if self._process.stdout.readline() == "ready\n":
                return
            self._process.wait()
            self._log.close()
            log = (logDirectory / "server.log").read_text()
            if "available port" not in log or attempt == PORT_ATTEMPTS - 1:
                raise AssertionError(f"the Connect server did not start: {log[-3000:]}")

    @property
    def url(self) -> str:
        return f"sc://localhost:{self.port}"

    def runOnClassicEngine(self, name: str, parallelism: int) -> tuple[dict, object]:
        """Return the lists and figures of DAG ``name`` run at ``parallelism`` on the classic engine
        (raise the error it failed with)."""
        return self._onServer(runOnClassicEngine, name, parallelism)

    def runMicroBatchesOnClassicEngine(self, run):
        """Return what the micro-batches of ``run`` (a ``streams.StreamRun``) gave on the classic engine."""
        return self._onServer(runMicroBatchesOnClassicEngine, run)

    def _onServer(self, function, *arguments):
        """Return ``function(spark, *arguments)`` run in the server's process (raise the error it failed with)."""
        request = base64.b64encode(pickle.dumps((function, arguments))).decode("ascii")
        with self._lock:
            self._process.stdin.write(request + "\n")
            self._process.stdin.flush()
            result = pickle.loads(base64.b64decode(self._process.stdout.readline()))
        if isinstance(result, Exception):
            raise result
        return result

    def stop(self) -> None:
        self._process.stdin.close()
        self._process.terminate()
        self._process.wait(timeout=120)
        self._log.close()


@pytest.fixture(scope="session")
def comparingServer(request, tmp_path_factory):
    """The run's Spark Connect server (and classic engine), on local[2]: in the Connect set
    (``--spark-master=connect``) only, as the suite's Connect session is."""
    if request.config.getoption("--spark-master") != CONNECT:
        pytest.skip("needs a Spark Connect server: pytest --spark-master=connect -m connect")
    server = ConnectServer(tmp_path_factory.mktemp("connect-server"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect(comparingServer):
    """A Spark Connect session of the run's server."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(comparingServer.url).getOrCreate()
    yield session
    session.stop()
