"""Tutorial 08: a windowed word count that is killed mid-stream and run again, its output
exactly once."""

import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

from sparkjet import (
    AggregateOperations,
    Jet,
    JobConfig,
    Pipeline,
    ProcessingGuarantee,
    Sinks,
    TestSources,
    WindowDefinition,
    wholeItem,
)

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data" / "tinyshakespeare.txt"
STEP_MILLIS = 100
"""The event time from one line of the corpus to the next."""
WINDOW_MILLIS = 2_000
LINES_PER_MICRO_BATCH = 40


def words(line: str) -> list[str]:
    """Split a line into lower-case words; empty strings remain."""
    return re.split(r"\W+", line.lower())


def nonEmpty(word: str) -> bool:
    return word != ""


def resultLine(result) -> str:
    """A window's count as a line of the output: ``start word count``."""
    return f"{result.start} {result.key} {result.result}"


def events(corpus: str, lines: int) -> list[tuple[int, str]]:
    """The first ``lines`` lines of the corpus, each at ``STEP_MILLIS`` after the one before."""
    text = pathlib.Path(corpus).read_text(encoding="utf-8").splitlines()[:lines]
    return [(number * STEP_MILLIS, line) for number, line in enumerate(text)]


def countingPipeline(stream: list[tuple[int, str]], output: str) -> Pipeline:
    """Count each word per two seconds of event time; write ``start word count`` lines."""
    p = Pipeline.create()
    (
        p.readFrom(TestSources.finiteStream(stream, LINES_PER_MICRO_BATCH)).withNativeTimestamps(0)
        .flatMap(words).filter(nonEmpty)
        .groupingKey(wholeItem())
        .window(WindowDefinition.tumbling(WINDOW_MILLIS))
        .aggregate(AggregateOperations.counting())
        .map(resultLine)
        .writeTo(Sinks.files(output))
    )
    return p


def runJob(corpus: str, lines: int, output: str, checkpoint: str) -> None:
    """Run the word count exactly once, its checkpoint in ``checkpoint``: what the child runs."""
    config = (
        JobConfig().setName("surviving-a-crash")
        .setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
        .setCheckpointLocation(checkpoint)
    )
    Jet().newJob(countingPipeline(events(corpus, lines), output), config).join()


def committed(checkpoint: pathlib.Path) -> int:
    """Return how many micro-batches Spark committed in the job's checkpoint."""
    commits = checkpoint / "query" / "commits"
    return len([name for name in os.listdir(commits) if name.isdigit()]) if commits.is_dir() else 0


def startJob(args, output: pathlib.Path, checkpoint: pathlib.Path) -> subprocess.Popen:
    """Start the job in a process (and process group) of its own, as a driver would run."""
    command = [
        sys.executable, __file__, "--run-job", "--corpus", args.corpus, "--lines", str(args.lines),
        "--output", str(output.parent),
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def outputLines(output: pathlib.Path) -> Counter:
    """Return the lines of the output's part files (not its hidden files), counted."""
    names = [name for name in os.listdir(output) if not name.startswith((".", "_"))] if output.is_dir() else []
    return Counter(line for name in names for line in (output / name).read_text(encoding="utf-8").splitlines())


def expectedLines(corpus: str, lines: int) -> Counter:
    """Each window's counts made offline: each word once per window, with its count."""
    counts = Counter(
        (time - time % WINDOW_MILLIS, word) for time, line in events(corpus, lines) for word in words(line) if word
    )
    return Counter(f"{start} {word} {count}" for (start, word), count in counts.items())


def main(argv: list[str] | None = None) -> dict:
    """Start the job, kill its whole process once it committed ``--kill-after`` micro-batches,
    start it again, and check its output holds every window once; return what it saw."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default=str(BUNDLED_CORPUS), help="the text file whose lines to stream")
    parser.add_argument("--lines", type=int, default=400, help="how many lines of the corpus to stream")
    parser.add_argument("--kill-after", type=int, default=3, help="committed micro-batches before the kill")
    parser.add_argument("--output", default=None, help="directory of the output and the checkpoint")
    parser.add_argument("--run-job", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    work = pathlib.Path(args.output or tempfile.mkdtemp(prefix="sparkjet-tutorial-08-"))
    output, checkpoint = work / "counts", work / "checkpoint"
    if args.run_job:
        runJob(args.corpus, args.lines, str(output), str(checkpoint))
        return {}

    first = startJob(args, output, checkpoint)
    while committed(checkpoint) < args.kill_after and first.poll() is None:
        time.sleep(0.05)
    if first.poll() is not None:
        raise RuntimeError(f"the job ended before it could be killed: stream more --lines\n{first.stdout.read()}")
    os.killpg(first.pid, signal.SIGKILL)  # the driver, its JVM and its Python workers, at once
    first.wait()
    before = outputLines(output)
    print(f"Killed the job after {committed(checkpoint)} committed micro-batches; "
          f"its output then held {sum(before.values())} lines")

    second = startJob(args, output, checkpoint)
    printed, _ = second.communicate()
    if second.returncode != 0:
        raise RuntimeError(f"the restarted job failed:\n{printed}")
    after, expected = outputLines(output), expectedLines(args.corpus, args.lines)
    repeated = sum(count - 1 for count in after.values() if count > 1)
    lost = sum((expected - after).values())
    print(f"Started it again: it went on from its checkpoint and completed; the output holds {sum(after.values())} "
          f"lines, {len(expected)} expected")
    print(f"Every window exactly once: {'yes' if after == expected else 'no'} "
          f"({repeated} repeated, {lost} lost); the checkpoint is {'gone' if not checkpoint.exists() else 'still there'}")
    return {"before": before, "after": after, "expected": expected, "output": output, "checkpoint": checkpoint}


if __name__ == "__main__":
    main()
