"""Jet.shutdown() with running stream jobs (issue 34, point 1), as Jet's graceful member shutdown:
each stops after its micro-batch in progress, its states saved and Spark's commit done, and ends,
its checkpoint and committed output kept, a line on stderr naming it; submitted again with the
same name and checkpoint it goes on exactly, also across a kill -9 after that. A micro-batch that
does not end has its Spark jobs cancelled after a bounded wait; batch jobs are waited for; a script
ending in ``jet.shutdown()`` exits; ``with Jet() as jet:`` shuts down at the block's end."""

import random
import re
import signal
import textwrap
import threading
import time
from collections import Counter

import pytest

from sparkjet import (
    AggregateOperations,
    Jet,
    JobConfig,
    JobError,
    Pipeline,
    ProcessingGuarantee,
    Sinks,
    Sources,
    StoppedByShutdown,
    wholeItem,
)
from sparkjet.planner import JobStatus
from tests.conftest import eventually
from tests.faults.test_stream_restart import committed, ended, killAfterCommits, runHere, start, visibleLines
from tests.streaming.test_stream_jobs import dropFile

pytestmark = pytest.mark.spark

STOPPED = re.compile(
    r"sparkjet: Job 'counting' was stopped by Jet\.shutdown\(\) after micro-batch (\d+), its snapshot committed "
    r"in its checkpoint '.*checkpoint': submit it again with the same name and checkpoint location to go on from there"
)


def runningCounts(words: list[str]) -> Counter:
    """Return the lines a running count per word writes for ``words``: ``ant 1``, ``ant 2``..., each once."""
    counts = Counter(words)
    return Counter(f"{word} {seen}" for word, count in counts.items() for seen in range(1, count + 1))


def counting(watched, output, passing=None) -> Pipeline:
    """A running count per word of the lines dropped into ``watched``, into files in ``output``."""
    p = Pipeline.create()
    words = p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
    if passing is not None:
        words = words.map(passing)
    (words.groupingKey(wholeItem()).rollingAggregate(AggregateOperations.counting())
     .map(lambda counted: f"{counted[0]} {counted[1]}")
     .writeTo(Sinks.files(str(output))))
    return p


def exactlyOnce(checkpoint) -> JobConfig:
    return (JobConfig().setName("counting").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
            .setCheckpointLocation(str(checkpoint)))


def linesIn(output) -> Counter:
    return visibleLines(output) if output.is_dir() else Counter()


def shutDown(jet: Jet, **wait) -> None:
    """Call ``jet.shutdown()`` and wait until it returns, failing once nothing has moved for a
    long while (before issue 34 it never returned while a stream job ran)."""
    stopper = threading.Thread(target=jet.shutdown, kwargs=wait, name="test-shutdown", daemon=True)
    stopper.start()
    eventually(lambda: not stopper.is_alive())


def goesOnExactly(spark, pipeline: Pipeline, checkpoint, output, words: list[str]) -> None:
    """Submit the job again with the same name and checkpoint; check it writes every running
    count of ``words`` exactly once, none lost, none twice."""
    again = Jet(spark=spark)
    job = again.newJob(pipeline, exactlyOnce(checkpoint))
    try:
        eventually(lambda: sum(linesIn(output).values()) >= len(words) or job.getStatus() is not JobStatus.RUNNING)
        assert linesIn(output) == runningCounts(words)
    finally:
        job.cancel()
        again.shutdown()


