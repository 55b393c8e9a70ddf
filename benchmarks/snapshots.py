"""The cost of exactly-once: a stream job's snapshot per micro-batch at 10k, 100k and 1M keys of
window state (issue 16, point 7), and the time from a restart to its first new result.

``python -m benchmarks.snapshots [--keys 10000,100000,1000000] [--report FILE]``

For each size a fresh process runs a windowed count, ``EXACTLY_ONCE``, over a finite stream of
three micro-batches: the first fills one open window with that many distinct keys, the next two
add a few events to it, so every snapshot after the first holds the whole window's state. The
report gives the last snapshot's time and bytes, the last micro-batch's time and the snapshot's
share of it; then the same job is killed after its first committed micro-batch and started
again, timing the restart to its first new result in the files sink."""

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

JOB = textwrap.dedent(
    """
    import json, sys, time
    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources
    from sparkjet import WindowDefinition, wholeItem

    keys, output, checkpoint = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    started = time.time()
    events = [(number % 1000, f"k{number}") for number in range(keys)] + [(1000 + n, "late-comer") for n in range(20)]
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=keys)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(10_000_000))
      .aggregate(AggregateOperations.counting())
      .map(lambda result: f"{result.key} {result.result}")
      .writeTo(Sinks.files(output)))
    config = JobConfig().setName("snapshots").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = Jet().newJob(p, config.setCheckpointLocation(checkpoint))
    job.join()
    metrics = job.metrics()
    snapshot = metrics.lastSnapshot
    print(json.dumps({
        "started": started,
        "batches": [[batch.batchId, batch.seconds, batch.itemsRead] for batch in metrics.microBatches],
        "snapshot": None if snapshot is None else [snapshot.snapshotId, snapshot.bytes, snapshot.seconds],
    }))
    """
)


def runJob(keys: int, work: pathlib.Path) -> dict:
    """Run the job over ``keys`` keys to its end in a fresh process; return its figures."""
    script = work / "job.py"
    script.write_text(JOB)
    done = subprocess.run(
        [sys.executable, str(script), str(keys), str(work / "out"), str(work / "checkpoint")],
        capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def restartSeconds(keys: int, work: pathlib.Path) -> float:
    """Kill the job after its first committed micro-batch; return the seconds from starting it
    again to the first new part file in its output."""
    script = work / "job.py"
    script.write_text(JOB)
    command = [sys.executable, str(script), str(keys), str(work / "out"), str(work / "checkpoint")]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    commits = work / "checkpoint" / "query" / "commits"
    while not (commits.is_dir() and "0" in os.listdir(commits)):
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    before = set(os.listdir(work / "out"))
    started = time.monotonic()
    second = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while not [name for name in set(os.listdir(work / "out")) - before if name.startswith("part-")]:
        if second.poll() is not None:
            break
        time.sleep(0.02)
    seconds = time.monotonic() - started
    second.wait()
    return seconds


def main(argv: list[str] | None = None) -> None:
    """Measure each size; write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", default="10000,100000,1000000")
    parser.add_argument("--report", default="/tmp/sparkjet-benchmarks/SNAPSHOTS.md")
    args = parser.parse_args(argv)
    rows = []
    for keys in [int(size) for size in args.keys.split(",")]:
        with tempfile.TemporaryDirectory(prefix="sparkjet-snapshots-") as directory:
            figures = runJob(keys, pathlib.Path(directory))
        with tempfile.TemporaryDirectory(prefix="sparkjet-restart-") as directory:
            restart = restartSeconds(keys, pathlib.Path(directory))
        snapshotId, size, snapshotSeconds = figures["snapshot"]
        batch = next(b for b in figures["batches"] if b[0] == snapshotId)
        rows.append((keys, snapshotSeconds, size, batch[1], snapshotSeconds / batch[1], restart))
        print(rows[-1], flush=True)
    lines = [
        "# The cost of a snapshot per micro-batch",
        "",
        f"`python -m benchmarks.snapshots --keys {args.keys}`, local[*] on {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. One open window of that many keys; the snapshot "
        "is the last micro-batch's (the window's whole state), the driver writing it to the checkpoint (the "
        "processors pickle their entries where they run, inside the micro-batch's time); its share is of that "
        "micro-batch's time; the restart is from starting the killed job again to its first new part file (a "
        "fresh process, its JVM included).",
        "",
        "| keys | snapshot (s) | bytes | micro-batch (s) | share | restart to first result (s) |",
        "| --: | --: | --: | --: | --: | --: |",
        *(f"| {k:,} | {s:.3f} | {b:,} | {m:.2f} | {r:.1%} | {t:.1f} |" for k, s, b, m, r, t in rows),
        "",
        "Target (issue 16): a snapshot under 10% of the micro-batch's time at 100k keys.",
    ]
    pathlib.Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.report).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.report}")


if __name__ == "__main__":
    main()
