"""Exactly once across a killed driver (issue 16): a stream job writing a windowed count, a
running count per word (``mapStateful``) and seed 003's pair matcher to files is SIGKILLed, its
whole process group, and run again with the same name and checkpoint, on as many processors or
on more or fewer. Kill points: from outside once a seeded number of micro-batches is committed;
or from inside, while a files sink moves a micro-batch's part files into place, before the
processors' states are saved, or after that and before Spark commits; and a Python worker ends
mid-batch, once, and Spark runs its task again. A trial kills one run at each point in turn (a
JVM start per kill point, the worker's death in whichever run reaches its micro-batch), on 2
and 3 processors by turns, then runs the job to its end in the tests' session. Every result is in the files exactly
once, equal to an offline count, with no partial or staging file visible, also where the
micro-batch run again wrote fewer part files. Seed 003's at-least-once pitfalls (a pair matcher
stuck waiting for a half it already matched, a watermark going back and dropping events as
late) are run for ``AT_LEAST_ONCE``: nothing is lost. The suite runs one trial, the kill points
in the order above; ``SPARKJET_KILL_TRIALS=20`` runs 20, each in a seeded order (minutes)."""

import os
import pathlib
import random
import runpy
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from tests.conftest import PROJECT, eventually, finished, treeProgress

pytestmark = pytest.mark.spark