def test_shutdown_stops_a_running_stream_job_after_its_snapshot_and_it_goes_on_exactly(spark, tmp_path, capfd):
    watched, output, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    watched.mkdir()
    jet = Jet(spark=spark)
    job = jet.newJob(counting(watched, output), exactlyOnce(checkpoint))
    dropFile(watched, "a.txt", ["ant", "bee", "ant"])
    eventually(lambda: linesIn(output) == runningCounts(["ant", "bee", "ant"]))
    dropFile(watched, "b.txt", ["bee", "cat"])  # read before the stop, or after the job goes on
    shutDown(jet)
    said = STOPPED.search(capfd.readouterr().err)
    assert said, "a line on stderr names the job stopped and where it goes on from"
    with pytest.raises(StoppedByShutdown, match=r"submit it again with the same name and checkpoint location"):
        job.join()
    assert job.getStatus() is JobStatus.NOT_RUNNING
    shown = "StoppedByShutdown: Job &#x27;counting&#x27; was stopped by Jet.shutdown() after micro-batch"
    assert shown in job._repr_html_(), "a notebook shows where the job goes on from"
    with pytest.raises(JobError, match=r"job status is NOT_RUNNING: Jet.shutdown\(\) stopped it"):
        job.resume()
    assert int(said.group(1)) == committed(checkpoint) - 1, "its last micro-batch was committed"
    kept = linesIn(output)
    assert kept in (runningCounts(["ant", "bee", "ant"]), runningCounts(["ant", "bee", "ant", "bee", "cat"]))
    dropFile(watched, "c.txt", ["ant", "cat", "dog"])
    words = ["ant", "bee", "ant", "bee", "cat", "ant", "cat", "dog"]
    goesOnExactly(spark, counting(watched, output), checkpoint, output, words)


def stuckWhile(marker, started):
    """Return a map function that, on 'stuck', notes it ``started`` and waits while ``marker`` exists."""

    def passing(word: str) -> str:
        if word == "stuck":
            started.touch()
            while marker.exists():
                time.sleep(0.05)
        return word

    return passing


def test_a_micro_batch_that_does_not_end_has_its_spark_jobs_cancelled_and_runs_again_when_the_job_goes_on(
    spark, tmp_path, capfd
):
    watched, output, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    marker, started = tmp_path / "stuck", tmp_path / "started"
    watched.mkdir()
    marker.touch()
    pipeline = counting(watched, output, stuckWhile(marker, started))
    jet = Jet(spark=spark)
    job = jet.newJob(pipeline, exactlyOnce(checkpoint))
    dropFile(watched, "a.txt", ["ant", "bee"])
    eventually(lambda: linesIn(output) == runningCounts(["ant", "bee"]))
    dropFile(watched, "b.txt", ["ant", "stuck"])
    eventually(started.exists)
    shutDown(jet, maxWaitSeconds=1)
    assert "its micro-batch in progress did not end within 1 s: its Spark jobs were cancelled" in capfd.readouterr().err
    with pytest.raises(StoppedByShutdown):
        job.join()
    assert linesIn(output) == runningCounts(["ant", "bee"]), "the micro-batch cancelled left none of its files"
    assert not [path for path in output.iterdir() if path.name.startswith(".sparkjet-staging")]
    marker.unlink()
    goesOnExactly(spark, pipeline, checkpoint, output, ["ant", "bee", "ant", "stuck"])


def slowly(item: int) -> int:
    time.sleep(0.01)
    return item


def test_with_jet_shuts_down_at_its_end_waiting_for_batch_jobs_and_stopping_stream_jobs(spark, tmp_path, capfd):
    """A stream job without a processing guarantee keeps nothing: it says it starts over if submitted
    again; a suspended one ends where it stopped."""
    watched = tmp_path / "in"
    watched.mkdir()
    stream = Pipeline.create()
    stream.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps().writeTo(Sinks.list("lines"))
    batch = Pipeline.create()
    batch.readFrom(Sources.items(range(300))).map(slowly).writeTo(Sinks.list("numbers"))
    results: dict = {}
    stopper = threading.Thread(
        target=lambda: shutDownAtTheEnd(spark, stream, batch, watched, tmp_path / "checkpoint", results), daemon=True
    )
    stopper.start()
    eventually(lambda: not stopper.is_alive())
    streamJob, suspendedJob, batchJob = results["jobs"]
    assert batchJob.getStatus() is JobStatus.COMPLETED, "the batch job was waited for"
    assert sorted(results["numbers"]) == list(range(300))
    assert streamJob.getStatus() is suspendedJob.getStatus() is JobStatus.NOT_RUNNING
    assert results["lines"] == ["one", "one"]
    said = capfd.readouterr().err
    assert (
        "sparkjet: Job 'lines' was stopped by Jet.shutdown(); without a processing guarantee it keeps no snapshot: "
        "submitted again, it starts from the start of its sources, its state empty"
    ) in said
    assert re.search(r"sparkjet: Job 'suspended' was stopped by Jet\.shutdown\(\) after micro-batch \d+, its snapshot", said)
    assert (tmp_path / "checkpoint").is_dir()


