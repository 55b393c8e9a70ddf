"""The stream API sparkjet lacked (issue 27, "Missing API"), with Jet's tests ported:
TestSupport's disableCompleteCall() and disableLogging() (SlidingWindowPTest uses them),
JoinClause.joinMapEntries (BatchStageTest), TestSources.longStream (TestSourcesTest), the
processing guarantee on ProcessorContext, SourceBuilder.batch (SourceBuilderTest),
Sources.batchFromProcessor (SourcesTest), Sources.streamFromProcessor and Sinks.fromProcessor,
and the window results importable from sparkjet."""

import logging

import pytest

from sparkjet import (
    AggregateOperations,
    AssertionCompletedException,
    Assertions,
    AssertionSinks,
    JobConfig,
    JoinClause,
    Pipeline,
    PipelineError,
    PlanningError,
    Sinks,
    SourceBuilder,
    Sources,
    TestSources,
    UserFunctionError,
    WindowDefinition,
    plan,
    wholeItem,
)
from sparkjet import ProcessingGuarantee as JetGuarantee
from sparkjet.coredag.api.processor import AbstractProcessor, ProcessingGuarantee, ProcessorContext
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.processors.built_stream_source import (
    SourceBuffer,
    StartProcessor,
    completeOnce,
    restoreProcessor,
    snapshotOfProcessor,
)
from sparkjet.coredag.processors.built_batch_source import BuiltBatchP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.processors.stream_sources import ItemStreamP
from sparkjet.coredag.model.watermark import Watermark
from tests.streaming.test_sliding_window import Case, outboxFrame


def slidingWindow():
    """SlidingWindowPTest's supplier: windows of 4 frames sliding by 1 over one stage, summing."""
    return Case(hasDeduct=True, singleStage=True).supplier


def event(frameTs: int, value: int):
    return Case(hasDeduct=True, singleStage=True).event(frameTs, value)


def test_when_no_frames_received_then_only_the_watermark_without_complete():
    """SlidingWindowPTest.when_noFramesReceived_then_onlyEmitWm."""
    verifyProcessor(slidingWindow()).disableCompleteCall().input([Watermark(1)]).expectOutput([Watermark(1)]).verify()


def test_simple_smoke_without_complete_nor_logging():
    """SlidingWindowPTest.simple_smokeTest."""
    verifyProcessor(slidingWindow()).disableCompleteCall().disableLogging().input(
        [event(0, 1), Watermark(3)]
    ).expectOutput([outboxFrame(0, 1), outboxFrame(1, 1), outboxFrame(2, 1), outboxFrame(3, 1), Watermark(3)]).verify()


def test_without_the_complete_call_a_window_no_watermark_closed_is_not_emitted():
    test = verifyProcessor(slidingWindow()).input([event(0, 1), event(1, 1)])
    test.disableCompleteCall().expectOutput([]).verify()
    test.expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 2), outboxFrame(2, 2), outboxFrame(3, 2), outboxFrame(4, 1)]
    ).verify()


def test_a_processor_test_logs_its_inputs_and_outputs_unless_disabled(caplog):
    caplog.set_level(logging.INFO, logger="sparkjet.testSupport")
    verifyProcessor(slidingWindow()).disableSnapshots().input([event(0, 1), Watermark(3)]).expectOutput(
        [outboxFrame(0, 1), outboxFrame(1, 1), outboxFrame(2, 1), outboxFrame(3, 1), Watermark(3)]
    ).verify()
    messages = [record.getMessage() for record in caplog.records]
    mode = "verifyProcessor(mode='inbox one-by-one, outbox capacity 1')"
    assert f"{mode}: Input-0: [(-1, 1)]" in messages
    assert f"{mode}: Output-0: [{outboxFrame(0, 1)!r}]" in messages
    assert f"{mode}: input processed, calling complete()" in messages
    caplog.clear()
    verifyProcessor(slidingWindow()).disableLogging().input([Watermark(3)]).expectOutput([Watermark(3)]).verify()
    assert caplog.records == []


ITEM_COUNT = 1024
"""PipelineTestSupport.itemCount."""


def valueEntry(number: int) -> tuple:
    return (number, f"value-{number}")


def dudEntry(number: int) -> tuple:
    return (number, "dud")


def isEven(number: int) -> bool:
    return number % 2 == 0


def entry(item, match) -> tuple:
    return (item, match)


