"""Stream sources and the choice of event time, as Jet's StreamSourceStage has it: the plans
they lower to and the errors of a wrong choice (no Spark needed)."""

import base64
import pickle
import re

import pytest

from sparkjet import (
    AggregateOperations,
    DagError,
    InputError,
    Jet,
    Pipeline,
    Sinks,
    Sources,
    TestSources,
    WindowDefinition,
    plan,
    wholeItem,
)
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.simple_event import SimpleEvent
from sparkjet.coredag.processors.stream_sources import FileWatcherP, GeneratedEvents, PickledEvents, SocketP
from sparkjet.pipeline import PipelineError


def windowedWordCount(source) -> Pipeline:
    p = Pipeline.create()
    (p.readFrom(source)
      .withTimestamps(lambda line: int(line.split(" ", 1)[0]), 2_000)
      .flatMap(lambda line: re.split(r"\W+", line.split(" ", 1)[1].lower()))
      .filter(lambda word: word != "")
      .groupingKey(wholeItem())
      .window(WindowDefinition.tumbling(10_000))
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("counts")))
    return p


def test_the_windowed_word_count_over_a_watched_directory_lowers_to_jets_plan():
    assert plan(windowedWordCount(Sources.fileWatcher("in"))).toDotString() == """digraph DAG {
\t"fileWatcherSource(in/*)" [localParallelism=1];
\t"fileWatcherSource(in/*)-add-timestamps" [localParallelism=1];
\t"fused(flat-map, filter)" [localParallelism=default];
\t"sliding-window-prepare" [localParallelism=default];
\t"sliding-window" [localParallelism=default];
\t"listSink(counts)" [localParallelism=1];
\t"fileWatcherSource(in/*)" -> "fileWatcherSource(in/*)-add-timestamps" [label="isolated", queueSize=1024];
\t"fileWatcherSource(in/*)-add-timestamps" -> "fused(flat-map, filter)" [queueSize=1024];
\t"fused(flat-map, filter)" -> "sliding-window-prepare" [label="partitioned", queueSize=1024];
\tsubgraph cluster_0 {
\t\t"sliding-window-prepare" -> "sliding-window" [label="distributed-partitioned", queueSize=1024];
\t}
\t"sliding-window" -> "listSink(counts)" [queueSize=1024];
}"""


def test_a_source_parallelism_set_on_the_stage_is_the_watermarking_vertex_parallelism_too():
    p = Pipeline.create()
    p.readFrom(Sources.socket("localhost", 9999)).withIngestionTimestamps().setLocalParallelism(3).writeTo(Sinks.noop())
    dag = plan(p).dag
    assert dag.getVertex("socketSource(localhost:9999)").localParallelism == 3
    assert dag.getVertex("socketSource(localhost:9999)-add-timestamps").localParallelism == 3


def test_without_timestamps_the_source_feeds_its_stages_directly():
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher("in")).withoutTimestamps().map(str.upper).writeTo(Sinks.list("lines"))
    names = [vertex.name for vertex in plan(p).dag]
    assert names == ["fileWatcherSource(in/*)", "map", "listSink(lines)"]


def test_a_source_without_native_timestamps_refuses_them_with_jets_message():
    stage = Pipeline.create().readFrom(Sources.fileWatcher("in"))
    with pytest.raises(PipelineError, match="The source doesn't support native timestamps"):
        stage.withNativeTimestamps(0)


def test_the_test_streams_have_native_timestamps():
    p = Pipeline.create()
    p.readFrom(TestSources.itemStream(10)).withNativeTimestamps(100).writeTo(Sinks.noop())
    policy = plan(p).dag.getVertex("itemStream-add-timestamps").processorSupplier.eventTimePolicy
    assert policy.timestampFn(JetEvent(7, "x")) == 7


def test_a_stage_must_choose_its_timestamps_before_anything_else():
    stage = Pipeline.create().readFrom(Sources.fileWatcher("in"))
    with pytest.raises(PipelineError, match=r"choose its timestamps before map\(\).*withTimestamps"):
        stage.map(str.upper)


def test_a_stream_without_event_time_cannot_be_windowed():
    stage = Pipeline.create().readFrom(Sources.fileWatcher("in")).withoutTimestamps()
    with pytest.raises(PipelineError, match=r"window\(\) needs event time"):
        stage.window(WindowDefinition.tumbling(10))


def test_a_timestamped_stream_refuses_more_timestamps_with_jets_message():
    stage = Pipeline.create().readFrom(Sources.fileWatcher("in")).withIngestionTimestamps()
    with pytest.raises(PipelineError, match="This stage already has timestamps assigned to it"):
        stage.addTimestamps(len, 0)


