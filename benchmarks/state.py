"""State between micro-batches (issue 26): a running count per key, sparkjet against Structured
Streaming's state stores, in one run, on the same data.

``python -m benchmarks.state [--quick | --long | --connect] [--keys 10000,100000,1000000] [--words N] ...``

Every micro-batch is one file of N words (one a line) drawn from K keys. The first file puts every
one of the K keys into the state once; then come the warm-up micro-batches and the measured ones.
Two kinds of input: **uniform** (each word drawn from all K keys) and **hot** (each word drawn
from the same 20k keys, K held). Each variant (``benchmarks.state_variants``) runs in a fresh
process on the session ``Jet(master="local[2]")`` starts, the variants of an input (and all the
hot inputs) side by side, taking their micro-batches in turn: sparkjet's
``groupingKey(wholeItem()).rollingAggregate(counting())`` under EXACTLY_ONCE, Structured
Streaming's ``groupBy().count()`` on the HDFS-backed and the RocksDB state store, and
``applyInPandasWithState`` (Python state on Spark's store). The report gives the median time of a
measured micro-batch (the query's ``triggerExecution``) as ratios to sparkjet's, a hot micro-batch
against the one with 20k keys held, the state bytes written per micro-batch and the driver's
memory; every run's counts of the sampled keys are checked against the harness's own. With
``--connect`` (issue 36), sparkjet's count on a classic session beside the same count on a Spark
Connect session (``sparkjet-connect``: this harness starts a Connect server on ``local[2]`` in a
process of its own for each group that runs it, and the variant's process is its client).
"""

import argparse
import contextlib
import datetime
import json
import pathlib
import random
import shutil
import statistics
import sys
import threading
import time
from collections import Counter

import attrs

from benchmarks import machine
from benchmarks.connect_server import connectServer
from benchmarks.inputs import PROJECT
from benchmarks.measure import Finished, runMeasured
from benchmarks.state_report import HOT_KEYS, render
from benchmarks.state_variants import REMOTE_VARIANTS, SAMPLE_SUFFIX, VARIANTS

SEED = 26
DISTINCT_FILES = 20
"""At most this many different micro-batch files per input; a longer run links them again under new names."""
PANDAS_PATH = PROJECT / ".venv" / "state-benchmark-packages"
"""Where ``bash benchmarks/run state`` installs pandas and pyarrow (never sparkjet's dependencies)."""
DEFAULT = {
    "keys": "10000,100000,1000000", "hotKeys": "20000,500000,1000000", "words": 200_000,
    "warmUp": 2, "measured": 5, "variants": ",".join(VARIANTS), "hotVariants": "sparkjet,ss-rocksdb",
}
QUICK = {
    "keys": "2000", "hotKeys": "", "words": 2_000, "warmUp": 1, "measured": 2,
    "variants": "sparkjet,ss-hdfs", "hotVariants": "",
}
LONG = {
    "keys": "1000000", "hotKeys": "", "words": 200_000, "warmUp": 9, "measured": 191,
    "variants": "sparkjet", "hotVariants": "",
}
CONNECT = {
    "keys": "100000", "hotKeys": "", "words": 200_000, "warmUp": 3, "measured": 20,
    "variants": "sparkjet,sparkjet-connect", "hotVariants": "",
}


def word(key: int) -> str:
    """The word of key number ``key``."""
    return f"k{key:07d}"


@attrs.frozen
class Input:
    """One input: the load file (every key once), the micro-batch files in order (a file may come
    again under another name), and the count every sampled word ends with."""

    kind: str
    keys: int
    load: pathlib.Path
    batches: tuple[tuple[pathlib.Path, str], ...]
    expected: dict[str, int]

    @property
    def label(self) -> str:
        return f"{self.kind} {self.keys:,}"


