"""A stateful stream on the standalone cluster loses an executor mid-stream (issue 26): the state
of the processors that ran there lived in its Python workers; the tasks that run them next, on the
executor the worker starts again or on the other one, read it back from their state files, and
every running count is exact."""

import os
import pathlib
import signal
from collections import Counter

from sparkjet import AggregateOperations, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, wholeItem
from tests.cluster import WORKERS, awaitExecutors
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

FILES = [[f"w{(number * 7 + line) % 40}" for line in range(100)] for number in range(6)]


def executorPids(spark) -> list[int]:
    """Return the process ids of the session's executors (each a worker's JVM)."""
    appId, pids = spark.sparkContext.applicationId, []
    for entry in os.listdir("/proc"):
        try:
            arguments = (pathlib.Path("/proc") / entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in arguments and appId.encode() in arguments:
            pids.append(int(entry))
    return pids


def test_a_running_count_that_loses_an_executor_mid_stream_is_exact(spark, standaloneCluster, jet, tmp_path):
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
      .groupingKey(wholeItem()).rollingAggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("executor-loss")))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    job = jet.newJob(p, config.setCheckpointLocation(str(tmp_path / "checkpoint")))
    try:
        for number, lines in enumerate(FILES[:3]):
            dropFile(watched, f"{number}.txt", lines)
        eventually(lambda: len(jet.getList("executor-loss")) == 300)
        executors = executorPids(spark)
        assert len(executors) == WORKERS, f"the session's executors: {executors}"
        os.kill(executors[0], signal.SIGKILL)
        for number, lines in enumerate(FILES[3:], 3):
            dropFile(watched, f"{number}.txt", lines)
        eventually(lambda: len(jet.getList("executor-loss")) >= 600)
    finally:
        job.cancel()
    awaitExecutors(spark, WORKERS)
    held = Counter(line for lines in FILES for line in lines)
    expected = Counter((word, count) for word, total in held.items() for count in range(1, total + 1))
    assert Counter(tuple(entry) for entry in jet.getList("executor-loss")) == expected
