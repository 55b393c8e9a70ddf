"""Where a Spark Connect session's first sparkjet job spends its time: on one fresh server, three
sessions in turn (the server's first; a new one, sparkjet first; a new one, a hand-written
``mapInArrow`` word count first), each job timed whole and in its phases (shipping sparkjet as the
session's artifacts, the probe of the server's default parallelism, the run), over the corpus
once (1 MiB), so that the one-off costs stand out.

``python -m benchmarks.connect_first_job [--report FILE]`` (from the project directory)."""

import argparse
import contextlib
import datetime
import functools
import pathlib
import time

from benchmarks import markdown
from benchmarks.connect import checked, mapInArrowCount
from benchmarks.connect_server import connectServer
from benchmarks.inputs import corpusInput
from benchmarks.machine import loadAverage, runHeader
from benchmarks.variants import sparkjet as sparkjetVariant

SESSIONS = (
    ("the server's first session", ("sparkjet", "sparkjet", "mapInArrow", "mapInArrow")),
    ("a new session, sparkjet first", ("sparkjet", "sparkjet", "mapInArrow", "mapInArrow")),
    ("a new session, mapInArrow first", ("mapInArrow", "mapInArrow", "sparkjet", "sparkjet")),
)
PHASES = ("ship", "parallelism probe", "run")


@contextlib.contextmanager
def phaseTimers(phases: dict[str, float]):
    """Add the seconds spent in each of sparkjet's Connect phases to ``phases`` while in the block."""
    from sparkjet.coredag.runtime import shipping
    from sparkjet.coredag.runtime.connect_engine import ConnectEngine

    timed = {(shipping, "shipToServer"): "ship", (ConnectEngine, "_defaultParallelism"): "parallelism probe",
             (ConnectEngine, "_run"): "run"}  # fmt: skip
    originals = {key: getattr(*key) for key in timed}

    def timer(original, label):
        @functools.wraps(original)
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                phases[label] = phases.get(label, 0.0) + time.perf_counter() - started
        return run

    for (owner, name), label in timed.items():
        setattr(owner, name, timer(originals[owner, name], label))
    try:
        yield
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


def measure(url: str, directory: str, expected: dict) -> list[list[str]]:
    """Run each session's jobs on the server at ``url``; return a table row per job."""
    from pyspark.sql import SparkSession

    from sparkjet import Jet

    rows = []
    for session, jobs in SESSIONS:
        spark = SparkSession.builder.remote(url).getOrCreate()
        jet = Jet(spark=spark)
        for number, name in enumerate(jobs, 1):
            phases: dict[str, float] = {}
            job = (lambda: sparkjetVariant.countWords(jet, directory)) if name == "sparkjet" else (
                lambda: mapInArrowCount(spark, directory))
            with phaseTimers(phases):
                started = time.perf_counter()
                counts = job()
                seconds = time.perf_counter() - started
            checked(name, counts, expected)
            rows.append([session, f"{number}: {name}", f"{seconds:.2f}",
                         *(f"{phases[phase]:.2f}" if phase in phases else "" for phase in PHASES)])  # fmt: skip
            print(" | ".join(rows[-1]), flush=True)
        spark.stop()
    return rows


def main(argv: list[str] | None = None) -> None:
    """Start a server on local[2], run the sessions, print (and write) the report."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.connect_first_job", description=__doc__)
    parser.add_argument("--workdir", default="/tmp/sparkjet-benchmarks", help="scratch directory")
    parser.add_argument("--report", help="also write the report here")
    options = parser.parse_args(argv)
    header = runHeader("benchmarks.connect_first_job", argv, datetime.datetime.now(datetime.UTC))
    workdir = pathlib.Path(options.workdir)
    corpus = corpusInput(workdir / "inputs", 1, 1)
    logs = workdir / "logs" / "connect-first-job"
    logs.mkdir(parents=True, exist_ok=True)
    with connectServer(logs) as url:
        rows = measure(url, corpus.directory, corpus.expected)
    lines = ["# A Spark Connect session's first sparkjet job", ""]
    lines += [f"- **{key}**: {value}" for key, value in header.items()]
    lines += [f"- **Load average at the end**: {loadAverage()}", ""]
    lines += markdown.head(("session", "job", "seconds", *(f"{phase} s" for phase in PHASES)), {0, 1})
    lines += [markdown.row(row) for row in rows]
    text = "\n".join(lines) + "\n"
    if options.report:
        pathlib.Path(options.report).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