def buildInput(root: pathlib.Path, kind: str, keys: int, words: int, batches: int) -> Input:
    """Write the load file and up to ``DISTINCT_FILES`` micro-batch files of ``words`` words drawn
    from all ``keys`` keys (uniform) or from the first ``HOT_KEYS`` (hot)."""
    directory = root / f"{kind}-{keys}-{words}"
    directory.mkdir(parents=True, exist_ok=True)
    load = directory / "a-load.txt"
    if not load.exists():
        load.with_suffix(".tmp").write_text("".join(word(key) + "\n" for key in range(keys)))
        load.with_suffix(".tmp").rename(load)
    drawn = min(keys, HOT_KEYS) if kind == "hot" else keys
    distinct = []
    sampledCounts = []
    for number in range(min(batches, DISTINCT_FILES)):
        path = directory / f"b-{number:03d}.txt"
        draws = random.Random(f"{SEED}-{kind}-{keys}-{words}-{number}").choices(range(drawn), k=words)
        if not path.exists():
            path.with_suffix(".tmp").write_text("".join(word(key) + "\n" for key in draws))
            path.with_suffix(".tmp").rename(path)
        distinct.append(path)
        sampledCounts.append(Counter(word(key) for key in draws if word(key).endswith(SAMPLE_SUFFIX)))
    expected = Counter({word(key): 1 for key in range(keys) if word(key).endswith(SAMPLE_SUFFIX)})
    for number in range(batches):
        expected.update(sampledCounts[number % len(distinct)])
    named = tuple((distinct[number % len(distinct)], f"b-{number:05d}.txt") for number in range(batches))
    return Input(kind, keys, load, named, dict(expected))


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.state", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a smoke test: 2,000 keys, 2,000 words, sparkjet and ss-hdfs")
    mode.add_argument("--long", action="store_true", help="sparkjet alone at 1M keys over 200 micro-batches: the driver's memory after 10 and 200")
    mode.add_argument("--connect", action="store_true", help="sparkjet on a classic session and on Spark Connect at 100k keys held, 20 micro-batches measured (issue 36)")
    parser.add_argument("--keys", help=f"uniform inputs: keys held, comma-separated (default {DEFAULT['keys']}; 3000000 opt-in)")
    parser.add_argument("--hot-keys", dest="hotKeys", help=f"hot inputs (the same {HOT_KEYS:,} keys touched): keys held (default {DEFAULT['hotKeys']}; '' for none)")
    parser.add_argument("--words", type=int, help=f"words per micro-batch (default {DEFAULT['words']:,})")
    parser.add_argument("--warm-up", dest="warmUp", type=int, help=f"micro-batches after the load not measured (default {DEFAULT['warmUp']})")
    parser.add_argument("--measured", type=int, help=f"micro-batches measured (default {DEFAULT['measured']})")
    parser.add_argument("--variants", help=f"on the uniform inputs, of {', '.join(VARIANTS)} (default all)")
    parser.add_argument("--hot-variants", dest="hotVariants", help=f"on the hot inputs (default {DEFAULT['hotVariants']})")
    parser.add_argument("--pandas-max-keys", dest="pandasMaxKeys", type=int, default=100_000,
                        help="ss-pandas-state only up to this many keys held (default 100,000: a Python call per key)")
    parser.add_argument("--groups-at-once", dest="groupsAtOnce", action="store_true",
                        help="run the uniform inputs and the hot group at the same time, each still taking its "
                        "processes' micro-batches in turn: a shorter run, its groups sharing the machine")
    parser.add_argument("--repetitions", type=int, default=1, help="fresh processes per variant and input, the order rotated (default 1)")
    parser.add_argument("--workdir", type=pathlib.Path, default=pathlib.Path("/tmp/sparkjet-benchmarks"),
                        help="scratch: state/inputs/, state/runs/ (each process's directories, log, result), state/runs.json")
    parser.add_argument("--report", type=pathlib.Path, help="default WORKDIR/STATE.md (--quick: STATE-quick.md, --long: STATE-long.md, --connect: STATE-connect.md)")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds before a process is killed (default 7200)")
    parser.add_argument("--nice", type=int, default=0, help="niceness of every measured process's scheduling group (-10 as root)")
    args = parser.parse_args(argv)
    preset = QUICK if args.quick else LONG if args.long else CONNECT if args.connect else DEFAULT
    for name, value in preset.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.keys = [int(k) for k in args.keys.split(",") if k]
    args.hotKeys = [int(k) for k in args.hotKeys.split(",") if k]
    args.variants = tuple(v for v in args.variants.split(",") if v)
    args.hotVariants = tuple(v for v in args.hotVariants.split(",") if v)
    unknown = set(args.variants + args.hotVariants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}: choose among {', '.join(VARIANTS)}")
    if "ss-pandas-state" in args.variants + args.hotVariants and not (PANDAS_PATH / "pandas").is_dir():
        parser.error(
            f"ss-pandas-state needs pandas and pyarrow in {PANDAS_PATH}: `bash benchmarks/run state` installs them "
            "there; or leave it out with --variants"
        )
    if args.measured < 1 or args.warmUp < 0 or args.words < 1:
        parser.error("need at least one measured micro-batch and one word per micro-batch")
    suffix = "-quick" if args.quick else "-long" if args.long else "-connect" if args.connect else ""
    args.report = args.report or args.workdir / f"STATE{suffix}.md"
    return args