def dropped(item, match) -> None:
    return None


def joined(jet, enriching, join: str, mapFn) -> list:
    """Run ``range(ITEM_COUNT)`` joined (``join``: hashJoin or innerHashJoin) with the entries
    ``enriching`` makes of it, matched by joinMapEntries(wholeItem()); return the output sorted."""
    p = Pipeline.create()
    entries = enriching(p.readFrom(Sources.items(range(ITEM_COUNT))))
    primary = p.readFrom(Sources.items(range(ITEM_COUNT)))
    getattr(primary, join)(entries, JoinClause.joinMapEntries(wholeItem()), mapFn).writeTo(Sinks.list(join))
    jet.newJob(p).join()
    return sorted(jet.getList(join))


@pytest.mark.spark
def test_hash_join_matches_map_entries_by_key_and_gives_their_values(jet):
    """BatchStageTest.hashJoin."""
    output = joined(jet, lambda stage: stage.map(valueEntry), "hashJoin", entry)
    assert output == [(number, f"value-{number}") for number in range(ITEM_COUNT)]


@pytest.mark.spark
def test_inner_hash_join_with_map_entries_filters_out_the_unmatched(jet):
    """BatchStageTest.when_innerHashJoin_then_filterOutNulls."""
    output = joined(jet, lambda stage: stage.filter(isEven).map(valueEntry), "innerHashJoin", entry)
    assert output == [(number, f"value-{number}") for number in range(0, ITEM_COUNT, 2)]


@pytest.mark.spark
def test_hash_join_with_map_entries_drops_what_the_output_function_makes_none(jet):
    """BatchStageTest.hashJoin_when_outputFnReturnsNull_then_filteredOut."""
    assert joined(jet, lambda stage: stage.map(dudEntry), "hashJoin", dropped) == []


class AverageNear:
    """TestSourcesTest.test_longStream's check: the last five windows at most, never the first,
    average ``itemsPerSecond`` items within 0.1."""

    def __init__(self, itemsPerSecond: int) -> None:
        self.itemsPerSecond = itemsPerSecond

    def __call__(self, windowResults: list) -> None:
        windowsToConsider = min(5, max(len(windowResults) - 1, 0))
        considered = windowResults[len(windowResults) - windowsToConsider:] if windowsToConsider else []
        average = sum(result.result for result in considered) / windowsToConsider if windowsToConsider else 0.0
        assert abs(average - self.itemsPerSecond) <= 0.1, (
            f"Average items per second ({average:.2f}) too far from target ({self.itemsPerSecond})"
        )


@pytest.mark.spark
def test_long_stream_emits_its_rate_in_every_window(jet):
    """TestSourcesTest.test_longStream (its timeout of 60 s is 600 here: it ends the job as soon as
    it passes, and a loaded machine may take minutes to run the first micro-batches)."""
    p = Pipeline.create()
    (p.readFrom(TestSources.longStream(20, 0)).withNativeTimestamps(0)
      .window(WindowDefinition.tumbling(1000))
      .aggregate(AggregateOperations.counting())
      .apply(Assertions.assertCollectedEventually(600, AverageNear(20))))
    with pytest.raises(AssertionCompletedException, match="Assertion passed successfully"):
        jet.newJob(p).join()


@pytest.mark.spark
def test_long_stream_starts_its_numbers_and_times_after_the_initial_delay(spark):
    """The rate source's row n is timed n / rate seconds after its start (here 1000): with a
    delay of 1 s at 20 a second, the first 20 rows are skipped and the next numbered from 0."""
    rateRows = spark.range(100).selectExpr("id AS value", "timestamp_millis(1000 + id * 50) AS timestamp")
    rows = ItemStreamP(20, initialDelayMillis=1000, sourceId="longStream").delayedRows(rateRows).collect()
    assert [(row.sequence, row.eventTime) for row in rows] == [(n, 2000 + n * 50) for n in range(80)]


def test_long_streams_delay_reaches_its_processor():
    p = Pipeline.create()
    p.readFrom(TestSources.longStream(20, 2000)).withNativeTimestamps(0).writeTo(Sinks.noop())
    assert plan(p).dag.getVertex("longStream").processorSupplier.initialDelayMillis == 2000


