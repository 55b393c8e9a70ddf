"""Progress without data: Spark runs no micro-batch without new input, so a stream whose
watermarks move with time alone (ingestion time, an idle source) gets a heartbeat, and its
windows close within about a trigger interval of the watermark passing them."""

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, Sources, WindowDefinition, wholeItem
from sparkjet.coredag.runtime.stream.stream_dag import needsHeartbeat
from tests.conftest import eventually
from tests.streaming.test_stream_jobs import dropFile

pytestmark = pytest.mark.spark


def firstToken(line: str) -> int:
    return int(line.split()[0])


def secondToken(line: str) -> str:
    return line.split()[1]


def test_ingestion_time_windows_close_without_more_input(jet, tmp_path):
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(watched))).withIngestionTimestamps()
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(1_000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("ingested")))
    job = jet.newJob(p)
    assert needsHeartbeat(job.plan.dag, job.plan.physical), "the watermark follows the wall clock"
    try:
        dropFile(watched, "a.txt", ["x", "y", "x"])
        eventually(lambda: jet.getList("ingested"))
        closing = job.metrics().microBatchCount + 2
        eventually(lambda: job.metrics().microBatchCount >= closing)  # any later window would have closed by now
        assert sorted((r.key, r.result) for r in jet.getList("ingested")) == [("x", 2), ("y", 1)]
        assert len({r.start for r in jet.getList("ingested")}) == 1
        assert len(job.metrics().microBatches) > 2, "the heartbeat ran micro-batches without input"
    finally:
        job.cancel()


def test_an_idle_source_lets_a_merged_stream_close_its_windows(jet, tmp_path):
    busy, idle = tmp_path / "busy", tmp_path / "idle"
    busy.mkdir()
    idle.mkdir()
    p = Pipeline.create()
    stamped = [
        p.readFrom(Sources.fileWatcher(str(directory)).setPartitionIdleTimeout(1_000)).setName(directory.name)
        .withTimestamps(firstToken, 0)
        for directory in (busy, idle)
    ]
    (stamped[0].merge(stamped[1]).map(secondToken)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(100))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("merged-idle")))
    job = jet.newJob(p)
    assert needsHeartbeat(job.plan.dag, job.plan.physical), "two sources insert watermarks and may turn idle"
    try:
        dropFile(busy, "a.txt", ["10 ant", "20 bee", "30 ant", "500 cat"])
        eventually(lambda: jet.getList("merged-idle"))
        assert job.metrics().vertex("sliding-window").watermark == 500
        assert sorted((r.start, r.key, r.result) for r in jet.getList("merged-idle")) == [(0, "ant", 2), (0, "bee", 1)]
    finally:
        job.cancel()


def test_early_results_come_across_micro_batches_while_a_window_is_open(jet, tmp_path):
    watched = tmp_path / "in"
    watched.mkdir()
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(watched))).withTimestamps(firstToken, 0)
      .map(secondToken).groupingKey(wholeItem())
      .window(WindowDefinition.tumbling(1_000_000).setEarlyResultsPeriod(500))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("early")))
    job = jet.newJob(p)
    try:
        dropFile(watched, "a.txt", ["10 ant", "20 bee", "30 ant"])
        eventually(lambda: {(r.key, r.result) for r in jet.getList("early")} >= {("ant", 2), ("bee", 1)})
        assert all(r.isEarly and (r.start, r.end) == (0, 1_000_000) for r in jet.getList("early"))
        dropFile(watched, "b.txt", ["40 ant"])
        eventually(lambda: ("ant", 3) in {(r.key, r.result) for r in jet.getList("early")})
    finally:
        job.cancel()