@attrs.frozen
class Run:
    """One variant over one input in one fresh process: its micro-batches and what they delivered."""

    variant: str
    input: Input
    repetition: int
    finished: Finished
    result: dict | None
    log: str
    loadAverage: str

    def measuredBatches(self, warmUp: int) -> list[dict]:
        """The micro-batches after the load and the warm-up."""
        return self.result["batches"][1 + warmUp :] if self.result else []

    def check(self) -> str:
        """Whether the counts of the sampled words equal the harness's."""
        if self.result is None:
            return "no result"
        delivered = self.result["sampledCounts"]
        wrong = sorted(w for w, count in self.input.expected.items() if delivered.get(w) != count)
        if wrong:
            w = wrong[0]
            return f"{len(wrong)} of {len(self.input.expected)} sampled words wrong ({w}: {delivered.get(w)}, expected {self.input.expected[w]})"
        return "ok"


def prepare(variant: str, stream: Input, repetition: int, args: argparse.Namespace, remote: str | None) -> pathlib.Path:
    """Make ``variant``'s control directory for ``stream``: its config (``remote``: the Spark
    Connect server's URL), its files under the names each micro-batch gets (linked into its
    watched directory one by one)."""
    root = args.workdir / "state" / "runs" / f"{stream.kind}-{stream.keys}-{variant}-{repetition}"
    shutil.rmtree(root, ignore_errors=True)
    watched, checkpoint, links = root / "watched", root / "checkpoint", root / "links"
    watched.mkdir(parents=True)
    links.mkdir()
    files = []
    for source, name in ((stream.load, "a-load.txt"), *stream.batches):
        (links / name).hardlink_to(source)
        files.append(str(links / name))
    batches = len(stream.batches)
    config = {
        "watched": str(watched),
        "checkpoint": str(checkpoint),
        "stateDirectory": str(checkpoint / "state"),
        "files": files,
        "memoryAfter": [] if variant in REMOTE_VARIANTS else sorted({1, *range(10, batches + 1, 10), batches} & set(range(1, batches + 1))),
        "remote": remote if variant in REMOTE_VARIANTS else None,
        "pythonPath": str(PANDAS_PATH) if variant == "ss-pandas-state" else None,
    }
    (root / "config.json").write_text(json.dumps(config))
    return root


def runTogether(group: list[tuple[str, Input]], repetition: int, args: argparse.Namespace) -> list[Run]:
    """Start a process for each (variant, input) of ``group`` at once (and first, where one runs
    on Spark Connect, a fresh server for the group), then let them run their micro-batches in
    turn, one micro-batch of one process at a time, the order rotated each micro-batch: each
    meets the machine's load alike. Return their runs."""
    with contextlib.ExitStack() as server:
        remote = None
        if any(variant in REMOTE_VARIANTS for variant, _ in group):
            logs = args.workdir / "state" / "runs" / f"connect-server-{group[0][1].kind}-{group[0][1].keys}-{repetition}"
            logs.mkdir(parents=True, exist_ok=True)
            remote = server.enter_context(connectServer(logs))
        return runInTurn(group, [prepare(variant, stream, repetition, args, remote) for variant, stream in group], repetition, args)


