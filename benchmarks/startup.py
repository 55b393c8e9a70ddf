"""Where the time of a first word count in a fresh process goes (issue 17, point 7), and what
Spark's web UI adds to it.

``python -m benchmarks.startup [--repetitions 5] [--variants before,no-ui,ui] [--results FILE] [--nice N]``

Each repetition runs every variant once, in a fresh process, in rotated order; the process
counts the words of the bundled corpus (tutorial 01's pipeline, local[2]) and times its phases:
the interpreter's start, importing sparkjet (the pipeline API), importing its runtime (PySpark),
starting the JVM (PySpark's ``launch_gateway``), the SparkContext, the SparkSession, planning,
the first job, the same job again, ``Jet.shutdown()`` (stopping the session) and the process's
exit. The report gives each phase's median; its Markdown section in ``--results`` is replaced
(appended the first time), the rest of the file left as it was.

``before``, ``no-ui`` and ``ui`` (the default variants) are sparkjet as it was and as it is; two
more measure JVM options sparkjet does not set: ``jvm-c1`` (C1 alone: a quicker start, slower
long jobs) and ``appcds`` (Spark's classes from a class-data-sharing archive: the archive must
be made by a first run, per JDK and Spark, and a truncated one crashes the JVM with SIGBUS).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import NamedTuple

PROJECT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tutorials" / "data"
MASTER = "local[2]"
BEGIN, END = "<!-- benchmarks.startup: begin -->", "<!-- benchmarks.startup: end -->"


class Variant(NamedTuple):
    """How a measured process runs: its environment, and whether it stops its session with
    PySpark's own ``stop()`` (as sparkjet did before issue 17) rather than sparkjet's (a named
    tuple, not attrs: the measured process imports nothing before it times sparkjet's import)."""

    description: str
    environment: dict[str, str]
    pysparkStop: bool = False


ARCHIVE = pathlib.Path(tempfile.gettempdir()) / "sparkjet-startup" / "spark-classes.jsa"
"""The JVM's class-data-sharing archive of the appcds variant, made by its first process."""

VARIANTS = {
    "before": Variant(
        "as before issue 17: no web UI, the session stopped by PySpark's stop()", {"SPARKJET_UI": "0"}, True
    ),
    "no-ui": Variant("now, with the UI turned off (SPARKJET_UI=0)", {"SPARKJET_UI": "0"}),
    "ui": Variant("now, by default: Spark's web UI on, its address said on stderr", {"SPARKJET_UI": "1"}),
    "jvm-c1": Variant(
        "no-ui, the JVM compiling with C1 alone (JDK_JAVA_OPTIONS=-XX:TieredStopAtLevel=1; not adopted)",
        {"SPARKJET_UI": "0", "JDK_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1"},
    ),
    "appcds": Variant(
        f"no-ui, the JVM loading Spark's classes from a class-data-sharing archive its first process made "
        f"(JDK_JAVA_OPTIONS=-XX:SharedArchiveFile={ARCHIVE.name}; not adopted)",
        {
            "SPARKJET_UI": "0",
            "JDK_JAVA_OPTIONS": f"-XX:SharedArchiveFile={ARCHIVE} -Xlog:cds=off -Xlog:cds+dynamic=off",
        },
    ),
}
DEFAULT_VARIANTS = ("before", "no-ui", "ui")

PHASES = {
    "python": "interpreter start",
    "importSparkjet": "import sparkjet",
    "importRuntime": "import its runtime (PySpark)",
    "jvm": "JVM start",
    "context": "SparkContext (and sparkjet's settings)",
    "sqlSession": "SparkSession (Spark SQL's set-up)",
    "planning": "planning",
    "firstJob": "first job",
    "secondJob": "second job",
    "shutdown": "Jet.shutdown()",
    "exit": "process exit",
}


def measureChild(variant: Variant, directory: str) -> dict:
    """In the measured process: count the words of ``directory`` and time every phase; return
    the phases' seconds, the counts' total and distinct words, and the Unix times it started
    and ended (the parent takes the interpreter's start and the exit from them)."""
    started, laps, last = time.time(), {}, time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal last
        now = time.perf_counter()
        laps[phase], last = now - last, now

    from sparkjet import Jet, plan

    lap("importSparkjet")
    import pyspark.core.context as context
    from pyspark.sql import SparkSession

    from benchmarks.variants.sparkjet import wordCountPipeline
    from sparkjet.coredag.runtime import execution, session

    lap("importRuntime")
    jvm = _timed(context, "launch_gateway")
    sqlSession = _timed(SparkSession, "__init__")
    if variant.pysparkStop:
        session.stopSession = lambda spark: spark.stop()
    jet = Jet(master=MASTER)
    jet.spark()
    lap("context")
    laps["context"] -= jvm[0] + sqlSession[0]
    laps["jvm"], laps["sqlSession"] = jvm[0], sqlSession[0]
    planned = plan(wordCountPipeline(directory))
    execution.physicalPlanOn(jet.spark(), planned.dag)
    lap("planning")
    jet.newJob(planned).join()
    lap("firstJob")
    counts = list(jet.getList("counts"))
    jet.newJob(planned).join()
    lap("secondJob")
    again = jet.getList("counts")[len(counts) :]
    jet.shutdown()
    lap("shutdown")
    if sorted(again) != sorted(counts):
        raise RuntimeError("the second job's counts differ from the first job's")
    total = sum(count for _, count in counts)
    return {"phases": laps, "total": total, "distinct": len(counts), "started": started, "ended": time.time()}


def _timed(owner, name: str) -> list[float]:
    """Time the calls of ``owner``'s function ``name`` (PySpark's start of the JVM, the
    SparkSession's creation) into the list returned, added up."""
    seconds, function = [0.0], getattr(owner, name)

    def timed(*args, **kwargs):
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[0] += time.perf_counter() - began

    setattr(owner, name, timed)
    return seconds


def runMeasured(name: str, directory: pathlib.Path) -> dict:
    """Run variant ``name`` in a fresh process; return its phases with the interpreter's start,
    the exit and the wall time."""
    environment = {**os.environ, **VARIANTS[name].environment}
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        spawned = time.time()
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.startup", "--child", name, "--input", str(directory)],
            cwd=PROJECT,
            env=environment,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
        returncode = process.wait(timeout=600)  # the process, not its JVM, which may exit later
        exited = time.time()
        stdout.seek(0), stderr.seek(0)
        output, errors = stdout.read(), stderr.read()
    if returncode != 0:
        raise RuntimeError(f"variant {name} failed (exit {returncode}):\n{errors[-3000:]}")
    result = json.loads(output.strip().splitlines()[-1])
    phases = {"python": result["started"] - spawned, **result["phases"], "exit": exited - result["ended"]}
    return {**result, "phases": phases, "wall": exited - spawned}


def makeArchive(directory: pathlib.Path) -> None:
    """Make the appcds variant's archive, unless made: the classes one process's JVM loaded,
    written when that JVM exits (after its Python process; its spark-submit launcher's JVM,
    which exits first, writes one too, replaced by the driver's)."""
    if ARCHIVE.exists():
        return
    ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
    partial = ARCHIVE.with_suffix(".partial")
    options = f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.startup", "--child", "no-ui", "--input", str(directory)],
        cwd=PROJECT,
        env={**os.environ, "SPARKJET_UI": "0", "JDK_JAVA_OPTIONS": options},
        capture_output=True,
        check=True,
        timeout=600,
    )  # the pipes close once the JVM has exited, its archive whole: a truncated one crashes the JVM
    partial.replace(ARCHIVE)


