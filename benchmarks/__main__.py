"""Run the benchmark suite and write RESULTS.md (see benchmarks/README.md)."""

import argparse
import datetime
import json
import os
import pathlib
import shlex
import sys

import attrs

from benchmarks import inputs, machine, pyspy, report
from benchmarks.inputs import PROJECT
from benchmarks.suites import Run, Suite, runSuite
from benchmarks.variants import TINY, WORD_COUNT
from benchmarks.variants.planning import STAGES

LAYOUTS = (1, 8)
DEFAULT_KEYS = 10_000_000
QUICK_KEYS = 100_000
ORDER = "each variant in a fresh process, the order rotated"


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(prog="benchmarks", description=__doc__)
    add = parser.add_argument
    add("--repetitions", type=int, default=3, help="fresh processes per variant and input")
    add("--sizes", default="100,500", help="corpus sizes in MiB, comma-separated; empty for none")
    add(
        "--second-job-sizes",
        dest="secondJobSizes",
        default="100",
        help="corpus sizes in MiB whose Spark variants run their job again in the same session",
    )
    add("--variants", default=",".join(WORD_COUNT), help="word-count variants, comma-separated")
    add("--scale", action="store_true", help="add the high-cardinality input (--keys keys)")
    add("--keys", type=int, help=f"distinct keys of --scale (default {DEFAULT_KEYS:,})")
    add("--quick", action="store_true", help="smoke test: 1 MiB, 1 repetition, 100,000 keys")
    add("--workdir", default="/tmp/sparkjet-benchmarks", help="scratch for inputs and logs")
    add("--results", help="the report (default benchmarks/RESULTS.md; --quick: in the workdir)")
    add("--timeout", type=float, default=3600, help="seconds before a process is killed")
    add("--nice", type=int, default=0, help="niceness of the measured processes (root for < 0)")
    add("--no-profile", dest="noProfile", action="store_true", help="no py-spy profile at the end")
    args = parser.parse_args(argv)
    args.variants = tuple(name for name in args.variants.split(",") if name)
    unknown = [name for name in args.variants if name not in WORD_COUNT]
    if unknown or not args.variants:
        choices = ", ".join(WORD_COUNT)
        parser.error(f"--variants: unknown {unknown or 'none given'}; choose from {choices}")
    args.sizes = [int(size) for size in args.sizes.split(",") if size]
    args.secondJobSizes = [int(size) for size in args.secondJobSizes.split(",") if size]
    if args.quick:
        args.sizes, args.secondJobSizes, args.repetitions = [1], [1], 1
    if not args.noProfile and pyspy.executable() is None:
        parser.error("py-spy is not installed: pip install -e '.[bench]', or pass --no-profile")
    args.keys = args.keys or (QUICK_KEYS if args.quick else DEFAULT_KEYS)
    args.workdir = pathlib.Path(args.workdir)
    default = (
        args.workdir / "RESULTS-quick.md" if args.quick else PROJECT / "benchmarks" / "RESULTS.md"
    )
    args.results = pathlib.Path(args.results or default)
    return args


def buildSuites(args: argparse.Namespace) -> list[Suite]:
    """Build every input in the workdir and return the suites over them, in running order."""
    root = args.workdir / "inputs"
    print(f"Building the inputs in {root} ...", flush=True)
    suites = [
        Suite(
            "planning", f"Planning a pipeline of {STAGES} chained map stages", None, ("planning",)
        ),
        Suite("tiny", "Tiny job: 10 lines", inputs.tinyInput(root), tuple(TINY)),
    ]
    for size in args.sizes:
        for files in LAYOUTS:
            corpus = inputs.corpusInput(root, size, files)
            secondJob = size in args.secondJobSizes
            suites.append(
                Suite("word-count", corpus.name, corpus, args.variants, secondJob, targeted=True)
            )
    if args.scale:
        keys = inputs.keysInput(root, args.keys)
        suites.append(Suite("word-count", f"High cardinality: {keys.name}", keys, args.variants))
    return suites


@attrs.frozen
class Start:
    """What the run records as it starts: the command, the time, the machine, the load."""

    command: str
    time: datetime.datetime
    facts: dict[str, str]
    load: str


