"""A SourceBuilder source across a killed driver (issue 25, point 3): a stream job counting
2,000 numbers from a source with Jet's createSnapshotFn and restoreSnapshotFn into a files sink
is SIGKILLed, its whole process group, and run again with the same name and checkpoint, in the
tests' process. Kill points: from outside once a seeded number of micro-batches is committed,
or from inside while the source's feeder feeds a file: its items written aside and its snapshot
not yet saved, or its snapshot saved and its items not yet moved into place. Every number is in
the files exactly once, against an offline count. The suite runs one trial;
``SPARKJET_KILL_TRIALS=N`` runs N over the kill points. The source adds 250 numbers more per
committed micro-batch, so the kill falls in the middle of the stream however loaded the machine is."""

import os
import random
import signal
import textwrap
from collections import Counter

import pytest

from tests.faults.test_stream_restart import ended, killAfterCommits, runHere, start, visibleLines

pytestmark = pytest.mark.spark

TOTAL = 2000
KILL_POINTS = ("after-snapshot", "outside", "before-snapshot")
TRIALS = int(os.environ.get("SPARKJET_KILL_TRIALS", "1"))
"""A trial takes minutes on a loaded machine: the suite runs one, ``SPARKJET_KILL_TRIALS=20`` twenty."""

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from pyspark.sql import SparkSession
    from sparkjet import Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, SourceBuilder

    output, checkpoint, master, guarantee, killAt = sys.argv[1:6]
    point, _, number = killAt.partition(":")
    TOTAL = 2000

    def die():
        os.killpg(os.getpgid(0), signal.SIGKILL)

    if point in ("before-snapshot", "after-snapshot"):  # the feeder saves each file's snapshot with os.rename
        rename = os.rename
        def dyingRename(source, target):
            dies = os.path.basename(target) == f".events-{int(number):09d}.snapshot"
            if dies and point == "before-snapshot":
                die()
            rename(source, target)
            if dies:
                die()
        os.rename = dyingRename

    class Numbers:
        def __init__(self, context):
            self.next = 0

    def released():  # 250 numbers more per committed micro-batch
        commits = os.path.join(checkpoint, "query", "commits")
        done = len([name for name in os.listdir(commits) if name.isdigit()]) if os.path.isdir(commits) else 0
        return min(TOTAL, (done + 1) * 250)

    def addNumbers(state, buffer):
        upTo = min(state.next + 10, released())
        for number in range(state.next, upTo):
            buffer.add(number)
        state.next = max(state.next, upTo)
        time.sleep(0.02)

    def restore(state, snapshots):
        state.next = snapshots[0]

    source = (SourceBuilder.stream("numbers", Numbers).fillBufferFn(addNumbers)
              .createSnapshotFn(lambda state: state.next).restoreSnapshotFn(restore).build())
    p = Pipeline.create()
    p.readFrom(source).withoutTimestamps().map(str).writeTo(Sinks.files(output))
    config = (JobConfig().setName("numbers").setProcessingGuarantee(ProcessingGuarantee[guarantee])
              .setCheckpointLocation(checkpoint))
    jet = Jet(spark=SparkSession.getActiveSession()) if master == "this session" else Jet(master=master)
    job = jet.newJob(p, config)

    def written():
        names = os.listdir(output) if os.path.isdir(output) else []
        names = [name for name in names if not name.startswith((".", "_"))]
        return {line for name in names for line in open(os.path.join(output, name)).read().splitlines()}

    while str(TOTAL - 1) not in written():  # the last number comes in the last file fed
        time.sleep(0.2)
    job.cancel()
    print("completed", flush=True)
    """
)


def killedOnce(tmp_path, monkeypatch, trial: random.Random, point: str):
    """Run the job until it is killed at ``point`` (seeded by ``trial``), then run it again in
    this process until its last number is written; return its output directory."""
    script, output, checkpoint = tmp_path / "job.py", tmp_path / "out", tmp_path / "checkpoint"
    script.write_text(SCRIPT)
    if point == "outside":
        first = start(script, output, checkpoint)
        killAfterCommits(first, checkpoint, trial.randint(1, 5), trial)
    else:
        first = start(script, output, checkpoint, killAt=f"{point}:{trial.randint(3, 30)}")
    status, log = ended(first, output)
    assert status == -signal.SIGKILL, f"the first run was not killed:\n{log[-3000:]}"
    runHere(monkeypatch, script, output, checkpoint, "this session", "EXACTLY_ONCE", "none")
    return output


@pytest.mark.parametrize("seed", range(TRIALS))
def test_a_killed_job_run_again_gets_every_item_of_a_built_source_once(spark, tmp_path, monkeypatch, seed):
    """Trial ``seed`` kills at ``KILL_POINTS[seed % 3]``: the first, in the default suite, once
    the snapshot is saved and before its items are moved in (the feeder rolls that file forward)."""
    point = KILL_POINTS[seed % len(KILL_POINTS)]
    output = killedOnce(tmp_path, monkeypatch, random.Random(seed), point)
    assert visibleLines(output) == Counter(str(number) for number in range(TOTAL)), "each number once, none lost"
