"""The functions Spark runs over a vertex's partitions: one processor over its input batches,
and the pick of one outbound edge's items. No pyspark here."""

import functools
import itertools
import pickle
from collections import Counter
from collections.abc import Generator, Iterator, Mapping

import attrs

from sparkjet.coredag.model.metrics import TaskMetrics
from sparkjet.coredag.runtime.crossing import Crossing, namedBatches
from sparkjet.coredag.runtime.live_processors import LiveProcessor, keepLive, takeLive
from sparkjet.coredag.runtime.processor_state import ProcessorState, RestoredShare
from sparkjet.coredag.runtime.state_store import SavedEntries, StateStore
from sparkjet.coredag.runtime.tasklet import (
    FRESH,
    Fresh,
    Live,
    Restored,
    Saved,
    Start,
    TaskletSpec,
    returning,
    runPartitionBatches,
)
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError
from sparkjet.coredag.runtime.watermarks import InboundWatermarks, OutputWatermarks, queuesOf


@attrs.frozen
class StreamStart:
    """What the processors of a vertex start a stream's micro-batch from and save at its end
    (a batch job's vertex, and a stream job's that no stream reaches, have none): the state
    each processor index saved at the end of the previous micro-batch (``restored``, or a
    ``RestoredShare`` of those another number of processors saved), the ``StateStore`` they
    save to, under the vertex's name in the DAG (``vertex``)."""

    vertex: str
    store: StateStore
    restored: Mapping[int, ProcessorState | RestoredShare] = attrs.field(factory=dict)
    saves: bool = True
    """Each processor saves its state once its input is consumed, instead of completing: every
    micro-batch but a final one."""
    keptAlive: bool = True
    """A Python worker keeps each processor alive for the next micro-batch. Not where a vertex
    no stream reaches feeds it, whose items come again every micro-batch."""
    savesChangesOnly: bool = False
    """Its processors can save only what changed (``Capabilities.savesChangesOnly``)."""


@attrs.frozen
class TaskEnd:
    """What a vertex's task ends with besides its output: its figures (``TaskMetrics.total()``)
    and, in a stream's micro-batch, the state its processor saved (None where it saved none)."""

    figures: Counter
    state: ProcessorState | None = None


def selectOrdinal(ordinal: int, batches: Iterator[list]) -> Iterator[list]:
    """Yield the items of ``(ordinal, item)`` batches that go to the outbound edge ``ordinal``."""
    for batch in batches:
        selected = [item for itemOrdinal, item in batch if itemOrdinal == ordinal]
        if selected:
            yield selected


def runVertex(
    spec: TaskletSpec, stream: StreamStart | None, crossing: Crossing, packed: bool, countsInput: bool,
    index: int, partition: Iterator,
) -> Generator[list, None, TaskEnd]:
    """Run processor ``index`` of the vertex over its partition; its output batches name the
    stage that emitted them where an item cannot be pickled (see ``namedBatches``); return what
    the task ends with. In a stream's micro-batch the processor takes up where it ended the
    previous one (kept alive in this worker, or restored from its state files) and saves its
    state to the job's ``StateStore``. Watermarks come and go in-band (see ``watermarks``): a
    processor that completes sends its done markers after its last item."""
    metrics = TaskMetrics()
    restored = stream.restored.get(index) if stream is not None else None
    watermarks = restored.start if isinstance(restored, RestoredShare) else restored or ProcessorState()
    saves = stream is not None and stream.saves
    resumed, last = _resumed(spec, stream, index, restored) if saves or restored is not None else (FRESH, None)
    batches = (pickle.loads(packet) for _, packet in partition if packet) if packed else partition  # b"": the home's
    batches = sliced(batches, spec.queueSize)
    if countsInput:
        batches = metrics.countedInput(spec.vertexName, batches)
    inbound = outbound = None
    if spec.watermarkQueues:
        queues = queuesOf(spec.watermarkQueues, index)
        tagged = len(spec.inboundOrdinals) > 1
        inbound = InboundWatermarks(
            queues, tagged, spec.inboundOrdinals[0], watermarks.coalescer, watermarks.observedWatermark
        )
        batches = inbound.items(batches)
    returned: list[Saved | None] = []
    try:
        output = runPartitionBatches(spec, index, batches, metrics, resumed)
        if saves:
            output = returning(output, returned)
        if spec.carriesWatermarks:
            outbound = OutputWatermarks(index, watermarks.emittedTo(spec.bucketCount), spec.hasOutboundEdges)
            output = outbound.items(output)
        output = metrics.countedOutput(spec.vertexName, output)
        if outbound is not None and spec.hasOutboundEdges and not saves:
            output = itertools.chain(output, outbound.done())
        yield from namedBatches(output, crossing)
        state = None
        if saves:  # a fast path returns no Saved: it saves no entry
            saved = returned[0] or Saved(())
            state = _savedState(stream, index, restored, resumed, last, saved, inbound, outbound)
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    metrics.discount(spec.vertexName, *(part.markerCount if part is not None else 0 for part in (inbound, outbound)))
    _drained(partition)
    return TaskEnd(metrics.total(), state)