EVENTS = [(time, f"w{time % 7}") for time in range(0, 600, 3)]
WINDOW = 50
KILL_POINTS = ("outside", "mid-commit", "before-states", "after-states")
"""Where a run's driver is killed, one run each; the fifth point, a Python worker's death, falls in any run."""
TRIALS = int(os.environ.get("SPARKJET_KILL_TRIALS", "1"))

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources
    from sparkjet import WindowDefinition, wholeItem
    from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
    from pyspark.sql import SparkSession

    output, checkpoint, master, guarantee, killAt, workerAt = sys.argv[1:7]
    point, _, number = killAt.partition(":")

    def die():
        os.killpg(os.getpgid(0), signal.SIGKILL)

    if point == "mid-commit":  # the driver moves each part file into place with os.rename
        rename, moved = os.rename, []
        def dyingRename(source, target):
            rename(source, target)
            moved.append(target)
            if os.path.basename(target).startswith("part-") and len(moved) >= int(number):
                die()
        os.rename = dyingRename
    if point in ("before-states", "after-states"):
        saveStates = StreamCheckpoint.saveStates
        def dyingSave(self, batchId, states):
            if point == "before-states" and batchId == int(number):
                die()
            saved = saveStates(self, batchId, states)
            if batchId == int(number):
                die()
            return saved
        StreamCheckpoint.saveStates = dyingSave

    def committed():
        commits = os.path.join(checkpoint, "query", "commits")
        return len([name for name in os.listdir(commits) if name.isdigit()]) if os.path.isdir(commits) else 0

    def dyingOnce(word):  # ends the Python worker at a 'w3' once micro-batch `workerAt` is reached, once in the job's life
        if workerAt != "none" and word == "w3" and int(workerAt) <= committed():
            try:
                os.close(os.open(output + ".worker-died", os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return word
            os._exit(3)
        return word

    def matched(state, word, event):  # seed 003's pair matcher: remembers a first event, emits the pair at the second
        if state["waiting"] is None:
            state["waiting"] = event
            return None
        state["waiting"], state["pairs"] = None, state["pairs"] + 1
        return f"{word} pair {state['pairs']}"

    events = [(time, f"w{time % 7}") for time in range(0, 600, 3)]
    p = Pipeline.create()
    words = p.readFrom(TestSources.finiteStream(events, itemsPerBatch=25)).withNativeTimestamps(0).map(dyingOnce)
    (words.groupingKey(wholeItem()).window(WindowDefinition.tumbling(50))
      .aggregate(AggregateOperations.counting())
      .map(lambda result: f"{result.start} {result.key} {result.result}")
      .writeTo(Sinks.files(output + "/windows")))
    (words.groupingKey(wholeItem())
      .mapStateful(list, lambda seen, word, _: seen.append(word) or f"{word} {len(seen)}")
      .writeTo(Sinks.files(output + "/running")))
    (words.groupingKey(wholeItem())
      .mapStateful(lambda: {"waiting": None, "pairs": 0}, matched)
      .writeTo(Sinks.files(output + "/pairs")))
    config = (JobConfig().setName("restartable").setProcessingGuarantee(ProcessingGuarantee[guarantee])
              .setCheckpointLocation(checkpoint))
    jet = Jet(spark=SparkSession.getActiveSession()) if master == "this session" else Jet(master=master)
    jet.newJob(p, config).join()
    print("completed", flush=True)
    """
)


def expectedWindows() -> Counter:
    counts = Counter((time - time % WINDOW, word) for time, word in EVENTS)
    return Counter(f"{start} {word} {count}" for (start, word), count in counts.items())


def expectedRunningCounts() -> Counter:
    counts = Counter(word for _, word in EVENTS)
    return Counter(f"{word} {seen}" for word, count in counts.items() for seen in range(1, count + 1))


def expectedPairs() -> Counter:
    counts = Counter(word for _, word in EVENTS)
    return Counter(f"{word} pair {pair}" for word, count in counts.items() for pair in range(1, count // 2 + 1))


EXPECTED = {"windows": expectedWindows(), "running": expectedRunningCounts(), "pairs": expectedPairs()}


def committed(checkpoint) -> int:
    commits = checkpoint / "query" / "commits"
    return len([name for name in os.listdir(commits) if name.isdigit()]) if commits.is_dir() else 0


def killAfterCommits(run, checkpoint, commits: int, trial: random.Random) -> None:
    """SIGKILL ``run``'s process group a seeded moment after its checkpoint has ``commits``
    micro-batches committed: a moment counted in the files it writes, never in seconds."""
    eventually(lambda: committed(checkpoint) >= commits or run.poll() is not None, treeProgress(checkpoint.parent))
    if run.poll() is None:
        writes, progress = trial.randint(0, 3), treeProgress(checkpoint.parent)
        seen = progress()
        for _ in range(writes):  # a seeded number of changes to its files later
            eventually(lambda: progress() != seen or run.poll() is not None, progress)
            seen = progress()
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)


def start(script, output, checkpoint, master="local[2]", guarantee="EXACTLY_ONCE", killAt="none", workerAt="none"):
    """Start a run of ``script``, in a process group of its own, printing into a log beside ``output``."""
    with open(f"{output}.log", "a") as log:
        return subprocess.Popen(
            [sys.executable, str(script), str(output), str(checkpoint), master, guarantee, killAt, workerAt],
            cwd=PROJECT, stdout=log, stderr=log, text=True, start_new_session=True,
        )


def ended(run, output) -> tuple[int, str]:
    """Wait until ``run`` ends, failing once it has written nothing for a long while; return its
    status and its log so far."""
    finished(run, treeProgress(output.parent))
    return run.returncode, pathlib.Path(f"{output}.log").read_text()


def killed(script, output, checkpoint, point: str, trial: random.Random, **run) -> None:
    """Run the job until it is killed at ``point`` (seeded by ``trial``)."""
    if point == "outside":
        first = start(script, output, checkpoint, **run)
        killAfterCommits(first, checkpoint, committed(checkpoint) + 1, trial)
    else:
        number = trial.randint(1, 6) if point == "mid-commit" else committed(checkpoint) + trial.randint(0, 1)
        first = start(script, output, checkpoint, killAt=f"{point}:{number}", **run)
    status, log = ended(first, output)
    assert status == -signal.SIGKILL, f"the run to kill at {point} was not killed:\n{log[-3000:]}"


def runHere(monkeypatch, script, *arguments) -> None:
    """Run ``script`` with ``arguments`` in this process, as ``__main__``: a driver started
    again, on the tests' session where its master is 'this session'."""
    monkeypatch.setattr(sys, "argv", [str(script), *map(str, arguments)])
    runpy.run_path(str(script), run_name="__main__")


def visibleLines(output) -> Counter:
    names = [name for name in os.listdir(output) if not name.startswith((".", "_"))]
    return Counter(line for name in names for line in (output / name).read_text().splitlines())


def stagingFiles(output) -> list[str]:
    return [name for directory in EXPECTED for name in os.listdir(output / directory) if name.startswith(".sparkjet-staging")]


def killedAtEach(tmp_path, monkeypatch, points, trial: random.Random, guarantee="EXACTLY_ONCE"):
    """Run the job, killing one run at each of ``points`` in turn (a Python worker dies once in
    whichever run reaches the micro-batch seeded), the runs on 2 and 3 processors by turns from
    a seeded first, then run it again to its end in this process, on the tests' session of 2;
    return its output directory."""
    script, output, checkpoint = tmp_path / "job.py", tmp_path / "out", tmp_path / "checkpoint"
    script.write_text(SCRIPT)
    masters = ["local[2]", "local[3]"][:: trial.choice((1, -1))]
    workerAt = str(trial.randint(1, 6))
    for number, point in enumerate(points):
        killed(script, output, checkpoint, point, trial, master=masters[number % 2], guarantee=guarantee, workerAt=workerAt)
    runHere(monkeypatch, script, output, checkpoint, "this session", guarantee, "none", workerAt)
    assert os.path.exists(f"{output}.worker-died"), "a Python worker died mid-batch"
    assert not stagingFiles(output)
    assert not checkpoint.exists(), "a completed job's checkpoint goes"
    return output


@pytest.mark.parametrize("seed", range(TRIALS))
def test_a_killed_stream_job_run_again_writes_every_result_exactly_once(spark, tmp_path, monkeypatch, seed):
    """Trial 0 kills at each point in the order of ``KILL_POINTS``, the others in a seeded order."""
    trial = random.Random(seed)
    points = KILL_POINTS if seed == 0 else trial.sample(KILL_POINTS, len(KILL_POINTS))
    output = killedAtEach(tmp_path, monkeypatch, points, trial)
    for directory, expected in EXPECTED.items():
        assert visibleLines(output / directory) == expected, f"{directory}: each result once, none lost (killed at {points})"


def test_at_least_once_falls_into_none_of_seed_003s_pitfalls(spark, tmp_path, monkeypatch):
    """A snapshot is taken at a micro-batch's end, after every processor consumed all its input
    and none beyond it: no item past the snapshot has touched the state restored. So the pair
    matcher never waits for a half it already matched, and no watermark goes back to drop events
    as late; with ``AT_LEAST_ONCE``, as with ``EXACTLY_ONCE``, every result is there."""
    output = killedAtEach(tmp_path, monkeypatch, ["after-states"], random.Random("after-states"), guarantee="AT_LEAST_ONCE")
    for directory, expected in EXPECTED.items():
        assert set(visibleLines(output / directory)) == set(expected), f"{directory}: nothing lost"
