"""A sliding window's state between micro-batches (issue 26): what each micro-batch writes and
how long it takes, for a keyed sliding-window count over many keys whose frames churn.

``python -m benchmarks.window_state [--keys 400000] [--lines 100000] [--micro-batches 8]``

Each micro-batch is one file of ``--lines`` lines ``"<event time> w<key>"``, the keys drawn with a
fixed seed from ``--keys``, the event time moving on by ``--step`` ms a micro-batch; the job counts
each key in windows of 10 s sliding by 1 s under EXACTLY_ONCE, so about ten frames per key are
held and a watermark evicts the oldest each micro-batch. Printed per micro-batch: its time and
the bytes its snapshot wrote (a delta of what changed, or a base of every entry)."""

import argparse
import os
import random
import shutil
import tempfile
import time

from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources
from sparkjet import WindowDefinition, wholeItem

SEED = 26


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.window_state", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=400_000, help="keys the words are drawn from (default 400,000)")
    parser.add_argument("--lines", type=int, default=100_000, help="lines a micro-batch (default 100,000)")
    parser.add_argument("--micro-batches", dest="microBatches", type=int, default=8, help="micro-batches (default 8)")
    parser.add_argument("--step", type=int, default=2_000, help="event time a micro-batch moves on, ms (default 2,000)")
    return parser.parse_args(argv)


def windowedCounts(watched: str) -> Pipeline:
    """Count each key in windows of 10 s sliding by 1 s."""
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(watched)).withTimestamps(lambda line: int(line.split()[0]), 0)
      .map(lambda line: line.split()[1])
      .groupingKey(wholeItem()).window(WindowDefinition.sliding(10_000, 1_000))
      .aggregate(AggregateOperations.counting()).writeTo(Sinks.noop()))
    return p


def dropFile(root: str, watched: str, number: int, args: argparse.Namespace, draw: random.Random) -> None:
    """Write micro-batch ``number``'s file beside the watched directory, then move it in."""
    start = number * args.step
    lines = "".join(f"{start + line * args.step // args.lines} w{draw.randrange(args.keys)}\n" for line in range(args.lines))
    staged = os.path.join(root, f"batch-{number}.txt")
    with open(staged, "w") as file:
        file.write(lines)
    os.rename(staged, os.path.join(watched, f"batch-{number}.txt"))


def main(argv: list[str] | None = None) -> None:
    args = parseArgs(argv)
    root = tempfile.mkdtemp(prefix="sparkjet-window-state-")
    watched, draw = os.path.join(root, "in"), random.Random(SEED)
    os.makedirs(watched)
    jet = Jet(master="local[2]")
    config = (JobConfig().setName("window-state").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
              .setCheckpointLocation(os.path.join(root, "checkpoint")))
    job = jet.newJob(windowedCounts(watched), config)
    try:
        for number in range(args.microBatches):
            dropFile(root, watched, number, args, draw)
            while len(job.metrics().microBatches) <= number or job.metrics().lastSnapshot is None:
                time.sleep(0.2)
            metrics = job.metrics()
            print(f"micro-batch {number}: {metrics.microBatches[-1].seconds:.2f} s,"
                  f" snapshot {metrics.lastSnapshot.bytes:,} bytes", flush=True)
    finally:
        job.cancel()
        jet.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
