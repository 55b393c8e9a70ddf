"""The stream DAGs the Connect tests run micro-batch by micro-batch on both engines, and the
run itself (``runMicroBatches``), as ``MicroBatchLoop.run`` drives an engine: module-level, so
that the Connect server's process runs the same micro-batches on the classic engine."""

import base64
import pathlib
import pickle
from collections import Counter

import attrs

from sparkjet import AggregateOperations, JoinClause, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem
from sparkjet.coredag.api.processor import AbstractProcessor, ProcessingGuarantee
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.classic_engine import ClassicEngine
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.physical_plan import physicalPlan
from sparkjet.coredag.runtime.processor_state import processorWatermarks
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.stream_dag import staticVertices, streamSources, unpeeked
from sparkjet.planner.planning import planOf

from tests.connect.classic_runs import figuresOf

ROWS = "source string, text string, eventTime bigint, sequence bigint"
"""The shape of a micro-batch's rows, which every stream source shares (``StreamSourceP.streamRows``)."""

WORDS = "ant bee ant cat ant dog bee cat ant eel dog ant bee cat fox".split()
WINDOW, LAG = 10, 4


def wordEvents(first: int, count: int) -> list[tuple[int, str]]:
    """Return ``count`` word events timed ``first``, ``first + 1``...: the words in turn."""
    return [(time, WORDS[time % len(WORDS)]) for time in range(first, first + count)]


def windowedCounts(events) -> Counter:
    """Return the tumbling windows' counts of ``events`` by (window start, word), computed apart."""
    return Counter((time - time % WINDOW, word) for time, word in events)


def wordStream(p: Pipeline):
    """Return the stage of a finite stream of words, timed natively, read by one processor (so
    that both engines give it a micro-batch's rows in their order); its events are the rows a
    test gives each micro-batch."""
    return p.readFrom(TestSources.finiteStream([(0, "")])).withNativeTimestamps(LAG).setLocalParallelism(1)