def runInTurn(group: list[tuple[str, Input]], roots: list[pathlib.Path], repetition: int, args: argparse.Namespace) -> list[Run]:
    """Run each (variant, input) of ``group`` in a process of its own from its control directory
    in ``roots``, their micro-batches in turn (see ``runTogether``); return their runs."""
    finished: dict[int, Finished] = {}
    threads = [
        threading.Thread(target=lambda i=i, v=variant: finished.__setitem__(i, runMeasured(
            [sys.executable, "-m", "benchmarks.state_variants", v, str(roots[i])],
            str(PROJECT), roots[i] / "log.txt", args.timeout, args.nice,
        )))
        for i, (variant, _) in enumerate(group)
    ]
    for thread in threads:
        thread.start()
    for number in range(1 + len(group[0][1].batches)):
        shift = (number + repetition) % len(group)
        for i in [*range(shift, len(group)), *range(shift)]:
            (roots[i] / f"go-{number}").write_text(str(time.time()))
            while threads[i].is_alive() and not (roots[i] / f"done-{number}").exists():
                time.sleep(0.05)
    for thread in threads:
        thread.join()
    runs = []
    for i, (variant, stream) in enumerate(group):
        resultPath = roots[i] / "result.json"
        result = json.loads(resultPath.read_text()) if resultPath.exists() else None
        shutil.rmtree(roots[i] / "links", ignore_errors=True)
        runs.append(Run(variant, stream, repetition, finished[i], result, str(roots[i] / "log.txt"), machine.loadAverage()))
    return runs


def plannedGroups(args: argparse.Namespace) -> list[list[tuple[str, str, int]]]:
    """Return the groups of (variant, kind, keys) that run side by side, in the order they run:
    the variants of each uniform input, then every hot input's variants together (their
    micro-batches alternate, so that each number of keys held meets the machine's load alike)."""

    def fits(variant: str, keys: int) -> bool:
        return variant != "ss-pandas-state" or keys <= args.pandasMaxKeys

    groups = [[(v, "uniform", keys) for v in args.variants if fits(v, keys)] for keys in args.keys]
    groups.append([(v, "hot", keys) for keys in args.hotKeys for v in args.hotVariants if fits(v, keys)])
    return [group for group in groups if group]


def summary(run: Run, warmUp: int) -> str:
    """One line per run for the console."""
    if run.result is None:
        return f"{run.variant} over {run.input.label}: exit {run.finished.returncode}, no result; see {run.log}"
    times = [b["durationMs"].get("triggerExecution", 0) / 1000 for b in run.measuredBatches(warmUp)]
    return (
        f"{run.variant} over {run.input.label}: {run.check()}; median micro-batch "
        f"{statistics.median(times):.2f} s; wall {run.finished.wallSeconds:.0f} s; load {run.loadAverage}"
    )


def main(argv: list[str] | None = None) -> None:
    args = parseArgs(argv)
    began = datetime.datetime.now(datetime.UTC)
    header = machine.runHeader("benchmarks.state", argv, began)
    inputsRoot = args.workdir / "state" / "inputs"
    batches = args.warmUp + args.measured
    groups = plannedGroups(args)
    inputs = {(kind, keys): buildInput(inputsRoot, kind, keys, args.words, batches) for group in groups for _, kind, keys in group}
    runs: list[Run] = []
    args.report.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()

    def runGroup(group: list[tuple[str, str, int]], repetition: int) -> None:
        for run in runTogether([(v, inputs[kind, keys]) for v, kind, keys in group], repetition, args):
            with lock:
                runs.append(run)
                print(summary(run, args.warmUp), flush=True)
        with lock:
            status = f"**Incomplete**: {len(runs)} processes so far; the run goes on or was stopped."
            args.report.write_text(render(args, header, runs, status))

    for repetition in range(args.repetitions):
        if args.groupsAtOnce:
            threads = [threading.Thread(target=runGroup, args=(group, repetition)) for group in groups]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            for group in groups:
                runGroup(group, repetition)
    minutes = (datetime.datetime.now(datetime.UTC) - began).total_seconds() / 60
    header["Date"] += f", {minutes:.1f} minutes"
    header["Load average (1, 5, 15 min) at start"] += f" (at the end: {machine.loadAverage()})"
    args.report.write_text(render(args, header, runs, f"Complete: {len(runs)} processes."))
    rawPath = args.workdir / "state" / (args.report.stem + "-runs.json")
    rawPath.write_text(json.dumps([rawRun(run) for run in runs], indent=1, default=str))
    print(args.report.read_text())
    print(f"Written to {args.report}; raw runs in {rawPath}")


def rawRun(run: Run) -> dict:
    """A run as runs.json keeps it."""
    return {
        "variant": run.variant, "kind": run.input.kind, "keys": run.input.keys, "repetition": run.repetition,
        "finished": attrs.asdict(run.finished), "check": run.check(), "loadAverage": run.loadAverage,
        "result": run.result, "log": run.log,
    }


if __name__ == "__main__":
    main()
