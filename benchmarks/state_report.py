"""The state benchmark's report: micro-batch times as ratios to sparkjet's, issue 26's targets
(and issue 36's, sparkjet on Spark Connect), state bytes written per micro-batch, the driver's
memory, every run."""

import pathlib
import statistics

from benchmarks.markdown import head, row

LABELS = {
    "sparkjet": "sparkjet",
    "sparkjet-connect": "sparkjet on Spark Connect",
    "ss-hdfs": "SS `groupBy().count()`, HDFS store",
    "ss-rocksdb": "SS `groupBy().count()`, RocksDB store",
    "ss-pandas-state": "SS `applyInPandasWithState`",
}
HOT_KEYS = 20_000
"""The keys every micro-batch of a hot input touches."""
HOT_TARGET = 1.25
ROCKSDB_TARGET = 1.5
PANDAS_TARGET = 3.0
CONNECT_TARGET = 1.5
MEMORY_TARGET_MIB = 100
MIB = 2**20


def seconds(batch: dict) -> float:
    """A micro-batch's time: the query's ``triggerExecution``."""
    return batch["durationMs"].get("triggerExecution", 0) / 1000


def median(values: list) -> float | None:
    return statistics.median(values) if values else None


def pooled(runs, variant: str, kind: str, keys: int, warmUp: int, figure) -> list:
    """``figure`` of every measured micro-batch of ``variant`` over that input, over repetitions."""
    return [
        figure(batch)
        for run in runs
        if (run.variant, run.input.kind, run.input.keys) == (variant, kind, keys)
        for batch in run.measuredBatches(warmUp)
    ]


def medianSeconds(runs, variant: str, kind: str, keys: int, warmUp: int) -> float | None:
    return median(pooled(runs, variant, kind, keys, warmUp, seconds))


def text(value: float | None, form: str = "{:.2f} s") -> str:
    return "—" if value is None else form.format(value)


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top is not None and bottom else None


def inputs(runs, kind: str) -> list[int]:
    return sorted({run.input.keys for run in runs if run.input.kind == kind})


def variants(runs, kind: str) -> list[str]:
    return [v for v in LABELS if any(run.variant == v and run.input.kind == kind for run in runs)]


def timeTable(runs, warmUp: int) -> list[str]:
    """Uniform inputs: each variant's median micro-batch and its ratio to sparkjet's."""
    names = variants(runs, "uniform")
    if not names:
        return []
    others = [v for v in names if v != "sparkjet"]
    out = head(("keys held", *(LABELS[v] for v in names), *(f"{LABELS[v]} ÷ sparkjet" for v in others)), set())
    for keys in inputs(runs, "uniform"):
        times = {v: medianSeconds(runs, v, "uniform", keys, warmUp) for v in names}
        out.append(row((
            f"{keys:,}", *(text(times[v]) for v in names),
            *(text(ratio(times[v], times.get("sparkjet")), "{:.2f}") for v in others),
        )))
    return out


def hotTable(runs, warmUp: int) -> list[str]:
    """Hot inputs: each variant's median micro-batch and its ratio to its own with the fewest keys held."""
    names = variants(runs, "hot")
    keysHeld = inputs(runs, "hot")
    if not keysHeld:
        return []
    out = head(("keys held", *(f"{LABELS[v]}" for v in names), *(f"{LABELS[v]} ÷ at {keysHeld[0]:,}" for v in names)), set())
    base = {v: medianSeconds(runs, v, "hot", keysHeld[0], warmUp) for v in names}
    for keys in keysHeld:
        times = {v: medianSeconds(runs, v, "hot", keys, warmUp) for v in names}
        out.append(row((
            f"{keys:,}", *(text(times[v]) for v in names), *(text(ratio(times[v], base[v]), "{:.2f}") for v in names),
        )))
    return out


def memoryDelta(runs, source: str) -> tuple[float, float] | None:
    """Over sparkjet's runs at 1M keys sampled after micro-batch 10 and later: the largest growth
    of the Python process's RSS and of the JVM's ``source`` from the sample at 10 to the last, in MiB."""
    growths = [
        ((last["pythonRss"] - first["pythonRss"]) / MIB, (last[source] - first[source]) / MIB)
        for run in runs
        if run.variant == "sparkjet" and run.input.keys >= 1_000_000 and run.result
        for first, last in [(sampleAt(run.result["memory"], 10), run.result["memory"][-1])]
        if first is not None and last["batches"] > first["batches"]
    ]
    return (max(g[0] for g in growths), max(g[1] for g in growths)) if growths else None