def windowedWordCount() -> Pipeline:
    """Per word, its count in tumbling windows, into list 'counts'."""
    p = Pipeline.create()
    (wordStream(p).groupingKey(wholeItem()).window(WindowDefinition.tumbling(WINDOW))
     .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts")))
    return p


def joinedWordCount(marker: str) -> Pipeline:
    """Each word joined with its animal's name, a batch stage (each name it reads noted by a line
    in ``marker``), then counted in tumbling windows, into list 'counts'."""
    p = Pipeline.create()
    names = p.readFrom(TestSources.items([(word, word.upper()) for word in sorted(set(WORDS))])).setName("names")
    noted = names.map(Noting(marker)).setName("noted names")
    (wordStream(p).hashJoin(noted, JoinClause.onKeys(wholeItem(), first).projecting(second), joined)
     .groupingKey(wholeItem()).window(WindowDefinition.tumbling(WINDOW))
     .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts")))
    return p


def filedWords(directory: str) -> Pipeline:
    """Each word, but 'boom', which fails its stage, written to files in ``directory``."""
    p = Pipeline.create()
    wordStream(p).map(failingOnBoom).setName("words").writeTo(Sinks.files(directory))
    return p


def guaranteedWords(parallelism: int) -> Pipeline:
    """Each word (untimed) read by ``parallelism`` processors, paired with the guarantee its
    next processor's context gives, into list 'words'."""
    p = Pipeline.create()
    words = p.readFrom(TestSources.finiteStream([(0, "")])).withoutTimestamps().setLocalParallelism(parallelism)
    words.customTransform("guarantee", Guaranteeing).writeTo(Sinks.list("words"))
    return p


class Guaranteeing(AbstractProcessor):
    """Pairs each item with the job's processing guarantee, as its context says."""

    def tryProcess0(self, item) -> bool:
        return self.tryEmit((item, self.context.processingGuarantee.name))


def first(pair):
    return pair[0]


def second(pair):
    return pair[1]


def joined(word, name):
    return f"{word}:{name}"


def failingOnBoom(word: str) -> str:
    if word == "boom":
        raise ValueError("a word that explodes")
    return word


@attrs.frozen
class Noting:
    """Passes each item on, noting it by a line in the file ``marker``."""

    marker: str

    def __call__(self, item):
        with open(self.marker, "a") as noted:
            noted.write(f"{item}\n")
        return item


PIPELINES = {f.__name__: f for f in (windowedWordCount, joinedWordCount, filedWords, guaranteedWords)}


@attrs.frozen
class StreamRun:
    """Micro-batches of stream DAG ``pipeline`` (built with ``arguments``) at ``parallelism``,
    in turn with one cache (a run of a stream job): each ``(batchId, events)``, events None for
    the final one; its processors' states saved under ``checkpoint``, starting from ``restored``."""

    pipeline: str
    parallelism: int
    checkpoint: str
    batches: tuple[tuple[int, tuple | None], ...]
    arguments: tuple = ()
    restored: dict = attrs.Factory(dict)
    guarantee: ProcessingGuarantee = ProcessingGuarantee.NONE


@attrs.frozen
class MicroBatchResult:
    """What one micro-batch gave: its lists, its figures (without times) and its processors'
    watermarks (observed, last emitted)."""

    lists: dict
    figures: Counter
    watermarks: dict


@attrs.frozen
class StreamRunResult:
    """What a run gave: each micro-batch's result, the states it ended with, and the error that
    failed it (None where none did)."""

    microBatches: list[MicroBatchResult]
    states: dict
    failure: Exception | None = None


def streamRows(spark, dag, events):
    """Return ``events`` as a micro-batch's rows of the DAG's stream source, as the finite stream
    source's query reads them (``FiniteStreamP.eventRows``): each event pickled, its number the sequence."""
    sourceId = unpeeked(streamSources(dag)[0]).sourceId
    rows = [
        (sourceId, base64.b64encode(pickle.dumps(event)).decode("ascii"), None, sequence)
        for sequence, event in enumerate(events)
    ]
    return spark.createDataFrame(rows, ROWS)


def runMicroBatches(engine, spark, run: StreamRun) -> StreamRunResult:
    """Run ``run``'s micro-batches on ``engine`` of ``spark`` as a stream job's run does: its files
    sinks' directories claimed first, each micro-batch's files committed into them, states
    handed on; a failed micro-batch ends the run (its outputs aborted, as the run's are)."""
    dag = preflightDag(planOf(PIPELINES[run.pipeline](*run.arguments)).dag)
    plan, control = physicalPlan(dag, run.parallelism), engine.jobControl(run.pipeline)
    checkpoint, caches, states = StreamCheckpoint(run.checkpoint), StreamCaches(), run.restored
    outputs = engine.outputDirectories(dag)
    for output in outputs.values():
        output.claimOnce()
    results = []
    try:
        for batchId, events in run.batches:
            final = events is None
            for output in outputs.values():
                output.startMicroBatch(batchId)
            microBatch = MicroBatch(
                batchId, None if final else streamRows(spark, dag, events), states, checkpoint.stateStore(batchId),
                outputs, final, staticVertices(dag), run.guarantee,
            )
            outcome = engine.runMicroBatch(dag, plan, run.pipeline, control, microBatch, caches)
            states = states if final else outcome.states
            for output in outputs.values():
                output.keepMicroBatch()
            results.append(MicroBatchResult(outcome.lists, figuresOf(outcome.counts), processorWatermarks(outcome.states)))
    except Exception as error:
        for output in outputs.values():
            output.abort()
        return StreamRunResult(results, states, error)
    finally:
        caches.staticOutputs.close()
    return StreamRunResult(results, states)


def runMicroBatchesOnClassicEngine(spark, run: StreamRun) -> StreamRunResult:
    """Run ``run``'s micro-batches on the classic engine of ``spark``."""
    return runMicroBatches(ClassicEngine(spark), spark, run)


def committedLines(directory: pathlib.Path) -> tuple[list[str], Counter]:
    """Return the names in ``directory`` but checksums (the Connect engine writes none), and the
    lines of its files."""
    names = sorted(name for name in (path.name for path in directory.iterdir()) if not name.endswith(".crc"))
    files = [directory / name for name in names if (directory / name).is_file()]
    lines = Counter(line for path in files for line in path.read_text().splitlines())
    return names, lines