def shutDownAtTheEnd(spark, stream: Pipeline, batch: Pipeline, watched, checkpoint, results: dict) -> None:
    with Jet(spark=spark) as jet:
        streamJob = jet.newJob(stream, name="lines")
        config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(checkpoint))
        suspendedJob = jet.newJob(stream, config, name="suspended")
        dropFile(watched, "a.txt", ["one"])
        eventually(lambda: jet.getList("lines") == ["one", "one"])
        suspendedJob.suspend()
        eventually(lambda: suspendedJob.getStatus() is JobStatus.SUSPENDED)
        results["jobs"] = streamJob, suspendedJob, jet.newJob(batch)
    results["numbers"], results["lines"] = jet.getList("numbers"), jet.getList("lines")


EVENTS = [(time, f"w{time % 7}") for time in range(300)]

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources
    from sparkjet import wholeItem
    from pyspark.sql import SparkSession

    output, checkpoint, master, ending = sys.argv[1:5]

    def committed():
        commits = os.path.join(checkpoint, "query", "commits")
        return len([name for name in os.listdir(commits) if name.isdigit()]) if os.path.isdir(commits) else 0

    events = [(time, f"w{time % 7}") for time in range(300)]
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(events, itemsPerBatch=10)).withoutTimestamps()
      .groupingKey(wholeItem()).rollingAggregate(AggregateOperations.counting())
      .map(lambda counted: f"{counted[0]} {counted[1]}")
      .writeTo(Sinks.files(output)))
    config = (JobConfig().setName("counting").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
              .setCheckpointLocation(checkpoint))
    jet = Jet(spark=SparkSession.getActiveSession()) if master == "this session" else Jet(master=master)
    job = jet.newJob(p, config)
    if ending == "shutdown":
        while committed() < 2:
            time.sleep(0.05)
        jet.shutdown()
        print("shut down", job.getStatus().name, flush=True)
    else:
        job.join()
        print("completed", flush=True)
    """
)


def startScript(script, output, checkpoint, ending: str):
    """Start a run of ``script`` on local[2] that ends as ``ending`` says (``start`` passes its
    fifth argument on as the script's fourth)."""
    return start(script, output, checkpoint, "local[2]", ending)


def test_a_script_ending_in_shutdown_exits_and_its_job_goes_on_exactly_across_a_kill(spark, tmp_path, monkeypatch):
    script, output, checkpoint = tmp_path / "job.py", tmp_path / "out", tmp_path / "checkpoint"
    script.write_text(SCRIPT)
    status, log = ended(startScript(script, output, checkpoint, "shutdown"), output)
    assert status == 0, log[-3000:]
    assert "shut down NOT_RUNNING" in log
    assert STOPPED.search(log), log[-3000:]
    expected = runningCounts([word for _, word in EVENTS])
    kept = visibleLines(output)
    assert kept and not kept - expected, "the committed output is kept"
    killed = startScript(script, output, checkpoint, "join")
    killAfterCommits(killed, checkpoint, committed(checkpoint) + 2, random.Random(34))
    status, log = ended(killed, output)
    assert status == -signal.SIGKILL, log[-3000:]
    runHere(monkeypatch, script, output, checkpoint, "this session", "join")
    assert visibleLines(output) == expected
    assert not checkpoint.exists(), "a completed job's checkpoint goes"
