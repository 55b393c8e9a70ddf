"""RESULTS.md: medians, pair-by-pair ratios, peaks and the counts check, one table per input."""

import pathlib
import re

from benchmarks import targets
from benchmarks.figures import (
    coldSeconds,
    jobSeconds,
    median,
    medianOf,
    mib,
    pairedRatio,
    ratio,
    secondJobSeconds,
    seconds,
)
from benchmarks.inputs import MIB
from benchmarks.markdown import head, row
from benchmarks.profile import Function, Summary
from benchmarks.pyspy import RATE, Recording
from benchmarks.suites import Run, Suite

BASELINE = "rdd"
TAIL_LINES = 15
JAVA_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
LEGEND = (
    "Job time is measured inside each process around the job alone (its SparkSession already "
    "started); wall time is the process from start to exit (interpreter, JVM, the digest of the "
    "counts included). Ratios are taken pair by pair, variant ÷ baseline within one repetition, "
    "then the median. MiB/s is the input's size over the median job time. CPU s is the CPU time "
    "of the process tree. Peak RSS is the highest sum of RSS over the process tree (driver, JVM, "
    "Python workers, pool children), sampled every 0.1 s, the highest over the repetitions. "
    "\"Other programs' CPUs\" is the machine's busy CPU time not spent by the measured tree, "
    "averaged over its run: near 0 on a quiet machine; higher, other programs ran meanwhile "
    '(see benchmarks/README.md). "ok": the counts equal those computed independently from the '
    "corpus (SHA-256 of the sorted items, total and distinct words). Second job, where a table "
    "has one: each Spark variant runs the same job again in the same session, after the first, "
    "so after the JVM's and the Python workers' warm-up (the first job has loaded and compiled "
    "Spark's code in the JVM and started PySpark's daemon and the Python workers Spark reuses); "
    "its counts must equal the first job's, else the process fails. Plain Python has no session "
    "and no second job; \"second job ÷ plain Python\" divides by plain Python's job time of the "
    "same repetition. Wall time, CPU time and peak RSS of a process with a second job cover both "
    "jobs; its job time remains the first job's."
)
WORD_COUNT_COLUMNS = (
    "variant",
    "job s (median)",
    "job s per repetition",
    "job ÷ RDD (median of pairs)",
    "second job s (median)",
    "second job ÷ plain Python (median of pairs)",
    "wall s (median)",
    "MiB/s (job)",
    "CPU s (median)",
    "peak RSS, all processes (MiB)",
    "of which Python (MiB)",
    "other programs' CPUs (max)",
    "counts",
)
TINY_COLUMNS = (
    "variant",
    "first job of the session s (median)",
    "warm job s (median)",
    "warm ÷ trivial",
    "warm ÷ RDD",
    "first ÷ trivial",
    "wall s (median)",
    "peak RSS (MiB)",
    "other programs' CPUs (max)",
    "counts",
)
PLAIN_PYTHON = "python"
PROFILE_LEGEND = (
    "py-spy samples every thread of each Python process the command starts (the driver, the "
    "PySpark daemon the JVM starts, the Python workers the daemon forks) "
    f"{RATE} times a second without pausing it (`--nonblocking`), and keeps a sample only when "
    f"the thread is not idle: a thread's samples ÷ {RATE} approximate its busy seconds. The JVM "
    "is not sampled. Time in C code (the regular-expression engine, `Counter`, pickling, socket "
    "writes) counts for the Python function that called it. A function's self samples are those "
    "it was the innermost frame of; its total samples, those it was anywhere on the stack of, "
    "once per stack. Generators nest, so the frames that pull items through a worker's task are "
    "on nearly all of its samples, whatever runs below them. Origins: the user's code is "
    "`benchmarks/words.py` and `benchmarks/variants/`; sparkjet is `coredag/`, `pipeline/` and "
    "`planner/`; PySpark is `pyspark/` and its `py4j/`; the standard library includes its frozen "
    "modules (`<frozen …>`); other is the rest (attrs, toolz, generated code)."
)
PROCESS_COLUMNS = (
    "process",
    "processes sampled",
    "samples",
    f"≈ busy s (samples ÷ {RATE})",
    "share of all samples",
)
PLANNING_COLUMNS = (
    "map stages",
    "Core DAG vertices after fusion",
    "building the pipeline ms (median)",
    "planner.plan ms (median)",
    "plan µs per stage",
)


