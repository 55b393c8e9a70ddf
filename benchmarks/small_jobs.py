"""Where the time of a small job goes in a warm session, and how it compares with the same job
written by hand on PySpark's RDDs (issue 28, small jobs).

``python -m benchmarks.small_jobs [--lines 1000] [--repetitions 15] [--results FILE]``

One process, one session (``Jet(master="local[2]")``), warmed up by a few jobs of each kind;
then each repetition counts the words of the corpus's first lines, written into a file, with
the word-count variants of ``python -m benchmarks`` (benchmarks/variants/), in alternating
order: the hand-written RDD job (``sc.textFile(dir).flatMap(split).filter(...).map((w, 1))
.reduceByKey(add).collect()``) and sparkjet's (tutorial 01's stages into ``Sinks.list``), timing
sparkjet's phases apart: planning, ``newJob(p).join()`` (its Spark jobs, the driver's work between them),
reading the list, ``job.metrics()`` and the HTML report (its picture and the rest). Spark's side
of the join comes from its status store: how many Spark jobs, stages and tasks it ran and their
tasks' run time. The report gives each phase's median and the ratios of the medians: the job
alone, the job with its metrics, and with its report too, each against the RDD job. Counts are
checked against a Counter.
"""

import argparse
import json
import pathlib
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable

from benchmarks.machine import describe, loadAverage
from benchmarks.markdown import head, row
from benchmarks.variants.rdd import countWords as rddWordCount
from benchmarks.variants.sparkjet import wordCountPipeline
from benchmarks.words import split
from sparkjet import Jet, plan
from sparkjet.coredag.model.metrics import counted
from sparkjet.planner.render import planSvg
from sparkjet.planner.report import reportHtml

PROJECT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tutorials" / "data" / "tinyshakespeare.txt"
MASTER = "local[2]"
WARM_UP = 3
BEGIN, END = "<!-- benchmarks.small_jobs: begin -->", "<!-- benchmarks.small_jobs: end -->"

PHASES = {
    "rdd": "hand-written RDD job",
    "planning": "sparkjet: planning (plan(p))",
    "join": "sparkjet: newJob(p).join()",
    "list": "sparkjet: reading the list",
    "metrics": "sparkjet: job.metrics()",
    "picture": "sparkjet report: the plan's picture (graphviz)",
    "report": "sparkjet report: the whole page, picture included",
}
"""The phases timed, by key, with what each is."""


def timed(phases: dict[str, list[float]], phase: str, work: Callable[[], object]) -> object:
    """Run ``work``, adding its seconds to ``phases[phase]``; return what it returned."""
    started = time.perf_counter()
    result = work()
    phases.setdefault(phase, []).append(time.perf_counter() - started)
    return result


def sparkSide(sc, group: str) -> dict[str, float]:
    """Return the Spark jobs, stages and tasks of job group ``group`` and their tasks' run time
    in seconds, from Spark's status store."""
    tracker = sc.statusTracker()
    jobs = [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(group)]
    stageIds = [stage for job in jobs if job is not None for stage in job.stageIds]
    store = sc._jsc.sc().statusStore()
    attempts = [store.lastStageAttempt(stage) for stage in stageIds]
    ran = [attempt for attempt in attempts if attempt.numCompleteTasks() > 0]
    return {
        "sparkJobs": len(jobs),
        "stages": len(ran),
        "tasks": sum(attempt.numCompleteTasks() for attempt in ran),
        "taskSeconds": sum(attempt.executorRunTime() for attempt in ran) / 1000,
    }


def sparkjetRun(jet: Jet, directory: str, phases: dict[str, list[float]], spark: list[dict]) -> list:
    """Run sparkjet's word count of ``directory`` once, timing its phases; return its counts."""
    p = wordCountPipeline(directory)
    planned = timed(phases, "planning", lambda: plan(p))
    before = len(jet.getList("counts"))
    job = jet.newJob(planned)
    timed(phases, "join", job.join)
    counts = timed(phases, "list", lambda: jet.getList("counts")[before:])
    metrics = timed(phases, "metrics", job.metrics)
    timed(phases, "picture", lambda: planSvg(planned, metrics, noted=False))
    timed(phases, "report", lambda: reportHtml(planned, metrics))
    spark.append(sparkSide(jet.spark().sparkContext, job.sparkJobGroup))
    return counts


