"""Exactly once across a killed driver (issue 16): a stream job writing a windowed count and a
running count per word (``mapStateful``) to files, its whole process group SIGKILLed after a
seeded number of committed micro-batches, is run again with the same name and checkpoint (on as
many processors, or on another number of them); every window result and running count is in
the files exactly once, equal to a plain count, and no partial or staging file is visible.
``SPARKJET_KILL_TRIALS=20`` runs more seeded trials (minutes)."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import pytest

from tests.conftest import PROJECT

pytestmark = pytest.mark.spark

EVENTS = [(time, f"w{time % 7}") for time in range(0, 600, 3)]
WINDOW = 50
TRIALS = int(os.environ.get("SPARKJET_KILL_TRIALS", "2"))

SCRIPT = textwrap.dedent(
    """
    import sys
    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources
    from sparkjet import WindowDefinition, wholeItem

    output, checkpoint, master = sys.argv[1], sys.argv[2], sys.argv[3]
    events = [(time, f"w{time % 7}") for time in range(0, 600, 3)]
    p = Pipeline.create()
    words = p.readFrom(TestSources.finiteStream(events, itemsPerBatch=20)).withNativeTimestamps(0)
    (words.groupingKey(wholeItem()).window(WindowDefinition.tumbling(50))
      .aggregate(AggregateOperations.counting())
      .map(lambda result: f"{result.start} {result.key} {result.result}")
      .writeTo(Sinks.files(output + "/windows")))
    (words.groupingKey(wholeItem())
      .mapStateful(list, lambda seen, word, _: seen.append(word) or f"{word} {len(seen)}")
      .writeTo(Sinks.files(output + "/running")))
    config = (JobConfig().setName("restartable").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
              .setCheckpointLocation(checkpoint))
    Jet(master=master).newJob(p, config).join()
    print("completed", flush=True)
    """
)


def expectedWindows() -> Counter:
    counts = Counter((time - time % WINDOW, word) for time, word in EVENTS)
    return Counter(f"{start} {word} {count}" for (start, word), count in counts.items())


def expectedRunningCounts() -> Counter:
    counts = Counter(word for _, word in EVENTS)
    return Counter(f"{word} {seen}" for word, count in counts.items() for seen in range(1, count + 1))


def committed(checkpoint) -> int:
    commits = checkpoint / "query" / "commits"
    return len([name for name in os.listdir(commits) if name.isdigit()]) if commits.is_dir() else 0


def start(script, output, checkpoint, master="local[2]") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(script), str(output), str(checkpoint), master],
        cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def visibleLines(output) -> Counter:
    names = [name for name in os.listdir(output) if not name.startswith((".", "_"))]
    return Counter(line for name in names for line in (output / name).read_text().splitlines())


def stagingFiles(output) -> list[str]:
    return [name for directory in ("windows", "running") for name in os.listdir(output / directory) if name.startswith(".sparkjet-staging")]


@pytest.mark.parametrize(
    "seed, masters", [(seed, ("local[2]", "local[2]")) for seed in range(TRIALS)] + [(TRIALS, ("local[2]", "local[3]"))],
)
def test_a_killed_stream_job_run_again_writes_every_result_exactly_once(tmp_path, seed, masters):
    trial = random.Random(seed)
    script, output, checkpoint = tmp_path / "job.py", tmp_path / "out", tmp_path / "checkpoint"
    script.write_text(SCRIPT)
    killAfter, extraDelay = trial.randint(1, 6), trial.uniform(0, 1.5)
    first = start(script, output, checkpoint, masters[0])
    deadline = time.monotonic() + 180
    while committed(checkpoint) < killAfter and first.poll() is None:
        assert time.monotonic() < deadline, "the first run committed too few micro-batches in time"
        time.sleep(0.05)
    time.sleep(extraDelay)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert first.returncode != 0, f"the first run ended before it was killed:\n{first.stdout.read()}"
    second = start(script, output, checkpoint, masters[1])
    printed, _ = second.communicate(timeout=300)
    assert second.returncode == 0 and "completed" in printed, printed
    assert visibleLines(output / "windows") == expectedWindows(), "each window once, none lost"
    assert visibleLines(output / "running") == expectedRunningCounts(), "each running count once, none lost"
    assert not stagingFiles(output)
    assert not checkpoint.exists(), "a completed job's checkpoint goes"
