"""Windowed word count over a stream: sparkjet against Spark Structured Streaming, in one run.

``python -m benchmarks.streaming [--quick] [--lines N] [--files F] [--workdir DIR] ...``

The input is the bundled corpus's lines, repeated if need be, each prefixed with an event
timestamp in ms (``"<ts> <text>"``, 10 ms apart), cut into F files; a warm-up file comes before
them and a final file after them, one line without words each, the final one an hour of event
time ahead so that the watermark passes every window. Each variant
(``benchmarks.streaming_variants``) runs in a fresh process on the same session settings and
reads a directory of its own as a stream. Once its query waits for data, this harness renames
the files into that directory (each written first into a staging directory beside it) in three
phases, each once the query has worked off the one before: the warm-up file, a burst of files
at once (throughput), the rest one every ``--interval`` seconds (latency). What each variant
delivered is checked against an offline ``Counter`` per window; the report gives the targets,
the ratios of sparkjet to each Structured Streaming query and every variant's figures. See
benchmarks/README.md.
"""

import argparse
import datetime
import json
import os
import pathlib
import shutil
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict

import attrs

from benchmarks import machine
from benchmarks.inputs import PROJECT, corpusBytes
from benchmarks.markdown import head, row
from benchmarks.measure import Finished, runMeasured
from benchmarks.streaming_variants import DEFAULT_VARIANTS, LAG_MILLIS, TRIGGER, VARIANTS, WINDOW_MILLIS
from benchmarks.words import split

STEP_MILLIS = 10
BASE_MILLIS = 1_700_000_000_000
"""The first line's event time: a multiple of the window size, so windows start at line 0."""
FAR_AHEAD_MILLIS = 3_600_000
TRIGGER_SECONDS = 1.0
LATENCY_TARGET_SECONDS = TRIGGER_SECONDS + 1.0
QUICK = {"lines": 4_000, "files": 8, "burst": 2}
DEFAULT = {"lines": 40_000, "files": 40, "burst": 20}
READY_TIMEOUT_SECONDS = 180
PHASE_TIMEOUT_SECONDS = 300
QUIET_SECONDS = 2.5
"""How long a query must run no micro-batch, after reading a phase's rows, before the next phase."""


@attrs.frozen
class StreamInput:
    """The files in drop order (their lines), the phases, and what every variant must deliver.

    File 0 is the warm-up file, files ``burst`` are dropped at once, files ``paced`` (the final
    one last) one every interval."""

    files: list[list[str]]
    burst: range
    paced: range
    lines: int
    words: int
    expected: Counter  # (start, end, word) -> count
    closingFile: dict[tuple[int, int], int]  # window -> index of the file whose drop closes it

    def phaseLines(self, files: range) -> int:
        return sum(len(self.files[index]) for index in files)