def expectedCounts(directory: pathlib.Path) -> tuple[int, int]:
    """Return the total and distinct words of ``directory``'s files, counted with a Counter."""
    from benchmarks.words import split

    counts = Counter(
        word
        for path in sorted(directory.iterdir())
        if path.is_file()
        for line in path.read_text(encoding="utf-8").splitlines()
        for word in split(line)
        if word
    )
    return sum(counts.values()), len(counts)


def measureAll(names: list[str], repetitions: int, directory: pathlib.Path) -> dict[str, list[dict]]:
    """Run every variant ``repetitions`` times, the order rotated each time; check the counts."""
    expected = expectedCounts(directory)
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for repetition in range(repetitions):
        for name in names[repetition % len(names) :] + names[: repetition % len(names)]:
            run = runMeasured(name, directory)
            if (run["total"], run["distinct"]) != expected:
                raise RuntimeError(
                    f"variant {name} counted {run['total']} words, {run['distinct']} distinct; expected {expected}"
                )
            runs[name].append(run)
            print(f"{name} #{repetition + 1}: {run['wall']:.2f} s", file=sys.stderr, flush=True)
    return runs


def report(runs: dict[str, list[dict]], command: str, machine: dict[str, str], load: tuple[str, str]) -> str:
    """Return the Markdown section of the medians, phase by phase, with how they were measured."""
    from benchmarks.markdown import head, row

    names = list(runs)
    median = {name: {p: statistics.median(r["phases"][p] for r in runs[name]) for p in PHASES} for name in names}
    wall = {name: statistics.median(r["wall"] for r in runs[name]) for name in names}
    repetitions = len(next(iter(runs.values())))
    lines = [
        BEGIN,
        "## Start-up: a first word count in a fresh process",
        "",
        f"- **Command**: `{command}` (from the project directory), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **Machine**: {machine['CPU']}, {machine['RAM']} RAM, Java {machine['Java']}, PySpark {machine['PySpark']}, "
        f"sparkjet {machine['sparkjet commit'].split(',')[0]}; shared with other engineers' test runs "
        "(load average at start / end: "
        f"{load[0]} / {load[1]}), so single figures are noisy: medians of {repetitions} fresh processes per variant, "
        "the order rotated",
        f'- **Job**: tutorial 01\'s word count over the bundled corpus (1.1 MB), `Jet(master="{MASTER}")`; '
        "every process's counts checked against a Counter",
        *[f"- **{name}**: {VARIANTS[name].description}" for name in names],
        "",
        *head(("phase (median s)", *names), {0}),
        *[row((label, *[f"{median[name][phase]:.2f}" for name in names])) for phase, label in PHASES.items()],
        row(("**process wall time**", *[f"**{wall[name]:.2f}**" for name in names])),
        "",
        *[f"- {name}, wall s per process: {perProcess(runs[name])}" for name in names],
        "",
        *readings(median, wall),
        END,
    ]
    return "\n".join(lines) + "\n"