def verdict(run: Run) -> str:
    """Return whether the run's counts equal the input's independently computed ones."""
    if run.finished.returncode is None:
        return "TIMEOUT (killed)"
    if not run.succeeded:
        code = run.finished.returncode
        return f"FAILED ({'no result written' if code == 0 else f'exit {code}'})"
    if run.suite.input is None:
        return "—"
    if "digest" not in run.result or run.result["digest"] == run.suite.input.expected["digest"]:
        return "ok"
    return f"MISMATCH: {run.result['total']:,} words, {run.result['distinct']:,} distinct"


def progressLine(run: Run) -> str:
    """Return the console line printed as each process ends."""
    done = run.succeeded and "jobSeconds" in run.result
    job = f"job {jobSeconds(run):8.2f} s" if done else " " * 15
    second = secondJobSeconds(run) if done else None
    again = f"  second job {second:6.2f} s" if second is not None else " " * 21
    return (
        f"[{run.suite.title} · repetition {run.repetition + 1}] {run.variant:<12} {job}"
        f"{again if run.suite.secondJob else ''}"
        f"  wall {run.finished.wallSeconds:7.1f} s  peak RSS {mib(run.finished.peakRss):>6} MiB"
        f"  other programs {run.finished.otherCpus:.2f} CPUs  counts {verdict(run)}"
    )


def wallMedian(runs: list[Run]) -> str:
    """Return the median wall time of the runs, failed ones included."""
    return seconds(median([run.finished.wallSeconds for run in runs]))


def peak(runs: list[Run], field: str) -> str:
    """Return the highest peak of the runs, in MiB."""
    return mib(max(getattr(run.finished, field) for run in runs)) if runs else "—"


def others(runs: list[Run]) -> str:
    """Return the most CPUs other programs kept busy, on average, during one of the runs."""
    return f"{max(run.finished.otherCpus for run in runs):.2f}" if runs else "—"


def verdicts(runs: list[Run]) -> str:
    """Return the runs' counts verdicts, collapsed when they agree."""
    return "; ".join(sorted({verdict(run) for run in runs}))


def wordCountTable(suite: Suite, runs: list[Run]) -> list[str]:
    """Return the table of a word-count suite."""
    lines = head(WORD_COUNT_COLUMNS, text={0, len(WORD_COUNT_COLUMNS) - 1})
    for variant in suite.variants:
        mine = [run for run in runs if run.variant == variant]
        job = medianOf(mine, jobSeconds)
        perRepetition = [seconds(jobSeconds(run)) if run.succeeded else "✗" for run in mine]
        cells = [
            variant,
            seconds(job),
            " / ".join(perRepetition),
            ratio(pairedRatio(runs, variant, BASELINE, jobSeconds)),
            seconds(medianOf(mine, secondJobSeconds)),
            ratio(pairedRatio(runs, variant, PLAIN_PYTHON, secondJobSeconds, jobSeconds)),
            wallMedian(mine),
            "—" if job is None else f"{suite.input.size / MIB / job:.1f}",
            seconds(median([run.finished.cpuSeconds for run in mine])),
            peak(mine, "peakRss"),
            peak(mine, "peakPythonRss"),
            others(mine),
            verdicts(mine),
        ]
        lines.append(row(cells))
    return lines