def buildInput(lineCount: int, fileCount: int, burstCount: int) -> StreamInput:
    """Return the corpus's lines, repeated to ``lineCount``, timestamped, cut into files: a
    warm-up file, ``burstCount`` files dropped at once, the rest one at a time, the final one."""
    corpus = corpusBytes().decode("ascii").split("\n")[:-1]
    lines = [
        f"{BASE_MILLIS + number * STEP_MILLIS} {corpus[number % len(corpus)]}"
        for number in range(lineCount)
    ]
    parts = [
        lines[lineCount * index // fileCount : lineCount * (index + 1) // fileCount]
        for index in range(fileCount)
    ]
    lastTs = BASE_MILLIS + (lineCount - 1) * STEP_MILLIS
    # no words in the warm-up line nor in the final one: the first only starts the Python
    # workers (its watermark lies before every window), the last moves the watermark past all
    files = [[f"{BASE_MILLIS - STEP_MILLIS} "], *parts, [f"{lastTs + FAR_AHEAD_MILLIS} "]]
    expected: Counter = Counter()
    for line in lines:
        ts, _, text = line.partition(" ")
        start = int(ts) // WINDOW_MILLIS * WINDOW_MILLIS
        for word in split(text):
            if word:
                expected[start, start + WINDOW_MILLIS, word] += 1
    windows = sorted({(start, end) for start, end, _ in expected})
    topTs = [int(file[-1].partition(" ")[0]) for file in files]  # timestamps only grow
    closing = {
        window: next(index for index, ts in enumerate(topTs) if ts - LAG_MILLIS >= window[1])
        for window in windows
    }
    burst = range(1, 1 + burstCount)
    paced = range(1 + burstCount, len(files))
    return StreamInput(files, burst, paced, lineCount, sum(expected.values()), expected, closing)


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK['lines']:,} lines in {QUICK['files']} files, {QUICK['burst']} in the burst: under 3 minutes on 2 cores")
    parser.add_argument("--lines", type=int, help=f"input lines (default {DEFAULT['lines']:,})")
    parser.add_argument("--files", type=int, help=f"files the lines are cut into (default {DEFAULT['files']}); the warm-up and final files come on top")
    parser.add_argument("--burst-files", dest="burstFiles", type=int, help=f"of those, how many are dropped at once after the warm-up (default half: {DEFAULT['burst']})")
    parser.add_argument("--interval", type=float, default=1.5, help="seconds between two drops of the paced phase (default 1.5)")
    parser.add_argument(
        "--variants", default=",".join(DEFAULT_VARIANTS),
        help=f"comma-separated, of {', '.join(VARIANTS)} (default {','.join(DEFAULT_VARIANTS)})",
    )
    parser.add_argument("--repetitions", type=int, default=1, help="fresh processes per variant (default 1), the order rotated")
    parser.add_argument(
        "--workdir", type=pathlib.Path, default=pathlib.Path("/tmp/sparkjet-benchmarks"),
        help="scratch (streaming/: each process's directories, log and result; the raw runs) and the report's default place",
    )
    parser.add_argument("--report", type=pathlib.Path, help="default WORKDIR/STREAMING.md (--quick: STREAMING-quick.md)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds after the last drop before a variant is told to stop")
    parser.add_argument(
        "--nice", type=int, default=0,
        help="niceness of the harness and of every measured process's scheduling group (-10, as root: "
        "other programs on a shared machine get what the measured processes leave idle)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else DEFAULT
    args.lines = args.lines or sizes["lines"]
    args.files = args.files or sizes["files"]
    args.variants = tuple(name for name in args.variants.split(",") if name)
    unknown = set(args.variants) - set(VARIANTS)
    if unknown or not args.variants:
        parser.error(f"unknown variants {sorted(unknown)}: choose among {', '.join(VARIANTS)}")
    if args.lines < args.files or args.files < 1:
        parser.error("need at least one line per file")
    if args.burstFiles is None:
        args.burstFiles = sizes["burst"] if args.files == sizes["files"] else args.files // 2
    if not 0 <= args.burstFiles <= args.files:
        parser.error(f"--burst-files must lie between 0 and --files ({args.files})")
    args.report = args.report or args.workdir / ("STREAMING-quick.md" if args.quick else "STREAMING.md")
    return args


@attrs.frozen
class Run:
    """One variant in one fresh process: the drops, what the process saw, what it delivered."""

    variant: str
    repetition: int
    drops: list[float]
    ready: float | None
    finished: Finished
    result: dict | None
    log: str
    fingerprint: str


def runVariant(
    variant: str, repetition: int, stream: StreamInput, args: argparse.Namespace
) -> Run:
    """Start ``variant`` in a fresh process; once its query waits, drop the warm-up file, then
    the burst at once, then the paced files, each phase once the one before was processed."""
    root = args.workdir / "streaming" / f"{variant}-{repetition}"
    shutil.rmtree(root, ignore_errors=True)
    control, staging, watched = root / "control", root / "staging", root / "watched"
    for directory in (control, staging, watched):
        directory.mkdir(parents=True)
    names = [f"part-{index:05d}.txt" for index in range(len(stream.files))]
    for name, lines in zip(names, stream.files, strict=True):
        (staging / name).write_text("".join(line + "\n" for line in lines), encoding="ascii")
    windows = sorted({(start, end) for start, end, _ in stream.expected})
    config = {"watched": str(watched), "expectedWindows": windows}
    (control / "config.json").write_text(json.dumps(config))
    log = root / "log.txt"
    fingerprint = machine.sourceFingerprint()
    argv = [sys.executable, "-m", "benchmarks.streaming_variants", variant, str(control)]
    finished: list[Finished] = []
    processTimeout = 3 * READY_TIMEOUT_SECONDS + len(names) * args.interval + args.timeout + 120
    measured = threading.Thread(
        target=lambda: finished.append(runMeasured(argv, str(PROJECT), log, processTimeout, args.nice))
    )
    measured.start()
    drops: list[float] = []

    def drop(indices: range) -> None:
        for index in indices:
            os.rename(staging / names[index], watched / names[index])
            drops.append(time.time())

    ready = awaitFile(control / "ready", measured, READY_TIMEOUT_SECONDS)
    why = "never ready"
    if ready is not None:
        drop(range(1))
        why = "the warm-up file was not processed"
        if awaitProcessed(control, stream.phaseLines(range(1)), measured):
            drop(stream.burst)
            why = "the burst was not processed"
            if awaitProcessed(control, stream.phaseLines(range(1 + len(stream.burst))), measured):
                first = time.monotonic()
                for number, index in enumerate(stream.paced):
                    pause = first + number * args.interval - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
                    drop(range(index, index + 1))
                why = "timeout"
                awaitFile(control / "result.json", measured, args.timeout)
    if measured.is_alive() and not (control / "result.json").exists():
        (control / "stop").write_text(why)
    measured.join()
    resultPath = control / "result.json"
    result = json.loads(resultPath.read_text()) if resultPath.exists() else None
    readyAt = float((control / "ready").read_text()) if (control / "ready").exists() else None
    return Run(variant, repetition, drops, readyAt, finished[0], result, str(log), fingerprint)


def progressReports(control: pathlib.Path) -> list[dict]:
    """Return the progress reports the variant appended so far."""
    path = control / "progress.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def awaitProcessed(control: pathlib.Path, lines: int, process: threading.Thread) -> bool:
    """Wait until the query has read ``lines`` lines and then ran no micro-batch for
    ``QUIET_SECONDS`` (Structured Streaming's extra batch that applies the watermark included);
    return whether it did within ``PHASE_TIMEOUT_SECONDS``."""
    deadline = time.monotonic() + PHASE_TIMEOUT_SECONDS
    while time.monotonic() < deadline and process.is_alive():
        reports = progressReports(control)
        if sum(report["lines"] for report in reports) >= lines:
            if time.time() - max(report["received"] for report in reports) >= QUIET_SECONDS:
                return True
        time.sleep(0.05)
    return False


def awaitFile(path: pathlib.Path, process: threading.Thread, seconds: float) -> float | None:
    """Wait until ``path`` exists (return the time) or the process ended or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return time.time()
        if not process.is_alive():
            return time.time() if path.exists() else None
        time.sleep(0.02)
    return None


@attrs.frozen
class Figures:
    """What one run measured, as the report shows it."""

    check: str
    correct: bool
    windows: int
    batches: int
    warmUpSeconds: float | None
    burstLines: int | None
    burstBatches: int | None
    burstBusySeconds: float | None
    linesPerSecond: float | None
    wordsPerSecond: float | None
    dataBatchLinesPerSecond: float | None
    pacedLines: int
    pacedDataBatches: int
    pacedBusySeconds: float | None
    pacedLinesPerSecond: float | None
    latencies: list[float]
    emissions: int
    otherCpus: float
    failure: str | None


def busy(reports: list[dict]) -> float:
    """The summed ``triggerExecution`` time of ``reports``, in seconds."""
    return sum(report["durationMs"].get("triggerExecution", 0) for report in reports) / 1000


def figures(run: Run, stream: StreamInput) -> Figures | None:
    """Check the run's windows against the offline counts and compute its figures."""
    if run.result is None:
        return None
    delivered: Counter = Counter()
    repeated = 0
    arrivals: dict[tuple[int, int], list[float]] = defaultdict(list)
    for arrived, start, end, word, count in run.result["rows"]:
        if (start, end, word) in delivered:
            repeated += 1
        delivered[start, end, word] += count
        arrivals[start, end].append(arrived)
    correct = delivered == stream.expected and repeated == 0
    firstArrival = {window: min(times) for window, times in arrivals.items()}
    latencies = [
        firstArrival[window] - run.drops[closing]
        for window, closing in sorted(stream.closingFile.items())
        if window in firstArrival and closing in stream.paced and closing < len(run.drops)
    ]
    reports = sorted(run.result["progress"], key=lambda report: report["batchId"])
    burstDrop = run.drops[1] if len(run.drops) > 1 else float("inf")
    pacedDrop = run.drops[stream.paced.start] if len(run.drops) > stream.paced.start else float("inf")
    warm = [r for r in reports if r["received"] < burstDrop and r["lines"] > 0]
    burst = [r for r in reports if burstDrop <= r["received"] < pacedDrop]
    paced = [r for r in reports if r["received"] >= pacedDrop]
    burstLines = sum(r["lines"] for r in burst) if stream.burst else None
    burstBusy = busy(burst) if stream.burst else None
    rate = burstLines / burstBusy if burstBusy else None
    dataBusy = busy([r for r in burst if r["lines"] > 0])
    dataRate = burstLines / dataBusy if stream.burst and dataBusy else None
    pacedLines = sum(r["lines"] for r in paced)
    pacedRate = pacedLines / busy(paced) if paced and busy(paced) else None
    wordsPerLine = stream.words / stream.lines
    return Figures(
        check=checkText(delivered, stream.expected, repeated),
        correct=correct,
        windows=len(firstArrival),
        batches=len(reports),
        warmUpSeconds=busy(warm[:1]) if warm else None,
        burstLines=burstLines,
        burstBatches=len(burst) if stream.burst else None,
        burstBusySeconds=burstBusy,
        linesPerSecond=rate,
        wordsPerSecond=rate * wordsPerLine if rate else None,
        dataBatchLinesPerSecond=dataRate,
        pacedLines=pacedLines,
        pacedDataBatches=sum(1 for r in paced if r["lines"] > 0),
        pacedBusySeconds=busy(paced) if paced else None,
        pacedLinesPerSecond=pacedRate,
        latencies=latencies,
        emissions=sum(len(set(times)) for times in arrivals.values()),
        otherCpus=run.finished.otherCpus,
        failure=run.result.get("failure"),
    )


def checkText(delivered: Counter, expected: Counter, repeated: int) -> str:
    """Say whether the delivered counts equal the expected ones, and how they differ if not."""
    if delivered == expected and repeated == 0:
        return f"identical ({len(expected):,} window-word counts, {sum(expected.values()):,} words)"
    missing = len(set(expected) - set(delivered))
    extra = len(set(delivered) - set(expected))
    wrong = sum(1 for key in set(expected) & set(delivered) if expected[key] != delivered[key])
    return (
        f"DIFFERENT: {missing:,} expected window-word counts missing, {extra:,} unexpected, "
        f"{wrong:,} with another count, {repeated:,} delivered more than once"
    )


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def number(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def divide(mine: float | None, theirs: float | None) -> float | None:
    return mine / theirs if mine is not None and theirs else None


@attrs.frozen
class Summary:
    """A variant's figures over its repetitions: medians, latencies pooled."""

    runs: list[Run]
    figures: list[Figures]

    @property
    def ok(self) -> bool:
        return bool(self.figures) and all(f.correct for f in self.figures) and len(self.figures) == len(self.runs)

    def medianOf(self, field: str) -> float | None:
        return median([getattr(f, field) for f in self.figures if getattr(f, field) is not None])

    @property
    def latencies(self) -> list[float]:
        return [latency for f in self.figures for latency in f.latencies]

    def latency(self, q: float) -> float | None:
        return median(self.latencies) if q == 0.5 else quantile(self.latencies, q)

    def peakRss(self) -> int | None:
        peaks = [run.finished.peakRss for run in self.runs]
        return max(peaks) if peaks else None

    def wall(self) -> float | None:
        return median([run.finished.wallSeconds for run in self.runs])


def summaries(runs: list[Run], stream: StreamInput, variants: tuple[str, ...]) -> dict[str, Summary]:
    out = {}
    for variant in variants:
        mine = [run for run in runs if run.variant == variant]
        out[variant] = Summary(mine, [f for f in (figures(run, stream) for run in mine) if f is not None])
    return out


LABELS = {
    "sparkjet": "sparkjet",
    "ss-python-udf": "SS, Python UDF",
    "ss-jvm": "SS, JVM functions",
    "ss-python-udf-pickled": "SS, Python UDF without Arrow",
}


def render(args, start: dict, stream: StreamInput, runs: list[Run], status: str) -> str:
    """Return the report."""
    summary = summaries(runs, stream, args.variants)
    lines = ["# Windowed word count over a stream: sparkjet vs Spark Structured Streaming", "", status, ""]
    lines += [f"- **{key}**: {value}" for key, value in start.items()]
    lines += [
        f"- **Input**: {stream.lines:,} lines of `tutorials/data/tinyshakespeare.txt` (repeated if need be), "
        f"{stream.words:,} words, each line `<ts> <text>`, ts {STEP_MILLIS} ms after the line before "
        f"(from {BASE_MILLIS}), in {len(stream.files) - 2} files of about {stream.lines // (len(stream.files) - 2):,} "
        f"lines; {len(stream.closingFile)} tumbling windows of {WINDOW_MILLIS // 1000} s hold words. Two more "
        f"files of one line without words: a warm-up file before them (event time {STEP_MILLIS} ms before the "
        f"first line) and a final one {FAR_AHEAD_MILLIS // 1000} s of event time after the last line",
        f"- **Drops** (each file written into a staging directory, then renamed into the watched one), "
        f"in three phases, each once the query read the previous phase's lines and then ran no "
        f"micro-batch for {QUIET_SECONDS:g} s: the warm-up file; **burst**: {len(stream.burst)} files "
        f"({stream.phaseLines(stream.burst):,} lines) at once; **paced**: the other {len(stream.paced) - 1} "
        f"files ({stream.phaseLines(stream.paced) - 1:,} lines) and the final one, one every {args.interval:g} s",
        f"- **Every query**: watermark {LAG_MILLIS // 1000} s behind the highest event time, trigger every "
        f"{TRIGGER}, local[2], the session `Jet(master=\"local[2]\")` starts; " + settingsCheck(runs),
        f"- **Repetitions**: {args.repetitions} fresh process(es) per variant, order rotated; "
        "throughput figures are medians, latencies pooled over repetitions",
        f"- **sparkjet's sources during the run**: {fingerprintCheck(runs)}",
        "",
    ]
    lines += targetsSection(summary)
    lines += ratiosSection(summary)
    lines += variantsSection(summary, stream)
    lines += definitions()
    lines += failuresSection(runs)
    return "\n".join(lines) + "\n"


def settingsCheck(runs: list[Run]) -> str:
    found = {json.dumps(run.result["settings"], sort_keys=True) for run in runs if run.result}
    if not found:
        return "no process reported its settings"
    if len(found) > 1:
        return "**the processes' Spark settings differed** (see runs.json)"
    settings = json.loads(found.pop())
    listed = ", ".join(
        f"`{key}={value if len(value) < 80 else value[:40] + '…'}`"
        for key, value in settings.items()
        if key != "spark.executorEnv.PYTHONPATH"
    )
    arrow = {run.result.get("pythonUdfArrow") for run in runs if run.result}
    return (
        f"identical Spark settings in every process: {listed} (and the executors' PYTHONPATH); "
        f"`spark.sql.execution.pythonUDF.arrow.enabled` = {', '.join(map(str, sorted(arrow, key=str)))}"
    )


def fingerprintCheck(runs: list[Run]) -> str:
    prints = sorted({run.fingerprint for run in runs})
    if len(prints) <= 1:
        return f"unchanged (hash {prints[0] if prints else '—'})"
    return f"**changed during the run** (hashes {', '.join(prints)}): the variants ran different code"


def targetsSection(summary: dict[str, Summary]) -> list[str]:
    jet = summary.get("sparkjet")
    udf = summary.get("ss-python-udf")
    lines = ["## Targets", "", *head(("target", "figure", "verdict"), {0, 2})]
    if jet is None:
        return [*lines, row(("—", "sparkjet not run", "—")), ""]
    mine, theirs = jet.medianOf("linesPerSecond"), udf.medianOf("linesPerSecond") if udf else None
    share = divide(mine, theirs)
    lines.append(row((
        "sparkjet throughput ≥ the Python-UDF SS query's",
        f"{number(mine)} vs {number(theirs)} lines/s (× {ratio(share)})",
        verdict(None if share is None or not (jet.ok and udf.ok) else share >= 1),
    )))
    for label, q in (("median", 0.5), ("max", 1.0)):
        value = jet.latency(q)
        lines.append(row((
            f"sparkjet latency ({label} over windows) ≤ trigger {TRIGGER_SECONDS:g} s + 1 s",
            seconds(value),
            verdict(None if value is None or not jet.ok else value <= LATENCY_TARGET_SECONDS),
        )))
    return [*lines, ""]


def verdict(met: bool | None) -> str:
    return "—" if met is None else ("met" if met else "**missed**")


def ratiosSection(summary: dict[str, Summary]) -> list[str]:
    jet = summary.get("sparkjet")
    others = [name for name in summary if name != "sparkjet"]
    if jet is None or not others:
        return []
    lines = [
        "## sparkjet ÷ each Structured Streaming query",
        "",
        "Throughput above 1: sparkjet processes more lines per busy second; latency below 1: "
        "sparkjet's windows reach the sink sooner.",
        "",
        *head(("sparkjet ÷", "throughput (burst lines/s)", "data micro-batch alone", "median latency",
               "p90 latency", "max latency", "peak RSS", "process wall"), {0}),
    ]
    for name in others:
        other = summary[name]
        lines.append(row((
            LABELS[name],
            ratio(divide(jet.medianOf("linesPerSecond"), other.medianOf("linesPerSecond"))),
            ratio(divide(jet.medianOf("dataBatchLinesPerSecond"), other.medianOf("dataBatchLinesPerSecond"))),
            ratio(divide(jet.latency(0.5), other.latency(0.5))),
            ratio(divide(jet.latency(0.9), other.latency(0.9))),
            ratio(divide(jet.latency(1.0), other.latency(1.0))),
            ratio(divide(jet.peakRss(), other.peakRss())),
            ratio(divide(jet.wall(), other.wall())),
        )))
    return [*lines, ""]


def variantsSection(summary: dict[str, Summary], stream: StreamInput) -> list[str]:
    lines = [
        "## Each variant",
        "",
        *head(("variant", "counts", "warm-up batch", "burst: batches, busy", "burst lines/s",
               "burst words/s", "burst, data micro-batch alone: lines/s", "paced: batches with data, busy", "paced lines/s", "latency median",
               "p90", "max", "peak RSS", "wall", "other CPUs"), {0, 1, 3, 7}),
    ]
    for name, s in summary.items():
        checks = "; ".join(sorted({f.check for f in s.figures})) or "no result"
        lines.append(row((
            LABELS[name],
            checks,
            seconds(s.medianOf("warmUpSeconds")),
            "; ".join(f"{f.burstBatches}, {seconds(f.burstBusySeconds)}" for f in s.figures) or "—",
            number(s.medianOf("linesPerSecond")),
            number(s.medianOf("wordsPerSecond")),
            number(s.medianOf("dataBatchLinesPerSecond")),
            "; ".join(f"{f.pacedDataBatches} of {len(stream.paced)} files, {seconds(f.pacedBusySeconds)}"
                      for f in s.figures) or "—",
            number(s.medianOf("pacedLinesPerSecond")),
            seconds(s.latency(0.5)),
            seconds(s.latency(0.9)),
            seconds(s.latency(1.0)),
            f"{s.peakRss() / 2**20:,.0f} MiB" if s.peakRss() else "—",
            seconds(s.wall()),
            ratio(s.medianOf("otherCpus")),
        )))
    lines += ["", "Latency of each window closed in the paced phase (s), in window order, per repetition:", ""]
    for name, s in summary.items():
        for f in s.figures:
            lines.append(f"- {LABELS[name]}: " + " ".join(f"{value:.2f}" for value in f.latencies))
    return [*lines, ""]


def definitions() -> list[str]:
    return [
        "## What the figures are",
        "",
        "- **burst lines/s** (the throughput the targets use): the burst's input lines ÷ the summed "
        "`triggerExecution` time of the micro-batches that ran between the burst's drop and the paced "
        "phase's first drop, from the query's own progress reports (a `StreamingQueryListener`): the "
        "micro-batch that read the burst and, for Structured Streaming, the no-data micro-batch that "
        "applies the watermark it computed and emits the windows it closed. It is the rate at which a "
        "query works off input that is waiting for it: with no `maxFilesPerTrigger` (sparkjet's "
        "`fileWatcher` sets none, so no variant does) a query under sustained overload takes everything "
        "that arrived during a micro-batch into the next one, and the burst is that case in full. "
        "Input lines, not words; **burst words/s** is lines/s × the input's words per line. "
        "**Data micro-batch alone** leaves the no-data micro-batch out: the rate of reading, "
        "tokenizing and aggregating the burst, without emitting the windows it closed (sparkjet emits "
        "them in the same micro-batch, so its two figures are one).",
        "- **paced lines/s**: the same over the paced phase: input lines ÷ busy time of its micro-batches. "
        "Busy time leaves out the idle waits between drops; a query that keeps up runs one micro-batch per "
        "file (\"batches with data\" = the paced files), so this is the rate on small micro-batches, "
        "where each micro-batch's fixed cost weighs most.",
        "- **warm-up batch**: the `triggerExecution` time of the micro-batch that read the warm-up file "
        "(one line, no word): the query's first, with its Python workers starting; in no other figure.",
        "- **latency** of a window [s, e) closed in the paced phase: the time its first result reached "
        "the sink minus the time the harness renamed into the watched directory the file that moved "
        "the watermark past e (the first file whose highest timestamp t has t − 2 s ≥ e). Both are the "
        "machine's wall clock, read right after the rename and when the rows reached the driver: for "
        "sparkjet, when a thread polling `jet.getList` every 5 ms saw them; for Structured Streaming, when "
        "`foreachBatch` had collected the micro-batch's rows. It includes the wait for the next trigger "
        "(up to 1 s), any micro-batch still running, and, for Structured Streaming, the further "
        "micro-batch that applies the watermark the previous one computed. Windows closed by the burst "
        "have no latency figure.",
        "- **Not the same guarantees**: Structured Streaming writes its window state (the state store, "
        "8 partitions) and its offsets to the checkpoint at every micro-batch; sparkjet's query "
        "checkpoints only its offsets, and its window state lives in the driver's memory between "
        "micro-batches (the README: saving it under the checkpoint for restarts is still to come), so "
        "each of its micro-batches does less work than Structured Streaming's.",
        "- **counts**: every delivered `(window, word, count)` against a `Counter` per window made "
        "offline from the same lines; a result delivered twice counts as a difference.",
        "- **peak RSS**, **wall**, **other CPUs**: as the batch benchmark measures them (the process "
        "session's summed RSS; the whole process, JVM start and the drops' pauses included; the CPUs "
        "other programs kept busy meanwhile, on average).",
        "",
    ]


def failuresSection(runs: list[Run]) -> list[str]:
    out = []
    for run in runs:
        failed = run.finished.returncode != 0 or run.result is None or run.result.get("failure")
        ended = run.result.get("ended") if run.result else None
        if failed or ended != "all windows arrived":
            tail = pathlib.Path(run.log).read_text(errors="replace").splitlines()[-25:]
            out += [
                f"### {LABELS[run.variant]}, repetition {run.repetition + 1}: exit {run.finished.returncode}, "
                f"{ended or 'no result'}" + (f", {run.result['failure']}" if run.result and run.result.get("failure") else ""),
                "",
                "```text",
                *tail,
                "```",
                "",
            ]
    return ["## Failures", "", *out] if out else []


def rawRun(run: Run, stream: StreamInput) -> dict:
    f = figures(run, stream)
    return {
        "variant": run.variant,
        "repetition": run.repetition,
        "drops": run.drops,
        "ready": run.ready,
        "finished": attrs.asdict(run.finished),
        "figures": attrs.asdict(f) if f else None,
        "progress": run.result["progress"] if run.result else None,
        "ended": run.result.get("ended") if run.result else None,
        "settings": run.result.get("settings") if run.result else None,
        "log": run.log,
        "fingerprint": run.fingerprint,
    }


def main(argv: list[str] | None = None) -> None:
    args = parseArgs(argv)
    if args.nice:
        os.nice(args.nice)
    began = datetime.datetime.now(datetime.UTC)
    start = {
        **machine.runHeader("benchmarks.streaming", argv, began),
        "Niceness": f"{args.nice} for the harness and every measured process's scheduling group",
    }
    stream = buildInput(args.lines, args.files, args.burstFiles)
    print(
        f"{stream.lines:,} lines, {stream.words:,} words in {len(stream.files) - 2} files "
        f"(burst {len(stream.burst)}, paced {len(stream.paced) - 1}) and the warm-up and final ones; "
        f"{len(stream.closingFile)} windows; variants {', '.join(args.variants)}",
        flush=True,
    )
    runs: list[Run] = []
    args.report.parent.mkdir(parents=True, exist_ok=True)
    for repetition in range(args.repetitions):
        shift = repetition % len(args.variants)
        for variant in args.variants[shift:] + args.variants[:shift]:
            run = runVariant(variant, repetition, stream, args)
            runs.append(run)
            f = figures(run, stream)
            print(
                f"{variant} #{repetition + 1}: exit {run.finished.returncode}, "
                + (f"{f.check}; burst {number(f.linesPerSecond)} lines/s, paced "
                   f"{number(f.pacedLinesPerSecond)} lines/s; latency median "
                   f"{seconds(median(f.latencies))}, max {seconds(max(f.latencies, default=None))}"
                   if f else "no result")
                + f"; wall {run.finished.wallSeconds:.1f} s",
                flush=True,
            )
            status = f"**Incomplete**: {len(runs)} processes so far; the run goes on or was stopped."
            args.report.write_text(render(args, start, stream, runs, status))
    minutes = (datetime.datetime.now(datetime.UTC) - began).total_seconds() / 60
    start["Date"] += f", {minutes:.1f} minutes"
    start["Load average (1, 5, 15 min) at start"] += f" (at the end: {machine.loadAverage()})"
    args.report.write_text(render(args, start, stream, runs, f"Complete: {len(runs)} processes."))
    rawPath = args.workdir / "streaming" / ("runs-quick.json" if args.quick else "runs.json")
    rawPath.write_text(json.dumps([rawRun(run, stream) for run in runs], indent=1, default=str))
    print(args.report.read_text())
    print(f"Written to {args.report}; raw runs in {rawPath}")


if __name__ == "__main__":
    main()
