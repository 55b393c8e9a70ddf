"""Tutorial 06: start a standalone Spark cluster from the pyspark package and run tutorial 01 on it,
directly or through a Spark Connect server on the cluster."""

import argparse
import contextlib
import json
import os
import pathlib
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator

import attrs
import pyspark

HOST = "127.0.0.1"
SPARK_HOME = pathlib.Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
WORKER_MEMORY = "1g"
"""What each worker offers its executors: one executor of Spark's default 1g."""

DAEMON_MEMORY = "256m"
"""The heap of the master's and each worker's own JVM: they only keep the books."""

CONNECT_SERVER = SPARK_HOME / "sbin" / "start-connect-server.sh"
TOKEN_VARIABLE = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
"""Where a Spark Connect server reads the token it asks for, and PySpark's client the token of a
URL that names none: so the token is in no command line."""

CLIENT_VARIABLES = ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE")
"""What makes PySpark a Spark Connect client: the daemons, the server and the word count's
process get none of them from this process, only what the script gives them."""

STARTUP_SECONDS = 90
WORD_COUNT = pathlib.Path(__file__).resolve().parent / "01_word_count.py"
BUNDLED_CORPUS = WORD_COUNT.parent / "data"
COUNT_LINE = re.compile(r"^\s+(\d+)  (\S+)$", re.MULTILINE)
"""A line of tutorial 01's top words: the count, right-aligned, then the word."""


@attrs.frozen
class StandaloneCluster:
    """A running standalone cluster: its master's URL, its web UI and each worker's directory."""

    masterUrl: str
    webUi: str
    workDirectories: tuple[pathlib.Path, ...]


@attrs.frozen
class ConnectServer:
    """A running Spark Connect server: the URL its clients reach it at and the token it asks for."""

    url: str
    token: str = attrs.field(repr=False)


@contextlib.contextmanager
def standaloneCluster(
    directory: pathlib.Path, workers: int = 2, environment: dict[str, str] | None = None
) -> Iterator[StandaloneCluster]:
    """Start a master and ``workers`` one-core workers on 127.0.0.1, each a JVM of the pyspark
    package logging into ``directory``; stop every process they started when the block ends."""
    masterPort, webUiPort = freePort(), freePort()
    masterUrl, webUi = f"spark://{HOST}:{masterPort}", f"http://{HOST}:{webUiPort}"
    workDirectories = tuple(directory / f"worker-{number}" for number in range(1, workers + 1))
    daemons: list[subprocess.Popen] = []
    try:
        masterArgs = ["--host", HOST, "--port", str(masterPort), "--webui-port", str(webUiPort)]
        daemons.append(startDaemon(MASTER_CLASS, masterArgs, directory / "master.log", environment))
        awaitMaster(webUi, lambda status: status["status"] == "ALIVE", daemons, directory)
        for workDirectory in workDirectories:
            workerArgs = [masterUrl, "--host", HOST, "--cores", "1", "--memory", WORKER_MEMORY]
            workerArgs += ["--webui-port", "0", "--work-dir", str(workDirectory)]
            log = workDirectory.with_suffix(".log")
            daemons.append(startDaemon(WORKER_CLASS, workerArgs, log, environment))
        awaitMaster(webUi, lambda status: status["aliveworkers"] == workers, daemons, directory)
        yield StandaloneCluster(masterUrl, webUi, workDirectories)
    finally:
        stopDaemons(daemons)


@contextlib.contextmanager
def connectServer(directory: pathlib.Path, masterUrl: str) -> Iterator[ConnectServer]:
    """Start a Spark Connect server whose master is ``masterUrl``, listening on 127.0.0.1 alone
    for a token of its own, its Python workers running this Python, logging into
    ``directory``/connect-server.log; stop it when the block ends."""
    port, token = freePort(), secrets.token_hex(16)
    command = [str(CONNECT_SERVER), "--wait", "--master", masterUrl]
    command += ["--conf", f"spark.connect.grpc.binding.address={HOST}"]
    command += ["--conf", f"spark.connect.grpc.binding.port={port}"]
    variables = {
        "PYSPARK_PYTHON": sys.executable,
        TOKEN_VARIABLE: token,
        "SPARK_LOG_DIR": str(directory),
        "SPARK_PID_DIR": str(directory),
    }
    server = startProcess(command, directory / "connect-server.log", variables)
    try:
        awaitListening(port, server, directory)
        yield ConnectServer(f"sc://localhost:{port}/", token)
    finally:
        stopDaemons([server])


