"""Cancelling, suspending and restarting jobs prints no Java stack trace (issue 25, point 7): a
stream query stopped while it writes its commit log interrupts Hadoop's Shell (the ``stat`` a
local rename runs), which logged the interrupt with some 50 lines of trace, then finished its
work. Spark's JVM writes to the process's stderr, so the jobs run in a script."""

import os
import sys
import textwrap

from tests.conftest import PROJECT, run, treeProgress

SCRIPT = textwrap.dedent(
    """
    import concurrent.futures, os, sys, time
    from sparkjet import AggregateOperations, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources
    from sparkjet.planner import Jet, JobStatus

    base = sys.argv[1]
    watched = os.path.join(base, "in")
    os.mkdir(watched)

    def eventually(condition):  # the test ends this script once it writes nothing for a long while
        while not condition():
            time.sleep(0.05)

    def drop(name, words):
        aside = os.path.join(base, name)
        with open(aside, "w") as file:
            file.write("\\n".join(words) + "\\n")
        os.replace(aside, os.path.join(watched, name))

    def word(line):
        return line

    def slowly(item):
        open(os.path.join(base, "running"), "w").close()
        time.sleep(0.01)
        return item

    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(watched)).withoutTimestamps()
      .groupingKey(word).rollingAggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("counts")))
    jet = Jet(master="local[2]")
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE).setCheckpointLocation(
        os.path.join(base, "checkpoint"))
    job = jet.newJob(p, config)
    counts = jet.getList("counts")
    for round in range(3):  # each stop lands just after a micro-batch, as Spark writes its commit
        drop(f"{round}.txt", ["ant", "bee"])
        eventually(lambda: {("ant", round + 1), ("bee", round + 1)} <= set(counts))
        if round == 1:
            job.restart()
        else:
            job.suspend()
            eventually(lambda: job.getStatus() is JobStatus.SUSPENDED)
            job.resume()
    drop("last.txt", ["ant"])
    eventually(lambda: ("ant", 4) in counts)
    job.cancel()
    try:
        job.join()
    except concurrent.futures.CancelledError:
        print("stream job cancelled", flush=True)

    batch = Pipeline.create()
    batch.readFrom(Sources.items(range(10_000))).map(slowly).writeTo(Sinks.list("slow"))
    long = jet.newJob(batch)
    eventually(lambda: os.path.exists(os.path.join(base, "running")))
    long.cancel()
    try:
        long.join()
    except concurrent.futures.CancelledError:
        print("batch job cancelled", flush=True)

    # What Hadoop's Shell logs when the thread joining its stderr reader is interrupted (the
    # stops above hit it now and then), and a warning of its that still shows.
    jvm = jet.spark().sparkContext._jvm
    shell = jvm.org.slf4j.LoggerFactory.getLogger("org.apache.hadoop.util.Shell")
    shell.warn("Interrupted while joining on: Thread[Thread-54,5,main]", jvm.java.lang.InterruptedException())
    shell.warn("Error while closing the error stream")
    jet.shutdown()
    print("done", flush=True)
    """
)


def test_cancel_suspend_and_restart_print_no_java_stack_trace(tmp_path):
    script = tmp_path / "quiet.py"
    script.write_text(SCRIPT)
    finished = run(
        [sys.executable, str(script), str(tmp_path)], treeProgress(tmp_path),
        cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT), "SPARKJET_UI": "off"},
    )
    stdout, stderr = finished.stdout, finished.stderr
    assert finished.returncode == 0, stderr
    assert stdout.splitlines() == ["stream job cancelled", "batch job cancelled", "done"]
    traces = [line for line in stderr.splitlines() if line.startswith("\tat ") or "InterruptedException" in line]
    assert traces == [], "Java stack traces on stderr:\n" + stderr
    assert "WARN Shell: Error while closing the error stream" in stderr, "Shell's other warnings still show"