def tinyTable(suite: Suite, runs: list[Run]) -> list[str]:
    """Return the table of the tiny-job suite: first and warm jobs, against the trivial job."""
    lines = head(TINY_COLUMNS, text={0, len(TINY_COLUMNS) - 1})
    for variant in suite.variants:
        mine = [run for run in runs if run.variant == variant]
        cells = [
            variant,
            seconds(medianOf(mine, coldSeconds)),
            seconds(medianOf(mine, jobSeconds)),
            ratio(pairedRatio(runs, variant, "trivial", jobSeconds)),
            ratio(pairedRatio(runs, variant, BASELINE, jobSeconds)),
            ratio(pairedRatio(runs, variant, "trivial", coldSeconds)),
            wallMedian(mine),
            peak(mine, "peakRss"),
            others(mine),
            verdicts(mine),
        ]
        lines.append(row(cells))
    return lines


def planningTable(suite: Suite, runs: list[Run]) -> list[str]:
    """Return the table of the planning suite."""
    done = [run for run in runs if run.succeeded]
    if not done:
        return ["Planning failed: see the failures below."]
    builds = median([value for run in done for value in run.result["buildSeconds"]])
    plans = median([value for run in done for value in run.result["planSeconds"]])
    stages, vertices = done[0].result["stages"], done[0].result["vertices"]
    cells = [
        str(stages),
        str(vertices),
        f"{builds * 1e3:.1f}",
        f"{plans * 1e3:.1f}",
        f"{plans * 1e6 / stages:.1f}",
    ]
    return [*head(PLANNING_COLUMNS, text=set()), row(cells)]


TABLES = {"word-count": wordCountTable, "tiny": tinyTable, "planning": planningTable}


def settingsCheck(runs: list[Run]) -> str:
    """Return whether every Spark process ran with the same session settings."""
    seen = [run.result["settings"] for run in runs if run.succeeded and run.result.get("settings")]
    if not seen:
        return "No Spark process finished, so no session settings to compare."
    reference = seen[0]
    differing = {
        key
        for other in seen[1:]
        for key in reference.keys() | other.keys()
        if reference.get(key) != other.get(key)
    }
    if differing:
        keys = ", ".join(sorted(differing))
        return f"**Spark session settings differ between processes** in: {keys}."
    shown = ", ".join(
        f"`{key}={value}`" for key, value in reference.items() if "extraJavaOptions" not in key
    )
    return f"All {len(seen)} Spark processes ran with identical session settings: {shown}."


def fingerprintCheck(runs: list[Run]) -> str:
    """Return whether sparkjet's source stayed the same through the run."""
    firstProcess: dict[str, int] = {}
    for index, run in enumerate(runs):
        firstProcess.setdefault(run.fingerprint, index + 1)
    if len(firstProcess) == 1:
        (fingerprint,) = firstProcess
        return (
            f"sparkjet's sources (pipeline/, planner/, coredag/) had one fingerprint, "
            f"`{fingerprint}`, throughout."
        )
    listed = ", ".join(f"`{print_}` from process {index}" for print_, index in firstProcess.items())
    return f"**sparkjet's sources changed during the run** ({listed}): the tables mix versions."


def logTail(run: Run) -> list[str]:
    """Return the end of a process's output, Java stack frames left out, as a code block."""
    output = pathlib.Path(run.log).read_text(errors="replace").splitlines()
    tail = [line for line in output if not JAVA_FRAME.match(line)][-TAIL_LINES:]
    return ["```", *tail, "```"]


def failures(runs: list[Run]) -> list[str]:
    """Return, for every failed or killed process, the end of its output without Java frames."""
    lines = []
    for run in runs:
        if run.succeeded:
            continue
        title = f"{run.suite.title}, {run.variant}, repetition {run.repetition + 1}"
        lines += [
            f"### {title}: {verdict(run)}",
            "",
            f"Wall {run.finished.wallSeconds:.1f} s, peak RSS {mib(run.finished.peakRss)} MiB; "
            f"the last lines of `{run.log}`, Java stack frames left out:",
            "",
            *logTail(run),
            "",
        ]
    return lines