@pytest.mark.parametrize(
    "rate, delay, message",
    [(0, 0, "eventsPerSecond must be a positive number, got 0"), (5, -1, "initialDelayMillis must be 0 or more")],
)
def test_long_stream_refuses_a_rate_or_delay_out_of_range(rate, delay, message):
    with pytest.raises(PipelineError, match=rf"TestSources.longStream \(called at .+\): {message}"):
        TestSources.longStream(rate, delay)


class EmitsGuarantee(AbstractProcessor):
    """Emits its context's processing guarantee when complete."""

    def complete(self) -> bool:
        return self.tryEmit(self.context.processingGuarantee)


@pytest.mark.parametrize("guarantee", list(ProcessingGuarantee))
def test_a_processor_reads_the_jobs_processing_guarantee_from_its_context(guarantee):
    context = ProcessorContext("v", 0, 1, processingGuarantee=guarantee)
    verifyProcessor(EmitsGuarantee).disableSnapshots().context(context).expectOutput([guarantee]).verify()


class TagsWithGuarantee(AbstractProcessor):
    """Emits each item with its context's processing guarantee."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit((item, self.context.processingGuarantee.name))


@pytest.mark.spark
def test_a_stream_jobs_processors_see_its_guarantee(jet, tmp_path):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream([(0, "a")])).withoutTimestamps()
      .customTransform("tags", TagsWithGuarantee).writeTo(Sinks.list("guarantees")))
    config = JobConfig().setProcessingGuarantee(JetGuarantee.EXACTLY_ONCE).setCheckpointLocation(str(tmp_path))
    jet.newJob(p, config).join()
    assert jet.getList("guarantees") == [("a", "EXACTLY_ONCE")]


def test_a_processor_context_says_no_guarantee_by_default():
    verifyProcessor(EmitsGuarantee).disableSnapshots().expectOutput([ProcessingGuarantee.NONE]).verify()


LINES = [f"line{number}" for number in range(ITEM_COUNT)]
destroyed: list = []


@pytest.fixture
def textFile(tmp_path):
    """SourceBuilderTest.createTestFile: ITEM_COUNT lines, line0 to line1023."""
    path = tmp_path / "stuff.txt"
    path.write_text("".join(line + "\n" for line in LINES))
    return str(path)


class FileReader:
    """SourceBuilderTest's fileReader: ``createFn`` opens the file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, context):
        return open(self.path, encoding="utf-8")


def readLine(reader, buffer) -> None:
    """SourceBuilderTest's fillBufferFn: one line, or close the buffer at the end."""
    line = reader.readline()
    if line:
        buffer.add(line.rstrip("\n"))
    else:
        buffer.close()


def closeReader(reader) -> None:
    destroyed.append(reader.name)
    reader.close()


def fileSource(path: str, name: str = "file-source"):
    return SourceBuilder.batch(name, FileReader(path)).fillBufferFn(readLine).destroyFn(closeReader)


def builtProcessors(source) -> BuiltBatchP:
    return source.build().processorSupplier


def test_a_built_batch_source_emits_what_fill_buffer_adds_until_it_closes_then_destroys(textFile):
    """SourceBuilderTest.batch_fileSource, at the processor: one run per mode, each destroyed."""
    destroyed.clear()
    verifyProcessor(builtProcessors(fileSource(textFile))).disableSnapshots().expectOutput(LINES).verify()
    assert destroyed == [textFile, textFile]


def test_a_built_batch_source_runs_in_one_processor_unless_distributed(textFile):
    """SourceBuilderTest.batch_fileSource_distributed, at the processor: processor 1 of 2 reads
    the file too once distributed, and nothing without it."""
    second = ProcessorContext("file-source", 1, 2)
    source = fileSource(textFile)
    verifyProcessor(builtProcessors(source)).disableSnapshots().context(second).expectOutput([]).verify()
    distributed = source.distributed(2)
    verifyProcessor(builtProcessors(distributed)).disableSnapshots().context(second).expectOutput(LINES).verify()
    assert (source.build().preferredLocalParallelism, distributed.build().preferredLocalParallelism) == (1, 2)


def noState(context) -> None:
    return None


def addsAfterClose(state, buffer) -> None:
    buffer.close()
    buffer.add("late")


def test_an_item_added_after_the_buffer_closed_fails_naming_the_source():
    source = SourceBuilder.batch("closing", noState).fillBufferFn(addsAfterClose)
    supplier = source.build().processorSupplier
    with pytest.raises(UserFunctionError, match=r"'closing'.+fillBufferFn.+added 'late' after it closed the buffer"):
        verifyProcessor(supplier).disableSnapshots().expectOutput([]).verify()
    with pytest.raises(PipelineError, match=r"SourceBuilder 'closing' .+ distributed\(\) takes a positive number"):
        source.distributed(0)