OWN = ("importSparkjet", "planning", "shutdown")
"""The phases that are sparkjet's own work; the others are the interpreter's, PySpark's and Spark's."""

STARTS = ("jvm", "context", "sqlSession")
"""The phases of the session's start."""


def readings(median: dict[str, dict[str, float]], wall: dict[str, float]) -> list[str]:
    """Return what the medians say: sparkjet's share, the cut, the UI's cost, the JVM options'."""
    found = []
    for name in ("ui", "no-ui"):
        if name in median:
            own = sum(median[name][phase] for phase in OWN)
            spark = sum(median[name][phase] for phase in STARTS) + median[name]["firstJob"]
            sql = median[name]["sqlSession"]
            found += [
                f"- sparkjet's own phases ({', '.join(PHASES[p] for p in OWN)}) take {own:.2f} s of {name}'s "
                f"{wall[name]:.2f} s ({own / wall[name]:.0%}); the JVM's start, the SparkContext, the SparkSession "
                f"and the first job (Spark's, and PySpark's Python workers') {spark:.2f} s ({spark / wall[name]:.0%}).",
                f"- The SparkSession alone, Spark SQL's set-up, takes {sql:.2f} s ({sql / wall[name]:.0%}), "
                "though this job uses no Spark SQL (sparkjet reads local files in Python and collects a list): "
                "Spark-read sources, DataFrame sinks and streams need it.",
            ]
            break
    if "before" in median and "no-ui" in median:
        found.append(
            f"- Cut: `Jet.shutdown()` {median['before']['shutdown']:.2f} s → {median['no-ui']['shutdown']:.2f} s, "
            f"the process {wall['before']:.2f} s → {wall['no-ui']:.2f} s without the UI "
            f"({wall['no-ui'] / wall['before'] - 1:+.0%}); with the UI, now the default, "
            f"{wall.get('ui', float('nan')):.2f} s."
        )
    if "ui" in median and "no-ui" in median:
        context = median["ui"]["context"] - median["no-ui"]["context"]
        found.append(
            f"- The web UI's start-up cost: the SparkContext {median['ui']['context']:.2f} s against "
            f"{median['no-ui']['context']:.2f} s without it ({context:+.2f} s), "
            f"the process {wall['ui'] - wall['no-ui']:+.2f} s."
        )
    for name in ("jvm-c1", "appcds"):
        if name in median and "no-ui" in median:
            start, without = (sum(median[variant][phase] for phase in STARTS) for variant in (name, "no-ui"))
            found.append(
                f"- {name}: the JVM's start, the SparkContext and the SparkSession {start:.2f} s against "
                f"{without:.2f} s, the process {wall[name]:.2f} s against {wall['no-ui']:.2f} s "
                f"({wall[name] / wall['no-ui'] - 1:+.0%})."
            )
    return found