def sampleAt(samples: list[dict], batches: int) -> dict | None:
    """The memory sample taken after micro-batch ``batches``, if any."""
    return next((sample for sample in samples if sample["batches"] == batches), None)


def verdict(value: float | None, holds) -> str:
    return "—" if value is None else "met" if holds(value) else "missed"


def targets(runs, warmUp: int) -> list[str]:
    """Issue 26's targets (and issue 36's, where sparkjet ran on Spark Connect) on this run's figures."""
    out = head(("target (issue 26, 36)", "figure", "verdict"), {0, 2})
    for keys in inputs(runs, "uniform"):
        connect = medianSeconds(runs, "sparkjet-connect", "uniform", keys, warmUp)
        if connect is None:
            continue
        classic = medianSeconds(runs, "sparkjet", "uniform", keys, warmUp)
        r = ratio(connect, classic)
        out.append(row((
            f"sparkjet on Spark Connect at {keys:,} keys held ≤ {CONNECT_TARGET}× the classic engine's micro-batch (36)",
            f"{text(connect)} vs {text(classic)} ({text(r, '× {:.2f}')})", verdict(r, lambda x: x <= CONNECT_TARGET),
        )))
    hot = inputs(runs, "hot")
    base = medianSeconds(runs, "sparkjet", "hot", HOT_KEYS, warmUp) if HOT_KEYS in hot else None
    for keys in (k for k in hot if k > HOT_KEYS):
        held = medianSeconds(runs, "sparkjet", "hot", keys, warmUp)
        r = ratio(held, base)
        out.append(row((
            f"sparkjet: the same 20k keys touched, {keys:,} held ≤ {HOT_TARGET}× 20k held",
            f"{text(held)} vs {text(base)} ({text(r, '× {:.2f}')})", verdict(r, lambda x: x <= HOT_TARGET),
        )))
    jet = medianSeconds(runs, "sparkjet", "uniform", 1_000_000, warmUp)
    rocks = medianSeconds(runs, "ss-rocksdb", "uniform", 1_000_000, warmUp)
    r = ratio(jet, rocks)
    out.append(row((
        f"sparkjet at 1M keys ≤ {ROCKSDB_TARGET}× SS RocksDB's micro-batch",
        f"{text(jet)} vs {text(rocks)} ({text(r, '× {:.2f}')})", verdict(r, lambda x: x <= ROCKSDB_TARGET),
    )))
    for keys in inputs(runs, "uniform"):
        pandas = medianSeconds(runs, "ss-pandas-state", "uniform", keys, warmUp)
        if pandas is None:
            continue
        r = ratio(pandas, medianSeconds(runs, "sparkjet", "uniform", keys, warmUp))
        out.append(row((
            f"sparkjet several (≥ {PANDAS_TARGET:g}) times faster than `applyInPandasWithState` at {keys:,} keys",
            text(r, "× {:.2f}"), verdict(r, lambda x: x >= PANDAS_TARGET),
        )))
    for source, name in (("jvmRss", "the JVM's RSS"), ("jvmHeapAfterGc", "the JVM's heap after GC")):
        grown = memoryDelta(runs, source)
        figure = None if grown is None else max(grown)
        out.append(row((
            f"sparkjet at 1M keys: the driver's Python RSS and {name} grow ≤ {MEMORY_TARGET_MIB} MiB from micro-batch 10 to the last",
            "—" if grown is None else f"Python {grown[0]:+.0f} MiB, JVM {grown[1]:+.0f} MiB",
            verdict(figure, lambda x: x <= MEMORY_TARGET_MIB),
        )))
    return out



def clientSeconds(run, warmUp: int) -> list[tuple[float, float]]:
    """Each measured micro-batch of a sparkjet run: the query's ``triggerExecution`` and the
    client's own time for it (``MicroBatchMetrics.seconds``: the engine's run, the snapshot
    saved, the list sinks delivered), paired by micro-batch id."""
    client = {batchId: secs for batchId, secs, _ in run.result.get("microBatchSeconds", ())} if run.result else {}
    return [(seconds(b), client[b["batchId"]]) for b in run.measuredBatches(warmUp) if b["batchId"] in client]


