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
import datetime
import json
import pathlib
import sys
from collections.abc import Callable

from benchmarks import markdown
from benchmarks.connect_server import connectServer
from benchmarks.inputs import PROJECT, Input, corpusInput
from benchmarks.machine import loadAverage, runHeader
from benchmarks.measure import runMeasured
from benchmarks.session import timed
from benchmarks.variants import SECOND_JOB
from benchmarks.words import split, summarize

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