def freePort() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def startDaemon(
    className: str, args: list[str], log: pathlib.Path, environment: dict[str, str] | None
) -> subprocess.Popen:
    """Start ``spark-class className args`` in a process group of its own, logging into ``log``."""
    daemonMemory = {"SPARK_DAEMON_MEMORY": DAEMON_MEMORY, **(environment or {})}
    return startProcess([str(SPARK_CLASS), className, *args], log, daemonMemory)


def startProcess(command: list[str], log: pathlib.Path, environment: dict[str, str]) -> subprocess.Popen:
    """Start a program of the pyspark package in a process group of its own, logging into
    ``log``, with ``SPARK_HOME`` set to the package and 127.0.0.1 as its address."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = withoutClient({"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": HOST, **environment})
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def masterStatus(webUi: str) -> dict | None:
    """Return what the master's web UI says of the cluster, or None while it does not answer."""
    try:
        with urllib.request.urlopen(f"{webUi}/json/", timeout=5) as response:
            return json.load(response)
    except OSError:
        return None


def awaitMaster(
    webUi: str, isReady: Callable[[dict], bool], daemons: list[subprocess.Popen], directory: pathlib.Path
) -> None:
    """Wait until the master's status satisfies ``isReady``; fail if a daemon exits or time is up."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        status = masterStatus(webUi)
        if status is not None and isReady(status):
            return
        if any(daemon.poll() is not None for daemon in daemons):
            raise RuntimeError(f"A Spark daemon exited while the cluster started{logTails(directory)}")
        time.sleep(0.5)
    raise RuntimeError(
        f"The standalone cluster was not ready within {STARTUP_SECONDS} s{logTails(directory)}"
    )


def awaitListening(port: int, server: subprocess.Popen, directory: pathlib.Path) -> None:
    """Wait until something listens on ``port``; fail if the server exits or time is up."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex((HOST, port)) == 0:
                return
        if server.poll() is not None:
            raise RuntimeError(f"The Spark Connect server exited as it started{logTails(directory)}")
        time.sleep(0.5)
    raise RuntimeError(
        f"The Spark Connect server did not listen within {STARTUP_SECONDS} s{logTails(directory)}"
    )


def logTails(directory: pathlib.Path, lines: int = 10) -> str:
    """The last ``lines`` lines of every daemon log in ``directory``, for an error message."""
    tails = [
        f"\n--- {log}:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        for log in sorted(directory.glob("*.log"))
    ]
    return "".join(tails)


def stopDaemons(daemons: list[subprocess.Popen], graceSeconds: float = 20) -> None:
    """Stop each daemon's process group (a worker's executors and Python workers included):
    SIGTERM first, SIGKILL to what is left after ``graceSeconds``."""
    for daemon in daemons:
        signalGroup(daemon, signal.SIGTERM)
    deadline = time.monotonic() + graceSeconds
    for daemon in daemons:
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(max(0.0, deadline - time.monotonic()))
        signalGroup(daemon, signal.SIGKILL)
        daemon.wait()


def signalGroup(daemon: subprocess.Popen, signalNumber: int) -> None:
    """Send ``signalNumber`` to every process of the daemon's group, if any is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(daemon.pid, signalNumber)


def wordCountCommand(target: list[str], inputDirectory: str, top: int, svg: str) -> list[str]:
    """The ``sparkjet run`` command running tutorial 01 where ``target`` says: ``--master URL``
    (on the cluster) or ``--remote URL`` (through a Spark Connect server)."""
    sparkjet = pathlib.Path(sys.executable).parent / "sparkjet"
    scriptArgs = ["--input", inputDirectory, "--top", str(top), "--svg", svg]
    return [str(sparkjet), "run", *target, str(WORD_COUNT), *scriptArgs]


def runShown(command: list[str], environment: dict[str, str], shown: str = "") -> str:
    """Print ``command`` (after ``shown``, what it gets in its environment), run it with this
    process's environment, as no Spark Connect client, and ``environment`` over it; print and
    return what it printed."""
    print(f"$ {shown}{shlex.join(command)}", flush=True)
    printed = subprocess.run(
        command, env=withoutClient(environment), check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    print(printed, end="")
    return printed


def withoutClient(environment: dict[str, str]) -> dict[str, str]:
    """This process's environment but ``CLIENT_VARIABLES``, with ``environment`` over it."""
    inherited = {name: value for name, value in os.environ.items() if name not in CLIENT_VARIABLES}
    return {**inherited, **environment}