def percent(part: int, whole: int) -> str:
    """Return ``part`` as a percentage of ``whole``."""
    return f"{100 * part / whole:.1f}%"


def processTable(summary: Summary) -> list[str]:
    """Return the samples of each kind of process."""
    lines = head(PROCESS_COLUMNS, text={0})
    for share in summary.processes:
        cells = [
            share.kind,
            str(share.processes),
            f"{share.samples:,}",
            f"{share.samples / RATE:.1f}",
            percent(share.samples, summary.samples),
        ]
        lines.append(row(cells))
    return lines


def functionTable(functions: tuple[Function, ...], samples: str, workerSamples: int) -> list[str]:
    """Return the Python workers' top functions by ``samples``, with their share of the workers'."""
    columns = ("function", "file", "origin", samples, "% of the workers' samples")
    lines = head(columns, text={0, 1, 2})
    for function in functions:
        cells = [
            f"`{function.name}`",
            f"`{function.path}`",
            function.origin,
            f"{function.samples:,}",
            percent(function.samples, workerSamples),
        ]
        lines.append(row(cells))
    return lines


def profileSection(recording: Recording) -> list[str]:
    """Return the profiled sparkjet process's section: its processes, its workers' functions."""
    run, summary = recording.run, recording.summary
    job = f"job {seconds(jobSeconds(run))} s under the profiler, " if run.succeeded else ""
    lines = [
        "## Where a Python worker's time goes",
        "",
        f"The `sparkjet` variant once more after the suites, in a fresh process under "
        f"{recording.version}, on {run.suite.title}, {run.suite.input.description}: {job}counts "
        f"{verdict(run)}. The command, from the project directory in the environment "
        f"`.ci/setup` makes: `{recording.command}`. The raw samples, one line per distinct stack "
        f"(`process …;process …;frame;…;innermost frame COUNT`): `{recording.rawPath}`.",
        "",
    ]
    if not run.succeeded or summary is None or not summary.workerSamples:
        reason = "the process failed" if not run.succeeded else "no Python worker was sampled"
        return [
            *lines,
            f"No profile: {reason}. The last lines of `{run.log}`, Java stack frames left out:",
            "",
            *logTail(run),
            "",
        ]
    origins = ", ".join(
        f"{label} {percent(samples, summary.workerSamples)}" for label, samples in summary.byOrigin
    )
    return [
        *lines,
        PROFILE_LEGEND,
        "",
        *processTable(summary),
        "",
        f"The Python workers' {summary.workerSamples:,} samples by the origin of their innermost "
        f"frame: {origins}.",
        "",
        "Their top functions by self samples:",
        "",
        *functionTable(summary.bySelf, "self samples", summary.workerSamples),
        "",
        "By total samples:",
        "",
        *functionTable(summary.byTotal, "total samples", summary.workerSamples),
        "",
    ]


def render(
    header: dict[str, str],
    suites: list[Suite],
    runs: list[Run],
    status: str,
    recording: Recording | None,
) -> str:
    """Return RESULTS.md; ``recording``, the profiled process, if there was one."""
    lines = ["# Benchmark results", "", status, ""]
    lines += [f"- **{key}**: {value}" for key, value in header.items()]
    lines += ["", f"- {settingsCheck(runs)}", f"- {fingerprintCheck(runs)}", "", LEGEND, ""]
    lines += targets.section(suites, runs)
    for suite in suites:
        mine = [run for run in runs if run.suite == suite]
        if not mine:
            continue
        described = f": {suite.input.description}" if suite.input is not None else ""
        lines += [f"## {suite.title}{described}", "", *TABLES[suite.kind](suite, mine), ""]
    if recording is not None:
        lines += profileSection(recording)
    broken = failures(runs)
    if broken:
        lines += ["## Failures", "", *broken]
    return "\n".join(lines).rstrip() + "\n"
