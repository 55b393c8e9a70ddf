"""RESULTS.md: medians, pair-by-pair ratios, peaks and the counts check, one table per input."""

import pathlib
import re
import statistics
from collections.abc import Callable

from benchmarks.inputs import MIB
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
    "corpus (SHA-256 of the sorted items, total and distinct words)."
)
WORD_COUNT_COLUMNS = (
    "variant",
    "job s (median)",
    "job s per repetition",
    "job ÷ RDD (median of pairs)",
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
        return f"FAILED (exit {run.finished.returncode})"
    if run.suite.input is None:
        return "—"
    if "digest" not in run.result or run.result["digest"] == run.suite.input.expected["digest"]:
        return "ok"
    return f"MISMATCH: {run.result['total']:,} words, {run.result['distinct']:,} distinct"


def progressLine(run: Run) -> str:
    """Return the console line printed as each process ends."""
    done = run.succeeded and "jobSeconds" in run.result
    job = f"job {run.result['jobSeconds']:8.2f} s" if done else " " * 15
    return (
        f"[{run.suite.title} · repetition {run.repetition + 1}] {run.variant:<12} {job}"
        f"  wall {run.finished.wallSeconds:7.1f} s  peak RSS {mib(run.finished.peakRss):>6} MiB"
        f"  other programs {run.finished.otherCpus:.2f} CPUs  counts {verdict(run)}"
    )


def mib(size: int) -> str:
    """Return a byte count in whole MiB."""
    return f"{size / MIB:,.0f}"


def median(values: list[float]) -> float | None:
    """Return the median, or None for no values."""
    return statistics.median(values) if values else None


def seconds(value: float | None) -> str:
    """Return seconds for a table cell."""
    return "—" if value is None else f"{value:.2f}"


def ratio(value: float | None) -> str:
    """Return a ratio for a table cell."""
    return "—" if value is None else f"{value:.2f}×"


def row(cells: tuple[str, ...] | list[str]) -> str:
    """Return one Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def head(columns: tuple[str, ...], text: set[int]) -> list[str]:
    """Return a table's header rows: columns ``text`` aligned left, the numbers right."""
    return [row(columns), row(["---" if i in text else "--:" for i in range(len(columns))])]


def pairedRatio(
    runs: list[Run], variant: str, baseline: str, measure: Callable[[Run], float]
) -> float | None:
    """Return the median over repetitions of variant ÷ baseline, both of one repetition."""
    byRepetition: dict[int, dict[str, float]] = {}
    for run in runs:
        if run.succeeded:
            byRepetition.setdefault(run.repetition, {})[run.variant] = measure(run)
    pairs = [
        times[variant] / times[baseline]
        for times in byRepetition.values()
        if variant in times and baseline in times
    ]
    return median(pairs)


def jobSeconds(run: Run) -> float:
    """Return the job time the variant measured around its job."""
    return run.result["jobSeconds"]


def coldSeconds(run: Run) -> float:
    """Return the time of the session's first job."""
    return run.result["coldSeconds"]


def medianOf(runs: list[Run], measure: Callable[[Run], float]) -> float | None:
    """Return the median of ``measure`` over the runs that succeeded."""
    return median([measure(run) for run in runs if run.succeeded])


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


def failures(runs: list[Run]) -> list[str]:
    """Return, for every failed or killed process, the end of its output without Java frames."""
    lines = []
    for run in runs:
        if run.succeeded:
            continue
        output = pathlib.Path(run.log).read_text(errors="replace").splitlines()
        tail = [line for line in output if not JAVA_FRAME.match(line)][-TAIL_LINES:]
        title = f"{run.suite.title}, {run.variant}, repetition {run.repetition + 1}"
        lines += [
            f"### {title}: {verdict(run)}",
            "",
            f"Wall {run.finished.wallSeconds:.1f} s, peak RSS {mib(run.finished.peakRss)} MiB; "
            f"the last lines of `{run.log}`, Java stack frames left out:",
            "",
            "```",
            *tail,
            "```",
            "",
        ]
    return lines


def render(header: dict[str, str], suites: list[Suite], runs: list[Run], status: str) -> str:
    """Return RESULTS.md."""
    lines = ["# Benchmark results", "", status, ""]
    lines += [f"- **{key}**: {value}" for key, value in header.items()]
    lines += ["", f"- {settingsCheck(runs)}", f"- {fingerprintCheck(runs)}", "", LEGEND, ""]
    for suite in suites:
        mine = [run for run in runs if run.suite == suite]
        if not mine:
            continue
        described = f": {suite.input.description}" if suite.input is not None else ""
        lines += [f"## {suite.title}{described}", "", *TABLES[suite.kind](suite, mine), ""]
    broken = failures(runs)
    if broken:
        lines += ["## Failures", "", *broken]
    return "\n".join(lines).rstrip() + "\n"
