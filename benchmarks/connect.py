"""Word count on Spark Connect: sparkjet's Connect engine beside its classic engine and two
hand-written Connect DataFrame word counts, in one run, on one server and one input.

``python -m benchmarks.connect [--size-mib 100]`` builds the corpus input as ``benchmarks``
does, starts a Spark Connect server on ``local[2]`` in a process of its own (PySpark's
start-connect-server.sh, on 127.0.0.1, with a token), runs on it, from this process (a Connect
client, without a SparkContext): sparkjet's word count, a ``mapInArrow`` word count with the
shared tokenization, and one with Spark's ``split``/``explode``, each job twice; before them,
sparkjet's word count on a classic ``local[2]`` session in a fresh process (``benchmarks.variants``,
its job twice too: a Connect client's environment would make that session a Connect one); checks every count against the expected one and writes the report.
"""

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator

from benchmarks import markdown
from benchmarks.inputs import PROJECT, Input, corpusInput
from benchmarks.machine import loadAverage, runHeader
from benchmarks.measure import runMeasured
from benchmarks.session import MASTER, timed
from benchmarks.variants import SECOND_JOB
from benchmarks.words import split, summarize

SERVER_START_SECONDS = 600
CONNECT_SPARKJET = "sparkjet on Connect"
CLASSIC_SPARKJET = "sparkjet, classic local[2]"
MAP_IN_ARROW = "Connect mapInArrow"
BUILT_IN = "Connect split/explode"
ORDER = (
    "The classic run first, in a fresh process (its job 1 starts its Python workers). Then, on"
    " one fresh Connect server, in this order: sparkjet's two jobs (its job 1 also pays the"
    " server's first jobs: shipping sparkjet with addArtifacts, the Python workers' start, the"
    " JVM's warm-up), mapInArrow's two, split/explode's two. Job 2 is the same job again in the"
    " same session: the comparison on a warm server."
)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.connect", description=__doc__)
    parser.add_argument("--size-mib", type=int, default=100, help="corpus size in MiB (100)")
    parser.add_argument("--workdir", default="/tmp/sparkjet-benchmarks", help="scratch directory")
    parser.add_argument(
        "--report", default="/tmp/sparkjet-benchmarks/CONNECT.md", help="the report's file"
    )
    parser.add_argument("--timeout", type=float, default=3600, help="the classic run's limit, s")
    return parser.parse_args(argv)


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


def tokenize(batches):
    """``mapInArrow``'s function: each batch of lines becomes a batch of their non-empty words."""
    import pyarrow

    for batch in batches:
        lines = batch.column("value").to_pylist()
        words = [word for line in lines for word in split(line) if word]
        yield pyarrow.RecordBatch.from_pydict({"word": pyarrow.array(words, pyarrow.string())})


def mapInArrowCount(spark, directory: str) -> list[tuple[str, int]]:
    """The hand-written Connect word count with a Python UDF: ``mapInArrow`` then groupBy."""
    words = spark.read.text(directory).mapInArrow(tokenize, "word string")
    return [(row["word"], row["count"]) for row in words.groupBy("word").count().collect()]


def connectJobs(spark, jet, directory: str) -> dict[str, Callable[[], list[tuple[str, int]]]]:
    """The Connect word counts by name: sparkjet's and the two hand-written ones."""
    from benchmarks.variants import dataframe, sparkjet

    return {
        CONNECT_SPARKJET: lambda: sparkjet.countWords(jet, directory),
        MAP_IN_ARROW: lambda: mapInArrowCount(spark, directory),
        BUILT_IN: lambda: dataframe.countWords(spark, directory),
    }


def checked(name: str, counts: list[tuple[str, int]], expected: dict) -> None:
    """Refuse counts whose summary differs from the expected one."""
    summary = summarize(counts)
    if summary != expected:
        raise SystemExit(f"{name}: counts {summary} differ from the expected {expected}")


