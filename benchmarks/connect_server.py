"""A Spark Connect server on ``local[2]`` for the benchmarks, in a process of its own, so that the
benchmark's process is a client without a SparkContext."""

import contextlib
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

from benchmarks.inputs import PROJECT
from benchmarks.session import MASTER

SERVER_START_SECONDS = 600


def freePort() -> int:
    """Return a TCP port of 127.0.0.1 no one listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def connectServer(logDirectory: pathlib.Path) -> Iterator[str]:
    """A Spark Connect server on local[2] in its own process session; yield its URL (with its
    token); stopped at the end. Its Python workers run this Python with the project importable."""
    import pyspark

    home = pathlib.Path(pyspark.__file__).parent
    port, token = freePort(), uuid.uuid4().hex
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("SPARK_REMOTE")
    } | {
        "SPARK_HOME": str(home),
        "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
        "SPARK_PID_DIR": str(logDirectory),
        "SPARK_LOG_DIR": str(logDirectory),
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        str(home / "sbin" / "start-connect-server.sh"), "--wait", "--master", MASTER,
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=8",
    ]  # fmt: skip  # sparkjet's embedded session's shuffle partitions, as the classic run has
    log = logDirectory / "connect-server.log"
    with open(log, "w") as output:
        server = subprocess.Popen(
            command, env=environment, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        awaitListening(server, port, log)
        yield f"sc://localhost:{port}/;token={token}"  # localhost: the client then uses no TLS
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)


def awaitListening(server: subprocess.Popen, port: int, log: pathlib.Path) -> None:
    """Wait until the server accepts connections; refuse a server that ended or never listened."""
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline and server.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise SystemExit(
        f"the Spark Connect server did not listen on port {port} within {SERVER_START_SECONDS} s"
        f" (exit code {server.poll()}); its log, {log}:\n{log.read_text()[-3000:]}"
    )