def clientTable(runs, warmUp: int) -> list[str]:
    """Per input and sparkjet variant: the median micro-batch as the query and as the client timed it."""
    out = head(("input", "variant", "query's triggerExecution (median)", "client's MicroBatchMetrics.seconds (median)",
                "difference (median)"), {0, 1})
    for keys in inputs(runs, "uniform"):
        for v in ("sparkjet", "sparkjet-connect"):
            pairs = [p for run in runs if (run.variant, run.input.kind, run.input.keys) == (v, "uniform", keys) for p in clientSeconds(run, warmUp)]
            if pairs:
                out.append(row((
                    f"uniform {keys:,}", LABELS[v], text(median([q for q, _ in pairs])), text(median([c for _, c in pairs])),
                    text(median([q - c for q, c in pairs])),
                )))
    return out if len(out) > 2 else []


def bytesTable(runs, warmUp: int) -> list[str]:
    """State bytes written per measured micro-batch: median and mean, per input and variant."""
    out = head((
        "input", "variant", "new state files (median)", "bytes under state/ (median)", "(mean)",
        "sparkjet's SnapshotMetrics bytes (median)", "the driver's states/ file (median)",
    ), {0, 1})
    for kind in ("uniform", "hot"):
        for keys in inputs(runs, kind):
            for v in variants(runs, kind):
                written = pooled(runs, v, kind, keys, warmUp, lambda b: b["stateBytes"])
                if not written:
                    continue
                files = pooled(runs, v, kind, keys, warmUp, lambda b: b["stateFiles"])
                snapshot = [x for x in pooled(runs, v, kind, keys, warmUp, lambda b: b.get("snapshotBytes")) if x is not None]
                driver = [x for x in pooled(runs, v, kind, keys, warmUp, lambda b: b.get("driverStateBytes")) if x is not None]
                out.append(row((
                    f"{kind} {keys:,}", LABELS[v], f"{median(files):g}", f"{median(written):,.0f}",
                    f"{statistics.mean(written):,.0f}", text(median(snapshot), "{:,.0f}"), text(median(driver), "{:,.0f}"),
                )))
    return out


def memoryTable(runs) -> list[str]:
    """The driver's memory at each sample of each run."""
    out = head(("input", "variant", "after micro-batch", "Python RSS", "JVM RSS", "JVM heap after GC"), {0, 1})
    for run in runs:
        for sample in run.result["memory"] if run.result else ():
            out.append(row((
                run.input.label, LABELS[run.variant], str(sample["batches"]),
                f"{sample['pythonRss'] / MIB:,.0f} MiB", f"{sample['jvmRss'] / MIB:,.0f} MiB",
                f"{sample['jvmHeapAfterGc'] / MIB:,.0f} MiB",
            )))
    return out


def runsTable(runs, warmUp: int) -> list[str]:
    """Every run: its check, its micro-batches' median, min and max, its process's figures."""
    out = head((
        "input", "variant", "repetition", "sampled counts", "median", "min", "max", "load micro-batch",
        "process wall", "peak RSS", "CPUs busy apart from its own", "load average after",
    ), {0, 1, 3, 11})
    for run in runs:
        times = [seconds(b) for b in run.measuredBatches(warmUp)]
        load = seconds(run.result["batches"][0]) if run.result and run.result["batches"] else None
        out.append(row((
            run.input.label, LABELS[run.variant], str(run.repetition + 1), run.check(),
            text(median(times)), text(min(times, default=None)), text(max(times, default=None)), text(load),
            f"{run.finished.wallSeconds:.0f} s", f"{run.finished.peakRss / MIB:,.0f} MiB",
            f"{run.finished.otherCpus:.2f}", run.loadAverage,
        )))
    return out


def failures(runs) -> list[str]:
    """The end of the log of each run that gave no result or wrong counts."""
    out = []
    for run in runs:
        if run.check() == "ok":
            continue
        tail = pathlib.Path(run.log).read_text(errors="replace").splitlines()[-25:]
        out += [f"### {LABELS[run.variant]} over {run.input.label}: exit {run.finished.returncode}, {run.check()}", "", "```text", *tail, "```", ""]
    return ["## Failures", "", *out] if out else []


def identicalSettings(runs) -> str:
    settings = {tuple(sorted(run.result["settings"].items())) for run in runs if run.result}
    return "identical in every process" if len(settings) <= 1 else f"{len(settings)} different sets (see the raw runs)"