def test_a_batch_source_builder_without_fill_buffer_fn_is_refused():
    with pytest.raises(PipelineError, match=r"SourceBuilder 'empty' \(built at .+\): fillBufferFn must be set"):
        SourceBuilder.batch("empty", noState).build()


@pytest.mark.spark
def test_a_built_batch_source_in_a_job(jet, textFile):
    """SourceBuilderTest.batch_fileSource."""
    p = Pipeline.create()
    p.readFrom(fileSource(textFile).build()).writeTo(Sinks.list("built-batch"))
    jet.newJob(p).join()
    assert jet.getList("built-batch") == LINES


@pytest.mark.spark
def test_a_batch_source_from_processors_in_a_job(jet):
    """SourcesTest.fromProcessor (Jet reads an IMap's values; here ItemsP gives the sequence)."""
    p = Pipeline.create()
    p.readFrom(Sources.batchFromProcessor("test", ItemsP(tuple(range(ITEM_COUNT))))).writeTo(Sinks.list("from-processor"))
    jet.newJob(p).join()
    assert sorted(jet.getList("from-processor")) == list(range(ITEM_COUNT))


class WritesLines(AbstractProcessor):
    """A sink of the user's own: each processor writes its items into a file of its own."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def onInit(self, context) -> None:
        self.file = open(f"{self.directory}/part-{context.globalProcessorIndex}", "w", encoding="utf-8")

    def tryProcess0(self, item) -> bool:
        self.file.write(f"{item}\n")
        return True

    def close(self) -> None:
        self.file.close()


class LinesWriter:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def __call__(self) -> WritesLines:
        return WritesLines(self.directory)


@pytest.mark.spark
def test_a_sink_of_processors_of_ones_own(jet, tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(100))).writeTo(Sinks.fromProcessor("lines", LinesWriter(str(tmp_path)), 2))
    jet.newJob(p).join()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["part-0", "part-1"]
    assert sorted(int(line) for path in tmp_path.iterdir() for line in path.read_text().split()) == list(range(100))


class CountsTo(AbstractProcessor):
    """A stream source processor of the user's own: 0 to 9, one a complete() call, its next
    number in its snapshot."""

    LIMIT = 10

    def onInit(self, context) -> None:
        self.next = 0

    def complete(self) -> bool:
        if self.next < self.LIMIT and self.tryEmit(self.next):
            self.next += 1
        return self.next == self.LIMIT

    def saveToSnapshot(self) -> bool:
        return self.tryEmitToSnapshot("next", self.next)

    def restoreFromSnapshot(self, key, value) -> None:
        self.next = value


def firstTen(items) -> None:
    assert sorted(items) == list(range(10)), "0 to 9 not seen yet"


@pytest.mark.spark
def test_a_stream_from_a_processor_emits_what_its_complete_emits(jet):
    p = Pipeline.create()
    p.readFrom(Sources.streamFromProcessor("counting", CountsTo)).withoutTimestamps().writeTo(
        AssertionSinks.assertCollectedEventually(600, firstTen)
    )
    with pytest.raises(AssertionCompletedException, match="Assertion passed successfully"):
        jet.newJob(p).join()


def test_a_stream_processor_driven_as_a_source_goes_on_from_its_snapshot():
    context, buffer = ProcessorContext("counting", 0, 1), SourceBuffer(timestamped=False)
    driven = StartProcessor(CountsTo)(context)
    for _ in range(3):
        completeOnce(driven, buffer)
    snapshot = snapshotOfProcessor(driven)
    restarted = StartProcessor(CountsTo)(context)
    restoreProcessor(restarted, [snapshot])
    completeOnce(restarted, buffer)
    assert (snapshot, [item for _, item in buffer.drain()]) == ([("next", 3)], [0, 1, 2, 3])


def test_window_results_are_importable_from_sparkjet():
    import sparkjet
    from sparkjet.coredag.model import window_result

    assert (sparkjet.WindowResult, sparkjet.KeyedWindowResult) == (window_result.WindowResult, window_result.KeyedWindowResult)
    assert {"WindowResult", "KeyedWindowResult"} <= set(sparkjet.__all__)