def connectReason(asked: bool) -> str | None:
    """Why the word count goes through Spark Connect: ``--connect``, or PySpark's own settings
    of a Connect client (``SPARK_REMOTE``, ``spark.api.mode``); None: it runs on the cluster."""
    if asked:
        return "--connect"
    if os.environ.get("SPARK_REMOTE"):
        return "SPARK_REMOTE is set"
    if os.environ.get("SPARK_API_MODE", "").strip().lower() == "connect":
        return "SPARK_API_MODE is connect"
    return None


def wordCountThroughConnect(directory: pathlib.Path, masterUrl: str, scriptArgs: tuple) -> str:
    """Start a Spark Connect server on the cluster, run the word count through it with
    ``sparkjet run --remote``, stop the server; return what the word count printed."""
    with connectServer(directory, masterUrl) as server:
        print(f"A Spark Connect server at {server.url} on that master, asking for a token of its own")
        command = wordCountCommand(["--remote", server.url], *scriptArgs)
        return runShown(command, {TOKEN_VARIABLE: server.token}, shown=f"{TOKEN_VARIABLE}=<token> ")


def topWords(printed: str) -> list[tuple[str, int]]:
    """The ``(word, count)`` lines tutorial 01 printed, in its order."""
    return [(word, int(count)) for count, word in COUNT_LINE.findall(printed)]


def clusterDirectory(path: str | None) -> contextlib.AbstractContextManager:
    """``path`` as a directory that stays, or a temporary one removed at the end."""
    if path is None:
        return tempfile.TemporaryDirectory(prefix="sparkjet-cluster-", ignore_cleanup_errors=True)
    pathlib.Path(path).mkdir(parents=True, exist_ok=True)
    return contextlib.nullcontext(path)


def main(argv: list[str] | None = None) -> list[tuple[str, int]]:
    """Start a cluster, run the word count on it with ``sparkjet run --master``, or through a
    Spark Connect server on it with ``sparkjet run --remote``, stop everything; return the top
    words."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--top", type=int, default=10, help="how many words to print")
    parser.add_argument("--svg", default="word-count-plan.svg", help="where to draw the plan")
    parser.add_argument("--workers", type=int, default=2, help="how many one-core workers to start")
    parser.add_argument("--directory", help="where the cluster logs (default: a temporary directory)")
    parser.add_argument(
        "--connect",
        action="store_true",
        help="run the word count through a Spark Connect server on the cluster (the default where "
        "SPARK_REMOTE is set or SPARK_API_MODE is connect)",
    )
    args = parser.parse_args(argv)
    reason = connectReason(args.connect)
    if reason is not None and reason != "--connect":
        print(f"{reason}, so the word count goes through Spark Connect: a server this script starts on its cluster")
    scriptArgs = (args.input, args.top, args.svg)

    with clusterDirectory(args.directory) as directory:
        with standaloneCluster(pathlib.Path(directory), args.workers) as cluster:
            print(f"A master at {cluster.masterUrl} with {args.workers} workers; web UI {cluster.webUi}")
            if reason is None:
                printed = runShown(wordCountCommand(["--master", cluster.masterUrl], *scriptArgs), {})
            else:
                printed = wordCountThroughConnect(pathlib.Path(directory), cluster.masterUrl, scriptArgs)
        print("The cluster is stopped" if reason is None else "The server and the cluster are stopped")
    return topWords(printed)


if __name__ == "__main__":
    main()
