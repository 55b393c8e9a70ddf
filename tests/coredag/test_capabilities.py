"""Each processor supplier declares what its processors do as one ``Capabilities`` value: the
built-in ones what they really do, a wrapper what the supplier it wraps does, a supplier of the
user's own (a class, a partial, a lambda) the default; the physical plan keeps each vertex's."""

import functools

from sparkjet import AbstractProcessor, AggregateOperations, Pipeline, Sinks, Sources, WindowDefinition, wholeItem
from sparkjet.coredag.api.capabilities import Capabilities, capabilitiesOf
from sparkjet.coredag.processors.coaggregation import TaggedInputP
from sparkjet.coredag.processors.peeking import ItemLogger, PeekingP, PeekingSupplier
from sparkjet.coredag.processors.sinks import CollectToList, CreateDataFrame, SaveAsTextFiles
from sparkjet.coredag.processors.stateless import StatelessChainP
from sparkjet.pipeline.stream_sources import TestSources
from sparkjet.planner.planning import plan


class Committing(AbstractProcessor):
    def snapshotCommitFinish(self, success: bool) -> bool:
        return True


class Passing(AbstractProcessor):
    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item)


def capabilitiesByVertex(pipeline: Pipeline) -> dict[str, Capabilities]:
    """Return the capabilities of each vertex of ``pipeline``'s Core DAG, by vertex name."""
    return {vertex.name: capabilitiesOf(vertex.processorSupplier) for vertex in plan(pipeline).dag}


def streamJob() -> Pipeline:
    p = Pipeline.create()
    words = p.readFrom(Sources.fileWatcher("/nowhere")).withIngestionTimestamps()
    window = WindowDefinition.sliding(10, 5).setEarlyResultsPeriod(5)
    words.groupingKey(wholeItem()).window(window).aggregate(AggregateOperations.counting()).writeTo(Sinks.files("/out"))
    p.readFrom(TestSources.finiteStream([(1, "a")])).withNativeTimestamps(0).writeTo(Sinks.logger())
    return p


def test_a_stream_source_reads_a_stream_and_a_finite_test_stream_is_finite():
    declared = capabilitiesByVertex(streamJob())
    watcher, finite = declared["fileWatcherSource(/nowhere/*)"], declared["finiteStream"]
    assert watcher.readsStream and watcher.readsThroughSpark and watcher.hasFastPath and not watcher.finite
    assert finite.readsStream and finite.finite


def test_inserting_watermarks_and_windows_declare_what_moves_them_with_time():
    declared = capabilitiesByVertex(streamJob())
    ingestion, native = declared["fileWatcherSource(/nowhere/*)-add-timestamps"], declared["finiteStream-add-timestamps"]
    assert ingestion.emitsWatermarks and ingestion.needsHeartbeat, "ingestion time follows the wall clock"
    assert native.emitsWatermarks and not native.needsHeartbeat and native.turnsIdle
    assert declared["sliding-window"].needsHeartbeat, "early results come as time passes"
    assert not declared["sliding-window"].hasFastPath


def test_sinks_declare_their_output_and_whether_they_are_exactly_once():
    p = Pipeline.create()
    items = p.readFrom(Sources.items([1, 2]))
    for sink in (Sinks.list("kept"), Sinks.files("/out"), Sinks.noop(), Sinks.logger(), Sinks.dataframe("frame")):
        items.writeTo(sink)
    declared = capabilitiesByVertex(p)
    assert declared["listSink(kept)"].output == CollectToList("kept") and declared["listSink(kept)"].exactlyOnce
    assert isinstance(declared["filesSink(/out)"].output, SaveAsTextFiles) and declared["filesSink(/out)"].exactlyOnce
    assert declared["noop"].exactlyOnce and declared["noop"].output is None
    assert not declared["loggerSink"].exactlyOnce and declared["loggerSink"].output is None
    assert isinstance(declared["dataframeSink(frame)"].output, CreateDataFrame)
    assert not declared["dataframeSink(frame)"].exactlyOnce
    assert not declared["items"].readsStream and not declared["items"].exactlyOnce


def test_a_prepare_step_accepts_any_routing_and_its_combining_step_does_not():
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.noop())
    declared = capabilitiesByVertex(p)
    assert declared["group-and-aggregate-prepare"].acceptsAnyRouting
    assert not declared["group-and-aggregate"].acceptsAnyRouting


def test_a_supplier_of_the_users_own_gets_the_default_and_a_heartbeat_where_it_may_commit():
    assert capabilitiesOf(Passing) == Capabilities(), "no fast path, so it may emit watermarks"
    assert capabilitiesOf(Committing) == Capabilities(needsHeartbeat=True), "its commit's second phase must not wait"
    assert capabilitiesOf(functools.partial(Committing)).needsHeartbeat
    assert capabilitiesOf(lambda: Passing()).needsHeartbeat, "a lambda does not tell what it makes"


def test_a_wrapper_gives_the_capabilities_of_the_supplier_it_wraps():
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher("/nowhere")).withoutTimestamps().peek().writeTo(Sinks.noop())
    peeked = next(v.processorSupplier for v in plan(p).dag if isinstance(v.processorSupplier, PeekingP))
    assert capabilitiesOf(peeked) == capabilitiesOf(peeked.inner) and capabilitiesOf(peeked).readsStream
    logger = ItemLogger("peeked")
    assert capabilitiesOf(PeekingSupplier(Committing, logger)) == capabilitiesOf(Committing)
    assert capabilitiesOf(PeekingSupplier(Passing, logger)) == capabilitiesOf(Passing)
    chain = StatelessChainP(())
    assert capabilitiesOf(TaggedInputP(chain)) == Capabilities(hasFastPath=True, takesOrdinalPairs=True)


def test_the_physical_plan_keeps_each_vertexs_capabilities():
    job = plan(streamJob())
    physical = job.physicalPlan(2)
    assert {vertex.name: physical.vertex(vertex.name).capabilities for vertex in job.dag} == capabilitiesByVertex(streamJob())