def perProcess(runs: list[dict]) -> str:
    """Return the wall times of ``runs``, in the order they ran."""
    return " / ".join(f"{run['wall']:.2f}" for run in runs)


def replaceSection(document: str, section: str) -> str:
    """Return ``document`` with this benchmark's section replaced by ``section`` (appended if none)."""
    if BEGIN in document and END in document:
        before, rest = document.split(BEGIN, 1)
        return before + section.rstrip("\n") + rest.split(END, 1)[1]
    return document.rstrip("\n") + "\n\n" + section


def main(argv: list[str] | None = None) -> None:
    """Measure the variants and write the report's section (or, with --child, be one process)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=5, help="fresh processes per variant (default 5)")
    parser.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help=f"which of {', '.join(VARIANTS)} (default {','.join(DEFAULT_VARIANTS)})",
    )
    parser.add_argument(
        "--results",
        default=str(PROJECT / "benchmarks" / "RESULTS.md"),
        help="the Markdown file whose start-up section is replaced (default benchmarks/RESULTS.md)",
    )
    parser.add_argument("--input", default=str(CORPUS), help="the directory of text files to count")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness of this run and its processes; -10 (root only) keeps other programs at bay",
    )
    parser.add_argument("--child", choices=list(VARIANTS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measureChild(VARIANTS[args.child], args.input)))
        return
    from benchmarks.machine import describe, loadAverage

    names = [name for name in args.variants.split(",") if name]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}: choose among {', '.join(VARIANTS)}")
    os.nice(args.nice)
    if "appcds" in names:
        makeArchive(pathlib.Path(args.input))
    loadAtStart = loadAverage()
    runs = measureAll(names, args.repetitions, pathlib.Path(args.input))
    command = "python -m benchmarks.startup" + "".join(
        f" {arg}" for arg in (argv if argv is not None else sys.argv[1:])
    )
    section = report(runs, command, describe(), (loadAtStart, loadAverage()))
    results = pathlib.Path(args.results)
    results.write_text(replaceSection(results.read_text() if results.exists() else "", section))
    print(section)


if __name__ == "__main__":
    main()