def header(args: argparse.Namespace, start: Start) -> dict[str, str]:
    """Return the facts RESULTS.md opens with."""
    minutes = (now() - start.time).total_seconds() / 60
    commit = machine.gitDescription()
    changed = commit != start.facts["sparkjet commit"]
    return {
        "Command": f"`{start.command}` (from the project directory)",
        "Date": f"{start.time:%Y-%m-%d %H:%M %Z}, {minutes:.0f} minutes",
        **start.facts,
        **({"sparkjet commit at the end": commit} if changed else {}),
        "Load average (1, 5, 15 min) at start / now": f"{start.load} / {machine.loadAverage()}",
        "Repetitions": f"{args.repetitions} per variant and input, {ORDER}",
        "Second job": secondJobFact(args),
        "Niceness": f"{args.nice} for the harness and every measured process's scheduling group",
    }


def secondJobFact(args: argparse.Namespace) -> str:
    """Return which inputs' Spark variants run a second job in the same session."""
    sizes = [size for size in args.sizes if size in args.secondJobSizes]
    if not sizes:
        return "none"
    listed = ", ".join(f"{size} MiB" for size in sizes)
    return f"the Spark variants run their job again in the same session on the corpus of {listed}"


def now() -> datetime.datetime:
    """Return the time in UTC."""
    return datetime.datetime.now(datetime.UTC)


def write(
    args: argparse.Namespace,
    start: Start,
    suites: list[Suite],
    runs: list[Run],
    status: str,
    recording: pyspy.Recording | None = None,
):
    """Write the report as it stands."""
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(report.render(header(args, start), suites, runs, status, recording))


def profileWorkers(
    args: argparse.Namespace, suites: list[Suite], runs: list[Run], start: Start
) -> pyspy.Recording | None:
    """Run sparkjet once more under py-spy on the smallest one-file corpus, if the run has one."""
    if args.noProfile:
        return None
    suite = pyspy.profiledSuite(suites)
    if suite is None:
        print("No corpus input, so no profile of sparkjet's workers.", flush=True)
        return None
    print(f"Profiling sparkjet's workers on {suite.title} with py-spy ...", flush=True)
    status = f"**Incomplete**: {len(runs)} processes; profiling sparkjet's workers."
    write(args, start, suites, runs, status)
    recording = pyspy.recordProfile(
        pyspy.executable(), suite, args.workdir, args.timeout, args.nice
    )
    print(f"Profiled: counts {report.verdict(recording.run)}; samples in {recording.rawPath}")
    return recording


def main(argv: list[str] | None = None) -> None:
    """Build the inputs, run every suite, write RESULTS.md and the raw runs."""
    args = parseArgs(argv)
    if args.nice:
        os.nice(args.nice)
    typed = shlex.join(["python", "-m", "benchmarks", *(argv or sys.argv[1:])])
    command = os.environ.get("SPARKJET_BENCHMARK_COMMAND") or typed
    start = Start(command, now(), machine.describe(), machine.loadAverage())
    suites = buildSuites(args)
    runs: list[Run] = []

    def onRun(run: Run) -> None:
        print(report.progressLine(run), flush=True)
        runs.append(run)
        status = f"**Incomplete**: {len(runs)} processes so far; the run goes on or was stopped."
        write(args, start, suites, runs, status)

    for suite in suites:
        runSuite(suite, args.repetitions, args.workdir, args.timeout, args.nice, onRun)
    recording = profileWorkers(args, suites, runs, start)
    profiled = " and the profiled one" if recording is not None else ""
    write(args, start, suites, runs, f"Complete: {len(runs)} processes{profiled}.", recording)
    (args.workdir / "runs.json").write_text(json.dumps([rawRun(run) for run in runs], indent=1))
    print(args.results.read_text())
    print(f"Written to {args.results}; raw runs in {args.workdir / 'runs.json'}")


def rawRun(run: Run) -> dict:
    """Return a run as plain data, its suite by title."""
    fields = attrs.asdict(run, filter=lambda field, _: field.name != "suite")
    return {**fields, "suite": run.suite.title}


if __name__ == "__main__":
    main()