def measureConnect(url: str, corpus: Input) -> dict[str, list[float]]:
    """Run each Connect word count twice on the server at ``url``; return its two job times."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from sparkjet import Jet

    spark = SparkSession.builder.remote(url).getOrCreate()
    jet = Jet(spark=spark)
    times = {}
    for name, job in connectJobs(spark, jet, corpus.directory).items():
        times[name] = []
        for _ in range(2):
            seconds, counts = timed(job)
            checked(name, counts, corpus.expected)
            times[name].append(seconds)
            print(f"{name}: {seconds:.2f} s, counts ok", flush=True)
    if SparkContext._active_spark_context is not None:
        raise SystemExit("a classic SparkContext started in the Connect client")
    spark.stop()
    return times


def measureClassic(corpus: Input, workdir: pathlib.Path, timeout: float) -> list[float]:
    """Run ``benchmarks.variants``' sparkjet word count, two jobs, in a fresh process."""
    result, log = workdir / "results" / "connect-classic.json", workdir / "logs" / "connect-classic.log"
    result.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "benchmarks.variants", "word-count", "sparkjet",
            corpus.directory, str(result), SECOND_JOB]  # fmt: skip
    finished = runMeasured(argv, str(PROJECT), log, timeout, 0)
    if finished.returncode != 0:
        raise SystemExit(f"{CLASSIC_SPARKJET} failed ({finished.returncode}); its log: {log}")
    measured = json.loads(result.read_text())
    counts = {key: measured[key] for key in corpus.expected}
    if counts != corpus.expected:
        raise SystemExit(f"{CLASSIC_SPARKJET}: counts {counts} differ from {corpus.expected}")
    print(f"{CLASSIC_SPARKJET}: {measured['jobSeconds']:.2f} s, counts ok", flush=True)
    return [measured["jobSeconds"], measured["secondJobSeconds"]]


def report(header: dict[str, str], corpus: Input, times: dict[str, list[float]], load: str) -> str:
    """Return the Markdown report: the header, the times and ratios, the targets."""
    ours = times[CONNECT_SPARKJET]
    lines = ["# Word count on Spark Connect", ""]
    lines += [f"- **{key}**: {value}" for key, value in header.items()]
    lines += [f"- **Load average at the end**: {load}", f"- **Input**: {corpus.description}", ""]
    lines += [ORDER, ""]
    lines += markdown.head(("variant", "job 1 (s)", "job 2 (s)", "sparkjet-on-Connect ÷ it, job 1",
                            "÷ it, job 2"), {0})  # fmt: skip
    for name, (first, second) in times.items():
        lines.append(markdown.row([name, f"{first:.2f}", f"{second:.2f}",
                                   f"{ours[0] / first:.2f}×", f"{ours[1] / second:.2f}×"]))  # fmt: skip
    classic, arrow = times[CLASSIC_SPARKJET], times[MAP_IN_ARROW]
    lines += ["", "Targets (issue 36), job 1 / job 2:", ""]
    lines.append(f"- within 1.3× the classic engine: {verdicts(ours, classic, 1.3)}")
    lines.append(f"- faster than the hand-written mapInArrow: {verdicts(ours, arrow, 1.0)}")
    return "\n".join(lines) + "\n"


def verdicts(ours: list[float], theirs: list[float], bound: float) -> str:
    """Return each job's ratio and whether it is within ``bound``."""
    return " / ".join(
        f"{mine / other:.2f}×, {'met' if mine / other <= bound else 'missed'}"
        for mine, other in zip(ours, theirs, strict=True)
    )


def main(argv: list[str] | None = None) -> None:
    """Build the input, run the four word counts, write the report."""
    options = arguments(argv)
    began = datetime.datetime.now(datetime.UTC)
    header = runHeader("benchmarks.connect", argv, began)
    workdir = pathlib.Path(options.workdir)
    corpus = corpusInput(workdir / "inputs", options.size_mib, 1)
    logs = workdir / "logs" / "connect-server"
    logs.mkdir(parents=True, exist_ok=True)
    classic = measureClassic(corpus, workdir, options.timeout)  # before this process is a client
    with connectServer(logs) as url:
        times = measureConnect(url, corpus) | {CLASSIC_SPARKJET: classic}
    text = report(header, corpus, times, loadAverage())
    pathlib.Path(options.report).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
