"""Tutorial 06: start a standalone Spark cluster from the pyspark package and run tutorial 01 on it."""

import argparse
import contextlib
import json
import os
import pathlib
import re
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


def freePort() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def startDaemon(
    className: str, args: list[str], log: pathlib.Path, environment: dict[str, str] | None
) -> subprocess.Popen:
    """Start ``spark-class className args`` in a process group of its own, logging into ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        **(environment or {}),
    }
    with log.open("wb") as output:
        return subprocess.Popen(
            [str(SPARK_CLASS), className, *args],
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


def wordCountCommand(masterUrl: str, inputDirectory: str, top: int, svg: str) -> list[str]:
    """The ``sparkjet run --master`` command running tutorial 01 on the cluster."""
    sparkjet = pathlib.Path(sys.executable).parent / "sparkjet"
    scriptArgs = ["--input", inputDirectory, "--top", str(top), "--svg", svg]
    return [str(sparkjet), "run", "--master", masterUrl, str(WORD_COUNT), *scriptArgs]


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
    """Start a cluster, run the word count on it with ``sparkjet run --master``, stop the
    cluster; return the top words."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--top", type=int, default=10, help="how many words to print")
    parser.add_argument("--svg", default="word-count-plan.svg", help="where to draw the plan")
    parser.add_argument("--workers", type=int, default=2, help="how many one-core workers to start")
    parser.add_argument("--directory", help="where the cluster logs (default: a temporary directory)")
    args = parser.parse_args(argv)

    with clusterDirectory(args.directory) as directory:
        with standaloneCluster(pathlib.Path(directory), args.workers) as cluster:
            print(f"A master at {cluster.masterUrl} with {args.workers} workers; web UI {cluster.webUi}")
            command = wordCountCommand(cluster.masterUrl, args.input, args.top, args.svg)
            print(f"$ {shlex.join(command)}", flush=True)
            printed = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
            print(printed, end="")
        print("The cluster is stopped")
    return topWords(printed)


if __name__ == "__main__":
    main()
