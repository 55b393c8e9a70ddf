"""Run the benchmark suite and write RESULTS.md: ``python -m benchmarks --help``."""

import argparse
import datetime
import json
import os
import pathlib
import shlex
import sys

import attrs

from benchmarks import inputs, machine, report
from benchmarks.inputs import PROJECT
from benchmarks.suites import Run, Suite, runSuite
from benchmarks.variants import TINY, WORD_COUNT
from benchmarks.variants.planning import STAGES

LAYOUTS = (1, 8)
DEFAULT_KEYS = 10_000_000
QUICK_KEYS = 100_000


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(prog="benchmarks", description=__doc__)
    parser.add_argument("--repetitions", type=int, default=3, help="fresh processes per variant and input (default 3)")
    parser.add_argument("--sizes", default="100,500", help="corpus sizes in MiB, comma-separated; empty for none")
    parser.add_argument("--variants", default=",".join(WORD_COUNT), help=f"word-count variants (default {','.join(WORD_COUNT)})")
    parser.add_argument("--scale", action="store_true", help="add the high-cardinality input (--keys distinct keys)")
    parser.add_argument("--keys", type=int, default=None, help=f"distinct keys of --scale (default {DEFAULT_KEYS:,})")
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 MiB, 1 repetition, 100,000 keys")
    parser.add_argument("--workdir", default="/tmp/sparkjet-benchmarks", help="scratch directory for inputs and logs")
    parser.add_argument("--results", default=None, help="where to write the report (default benchmarks/RESULTS.md; "
                        "with --quick, RESULTS-quick.md in the workdir)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before a process is killed (default 3600)")
    args = parser.parse_args(argv)
    variants = tuple(name for name in args.variants.split(",") if name)
    unknown = [name for name in variants if name not in WORD_COUNT]
    if unknown or not variants:
        parser.error(f"--variants: unknown {unknown or 'none given'}; choose from {', '.join(WORD_COUNT)}")
    args.variants = variants
    args.sizes = [int(size) for size in args.sizes.split(",") if size]
    if args.quick:
        args.sizes, args.repetitions = [1], 1
    args.keys = args.keys or (QUICK_KEYS if args.quick else DEFAULT_KEYS)
    workdir = pathlib.Path(args.workdir)
    args.workdir = workdir
    args.results = pathlib.Path(args.results or (workdir / "RESULTS-quick.md" if args.quick else PROJECT / "benchmarks" / "RESULTS.md"))
    return args


def buildSuites(args: argparse.Namespace) -> list[Suite]:
    """Build every input in the workdir and return the suites over them, in running order."""
    root = args.workdir / "inputs"
    print(f"Building the inputs in {root} ...", flush=True)
    suites = [
        Suite("planning", f"Planning a pipeline of {STAGES} chained map stages", None, ("planning",)),
        Suite("tiny", "Tiny job: 10 lines", inputs.tinyInput(root), tuple(TINY)),
    ]
    for size in args.sizes:
        for files in LAYOUTS:
            corpus = inputs.corpusInput(root, size, files)
            suites.append(Suite("word-count", corpus.name, corpus, args.variants))
    if args.scale:
        keys = inputs.keysInput(root, args.keys)
        suites.append(Suite("word-count", f"High cardinality: {keys.name}", keys, args.variants))
    return suites


def header(args: argparse.Namespace, command: str, started: datetime.datetime, loads: list[str]) -> dict[str, str]:
    """Return the facts RESULTS.md opens with."""
    return {
        "Command": f"`{command}` (from the project directory)",
        "Date": f"{started:%Y-%m-%d %H:%M %Z}, {(datetime.datetime.now(datetime.timezone.utc) - started).total_seconds() / 60:.0f} minutes",
        **machine.describe(),
        "Load average (1, 5, 15 min) at start / now": " / ".join(loads + [machine.loadAverage()]),
        "Repetitions": f"{args.repetitions} per variant and input, each variant in a fresh process, the order rotated",
    }


def write(path: pathlib.Path, args, command, started, loads, suites: list[Suite], runs: list[Run], status: str) -> None:
    """Write the report as it stands."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.render(header(args, command, started, loads), suites, runs, status))


def main(argv: list[str] | None = None) -> None:
    """Build the inputs, run every suite, write RESULTS.md and the raw runs."""
    args = parseArgs(argv)
    command = os.environ.get("SPARKJET_BENCHMARK_COMMAND") or shlex.join(["python", "-m", "benchmarks", *(argv or sys.argv[1:])])
    started = datetime.datetime.now(datetime.timezone.utc)
    loads = [machine.loadAverage()]
    suites = buildSuites(args)
    runs: list[Run] = []

    def onRun(run: Run) -> None:
        print(report.progressLine(run), flush=True)
        runs.append(run)
        status = f"**Incomplete**: {len(runs)} processes done so far; the run is still going or was interrupted."
        write(args.results, args, command, started, loads, suites, runs, status)

    for suite in suites:
        runSuite(suite, args.repetitions, args.workdir, args.timeout, onRun)
    write(args.results, args, command, started, loads, suites, runs, f"Complete: {len(runs)} processes.")
    (args.workdir / "runs.json").write_text(json.dumps([rawRun(run) for run in runs], indent=1))
    print(pathlib.Path(args.results).read_text())
    print(f"Written to {args.results}; raw runs in {args.workdir / 'runs.json'}")


def rawRun(run: Run) -> dict:
    """Return a run as plain data, its suite by title."""
    return {**attrs.asdict(run, recurse=True, filter=lambda field, _: field.name != "suite"), "suite": run.suite.title}


if __name__ == "__main__":
    main()