def measure(lines: list[str], repetitions: int) -> dict:
    """Write ``lines`` into a file, warm a session up, then time ``repetitions`` runs of each
    job counting its words, alternating which goes first."""
    expected = Counter(word for line in lines for word in split(line) if word != "")
    with tempfile.TemporaryDirectory(prefix="sparkjet-small-jobs-") as directory:
        pathlib.Path(directory, "part.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        jet = Jet(master=MASTER)
        sc = jet.spark().sparkContext
        phases: dict[str, list[float]] = {}
        spark: list[dict] = []
        for _ in range(WARM_UP):
            rddWordCount(sc, directory)
            sparkjetRun(jet, directory, {}, [])
        for repetition in range(repetitions):
            runs = [
                lambda: timed(phases, "rdd", lambda: rddWordCount(sc, directory)),
                lambda: sparkjetRun(jet, directory, phases, spark),
            ]
            for run in runs if repetition % 2 == 0 else reversed(runs):
                counts = run()
                if Counter(dict(counts)) != expected:
                    raise RuntimeError(f"a word count of {len(lines)} lines is wrong: {len(counts)} words")
        jet.shutdown()
    return {"phases": phases, "spark": spark, "bytes": sum(len(line) + 1 for line in lines)}


def report(measured: dict, command: str, lines: int, load: tuple[str, str]) -> str:
    """Return the Markdown section of the medians, phase by phase, and the ratios."""
    median = {phase: statistics.median(times) for phase, times in measured["phases"].items()}
    spark = {key: statistics.median(run[key] for run in measured["spark"]) for key in measured["spark"][0]}
    machine = describe()
    job = median["planning"] + median["join"] + median["list"]
    withMetrics = job + median["metrics"]
    withReport = withMetrics + median["report"]
    rdd = median["rdd"]
    repetitions = len(measured["phases"]["rdd"])
    return "\n".join([
        BEGIN,
        "## Small jobs in a warm session: where the time goes",
        "",
        f"- **Command**: `{command}` (from the project directory), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **Machine**: {machine['CPU']}, {machine['RAM']} RAM, Java {machine['Java']}, PySpark {machine['PySpark']}, "
        f"sparkjet {machine['sparkjet commit'].split(',')[0]}; shared with other programs (load average at start / "
        f"end: {load[0]} / {load[1]}): medians of {repetitions} runs of each job, alternating, after {WARM_UP} "
        "of each to warm the session up",
        f"- **Job**: the word count of the corpus's first {lines:,} lines ({measured['bytes']:,} bytes) in one file, "
        f'on `Jet(master="{MASTER}")`; every run\'s counts checked against a Counter',
        "",
        *head(("phase", "median s"), {0}),
        *[row((label, f"{median[phase]:.3f}")) for phase, label in PHASES.items()],
        "",
        f"- sparkjet's join ran {counted(round(spark['sparkJobs']), 'Spark job')} of "
        f"{counted(round(spark['stages']), 'stage')} and {counted(round(spark['tasks']), 'task')}, whose run time "
        f"adds up to {spark['taskSeconds']:.3f} s (medians): the rest of "
        f"the join, {median['join'] - spark['taskSeconds']:.3f} s, is Spark's scheduling, the tasks' start and "
        "sparkjet's driver between its Spark jobs.",
        "",
        *head(("sparkjet's small job", "s", "÷ RDD job"), {0}),
        row(("planning, join, list", f"{job:.3f}", f"{job / rdd:.2f}×")),
        row(("and job.metrics()", f"{withMetrics:.3f}", f"{withMetrics / rdd:.2f}×")),
        row(("and the HTML report", f"{withReport:.3f}", f"{withReport / rdd:.2f}×")),
        END,
    ]) + "\n"


def withSection(document: str, section: str) -> str:
    """Return ``document`` with this benchmark's section, between BEGIN and END, replaced by
    ``section``, or ``section`` appended when it has none."""
    mine = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", re.DOTALL)
    if mine.search(document):
        return mine.sub(lambda _: section, document, count=1)
    return f"{document.rstrip()}\n\n{section}" if document.strip() else section


def main(argv: list[str] | None = None) -> None:
    """Measure, print the section, and put it into ``--results`` if given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000, help="lines of the corpus to count (default 1000)")
    parser.add_argument("--repetitions", type=int, default=15, help="timed runs of each job (default 15)")
    parser.add_argument("--results", default=None, help="a Markdown file whose small-jobs section to replace")
    parser.add_argument("--json", default=None, help="a file to write every timing into")
    args = parser.parse_args(argv)
    lines = CORPUS.read_text(encoding="utf-8").splitlines()[: args.lines]
    load = loadAverage()
    measured = measure(lines, args.repetitions)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(measured, indent=1), encoding="utf-8")
    section = report(measured, "python -m benchmarks.small_jobs " + " ".join(sys.argv[1:] if argv is None else argv), args.lines, (load, loadAverage()))
    print(section)
    if args.results:
        path = pathlib.Path(args.results)
        path.write_text(withSection(path.read_text(encoding="utf-8") if path.exists() else "", section), encoding="utf-8")


if __name__ == "__main__":
    main()