def render(args, header: dict, runs, status: str) -> str:
    """The whole report."""
    warmUp = args.warmUp
    lines = [
        "# State between micro-batches: a running count per key against Structured Streaming's state stores",
        "",
        status,
        "",
        *(f"- **{name}**: {value}" for name, value in header.items()),
        f"- **Input**: each micro-batch one file of {args.words:,} words, one a line, drawn with a fixed seed; first a "
        f"file holding every key once (the load micro-batch), then {warmUp} warm-up micro-batches, then {args.measured} "
        "measured. *uniform K*: words drawn from all K keys; *hot K*: from the same 20,000 keys, K held",
        "- **Variants**: sparkjet `Sources.fileWatcher(dir).withoutTimestamps().groupingKey(wholeItem())"
        ".rollingAggregate(counting())` under EXACTLY_ONCE with a checkpoint; Structured Streaming "
        "`readStream.text(dir).groupBy(\"value\").count()` in update mode on `HDFSBackedStateStoreProvider` or "
        "`RocksDBStateStoreProvider`, and `groupBy(\"value\").applyInPandasWithState(...)` counting in pandas (HDFS store); "
        "each keeps only the words ending in 000 (one key in a thousand) and sends them to the driver (a list sink, "
        "`foreachBatch` collecting), whose highest count per word is checked against the harness's count",
        f"- **Session**: `Jet(master=\"local[2]\")`'s for every variant"
        + ("; sparkjet on Spark Connect: `Jet(remote=url)` in its own process, a client of a Spark Connect server on "
           "`local[2]` the harness starts in a process of its own for each group (PySpark's start-connect-server.sh, "
           "`spark.sql.shuffle.partitions=8` as sparkjet's session), the driver's memory not sampled"
           if "sparkjet-connect" in variants(runs, "uniform") else "")
        + f"; Spark settings {identicalSettings(runs)}",
        "- **Order**: the variants of a uniform input start at once, each in a fresh process, and take their "
        "micro-batches in turn: one micro-batch of one process at a time, the order rotated each micro-batch, so that "
        "each meets the machine's load alike (the others wait, idle, meanwhile); so do all the hot inputs' processes"
        + ("; the groups ran at the same time (`--groups-at-once`)" if args.groupsAtOnce else "; one group after the other"),
        "- **Micro-batch time**: the query's own `triggerExecution` of the micro-batch that read the file, from its "
        "progress report; the harness links the next file in only after that report",
        "",
        "## Targets",
        "",
        *targets(runs, warmUp),
        "",
    ]
    uniform = timeTable(runs, warmUp)
    if uniform:
        lines += ["## Micro-batch time: uniform input (median of the measured micro-batches)", "", *uniform, ""]
    client = clientTable(runs, warmUp)
    if client:
        lines += [
            "## Micro-batch time: the query's and the client's",
            "",
            "The query's `triggerExecution` covers the whole `foreachBatch` call; the client's `MicroBatchMetrics.seconds` "
            "its own run of the micro-batch (the engine's run, the snapshot saved, the list sinks delivered). On Spark "
            "Connect the difference holds the hand-over: the server's function naming the rows as a view, the client "
            "finding it, its answer found, the views dropped.",
            "",
            *client,
            "",
        ]
    hot = hotTable(runs, warmUp)
    if hot:
        lines += ["## Micro-batch time: the same 20,000 keys touched, more held", "", *hot, ""]
    lines += [
        "## State written per micro-batch",
        "",
        "New or changed files under the checkpoint's `state/` directory after each measured micro-batch (sparkjet's "
        "task-written deltas and bases; Spark's state store files), the figure sparkjet's `SnapshotMetrics` gives, and "
        "the new bytes of sparkjet's driver-side `states/` files.",
        "",
        *bytesTable(runs, warmUp),
        "",
        "## The driver's memory",
        "",
        "The driver's Python process and the JVM (on local[2] the JVM is the executor too), sampled after the micro-batch "
        "named (0: the load), the JVM's heap read from its memory bean right after `System.gc()`.",
        "",
        *memoryTable(runs),
        "",
        "## Each run",
        "",
        *runsTable(runs, warmUp),
        "",
        *failures(runs),
    ]
    return "\n".join(lines) + "\n"