def test_a_stream_without_timestamps_can_get_them_mid_pipeline():
    p = Pipeline.create()
    stage = p.readFrom(Sources.fileWatcher("in")).withoutTimestamps().map(str.strip).addTimestamps(len, 5)
    stage.window(WindowDefinition.tumbling(10)).aggregate(AggregateOperations.counting()).writeTo(Sinks.noop())
    assert "add-timestamps" in [vertex.name for vertex in plan(p).dag]


@pytest.mark.parametrize("lag", [-1, 1.5, "2"])
def test_a_lag_must_be_a_whole_number_of_at_least_zero(lag):
    with pytest.raises(PipelineError, match="allowed lag must be 0 or more"):
        Pipeline.create().readFrom(Sources.fileWatcher("in")).withTimestamps(len, lag)


def test_the_partition_idle_timeout_reaches_the_watermarking_policy():
    p = Pipeline.create()
    source = Sources.fileWatcher("in").setPartitionIdleTimeout(1_500)
    p.readFrom(source).withTimestamps(len, 0).writeTo(Sinks.noop())
    policy = plan(p).dag.getVertex("fileWatcherSource(in/*)-add-timestamps").processorSupplier.eventTimePolicy
    assert policy.idleTimeoutMillis == 1_500


def test_a_negative_idle_timeout_is_refused():
    with pytest.raises(PipelineError, match="setPartitionIdleTimeout.*0 \\(never idle\\) or more"):
        Sources.fileWatcher("in").setPartitionIdleTimeout(-5)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: TestSources.itemStream(0), "itemsPerSecond must be a positive number"),
        (lambda: TestSources.finiteStream([(1, "a"), "b"]), r"must be a \(timestamp, item\) pair, got 'b'"),
        (lambda: TestSources.finiteStream([(1, "a")], itemsPerBatch=0), "itemsPerBatch must be a positive number"),
        (lambda: Sources.socket("localhost", 70_000), "no TCP port 70000"),
    ],
)
def test_bad_arguments_of_stream_sources_are_refused_naming_the_call(make, message):
    with pytest.raises(PipelineError, match=message):
        make()


def test_watching_a_missing_directory_fails_before_the_job_starts(tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(tmp_path / "missing"))).withoutTimestamps().writeTo(Sinks.noop())
    with pytest.raises(InputError, match=r"Sources.fileWatcher: the directory '.*missing' does not exist"):
        preflightDag(plan(p).dag)


def test_the_rows_of_a_finite_stream_become_its_items_with_their_timestamps():
    rows = [(base64.b64encode(pickle.dumps((5, "x"))).decode(), None, None)]
    assert PickledEvents(timestamped=True)(rows) == [JetEvent(5, "x")]
    assert PickledEvents(timestamped=False)(rows) == ["x"]


def test_the_rows_of_the_rate_source_become_simple_events():
    assert GeneratedEvents(SimpleEvent, timestamped=False)([(None, 1_000, 3)]) == [SimpleEvent(1_000, 3)]
    assert GeneratedEvents(SimpleEvent, timestamped=True)([(None, 1_000, 3)]) == [JetEvent(1_000, SimpleEvent(1_000, 3))]


def test_a_stream_job_refuses_a_dataframe_sink_before_it_starts():
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher("in")).withoutTimestamps().writeTo(Sinks.dataframe("frame"))
    with pytest.raises(DagError, match=r"takes a stream, but Sinks\.dataframe makes one whole DataFrame per job"):
        Jet().newJob(p)


def test_a_socket_source_says_why_a_guaranteed_job_cannot_restart_from_it_and_what_to_use():
    socket = SocketP("localhost", 9999, sourceId="socketSource(localhost:9999)")
    assert socket.cannotReplay() == (
        "Sources.socket('localhost', 9999) cannot give its lines again after a restart (Spark's socket "
        "source keeps them in the driver's memory only, so a restarted job fails on offsets it no longer "
        "has): run the job without a processing guarantee (ProcessingGuarantee.NONE: started again, it "
        "reads what the server sends from then on), or have the server write its lines to files, each "
        "written elsewhere and renamed into a directory that Sources.fileWatcher reads, which a restarted "
        "job reads again"
    )


def test_a_watched_directory_can_be_read_again_after_a_restart():
    assert FileWatcherP("in", sourceId="fileWatcherSource(in/*)").cannotReplay() is None