def _chainOf(restored: ProcessorState | RestoredShare | None) -> tuple[str, ...]:
    """Return the files of the version a processor takes up (none when it restores a share)."""
    return restored.files if isinstance(restored, ProcessorState) else ()


def _resumed(
    spec: TaskletSpec, stream: StreamStart, index: int, restored: ProcessorState | RestoredShare | None,
) -> tuple[Start, SavedEntries | None]:
    """Return what processor ``index`` starts from (the processor kept alive in this worker
    where it saved the state ``restored`` names, else a new one restoring that state) and the
    entries its next delta is compared with (None: none, or its processor gives its deltas)."""
    chain, store = _chainOf(restored), stream.store
    ending = {
        "saves": stream.saves,
        "changesOnly": stream.saves and store.changesOnly(chain, stream.savesChangesOnly),
        "keeps": stream.keptAlive,
    }
    if isinstance(restored, ProcessorState) and stream.keptAlive and not spec.usesFastPath():
        takenUp = takeLive(_liveKey(stream, index), restored)
        if takenUp is not None:
            live = takenUp.live
            catchUp = functools.partial(store.changesIn, takenUp.replayed) if takenUp.replayed else None
            return Live(processor=live.processor, outbox=live.outbox, catchUp=catchUp, **ending), live.saved
    if restored is None or spec.usesFastPath():  # a fast path saves no entry
        return Fresh(**ending), None
    if isinstance(restored, ProcessorState) and not stream.savesChangesOnly:
        entries = store.load(restored)
        return Restored(entries=lambda: entries, **ending), SavedEntries.of(entries)
    return Restored(entries=functools.partial(store.load, restored), **ending), None


def _savedState(
    stream: StreamStart, index: int, restored: ProcessorState | RestoredShare | None, start: Start,
    last: SavedEntries | None, saved: Saved, inbound: InboundWatermarks | None, outbound: OutputWatermarks | None,
) -> ProcessorState:
    """Save what the processor hands to the next micro-batch: the snapshot entries it ``saved``
    (none on a fast path) to the state store (kept alive in this worker too) and, beside where
    they are, its watermarks."""
    version = stream.store.saveVersion(
        stream.vertex, index, list(saved.entries), start.changesOnly, stream.savesChangesOnly, last,
        _chainOf(restored),
    )
    if saved.kept is not None:
        processor, outbox = saved.kept
        kept = LiveProcessor(processor, outbox, version.savedBy, version.files, version.entries)
        keepLive(_liveKey(stream, index), kept)
    return ProcessorState(
        version.files,
        version.size,
        outbound.emitted() if outbound is not None else (),
        inbound.observed if inbound is not None else ProcessorState().observedWatermark,
        version.savedBy,
        inbound.state() if inbound is not None else None,
    )


def _liveKey(stream: StreamStart, index: int) -> tuple[str, str, int]:
    return stream.store.root, stream.vertex, index


def _drained(partition: Iterator) -> None:
    """Read the partition to its end, as a source that ignores its (empty) input does not:
    PySpark reuses a Python worker only if the task read its whole input."""
    for _ in partition:
        pass


def sliced(batches: Iterator[list], size: int) -> Iterator[list]:
    """Cut batches longer than ``size``: the queue between two processors holds at most that."""
    for batch in batches:
        if len(batch) <= size:
            yield batch
        else:
            yield from (batch[start : start + size] for start in range(0, len(batch), size))


