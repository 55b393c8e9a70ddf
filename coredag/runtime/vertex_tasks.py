"""The functions Spark runs over a vertex's partitions: one processor over its input batches,
and the pick of one outbound edge's items. No pyspark here."""

import itertools
import pickle
from collections.abc import Iterator

from sparkjet.coredag.api.saves_changes import SavesChanges, replayChanges
from sparkjet.coredag.model.metrics import TaskMetrics
from sparkjet.coredag.runtime.crossing import Crossing, namedBatches
from sparkjet.coredag.runtime.live_processors import LiveProcessor, TakenUp, keepLive, takeLive
from sparkjet.coredag.runtime.processor_state import ProcessorState, RestoredShare
from sparkjet.coredag.runtime.state_store import SavedEntries, SavedVersion, StateStore
from sparkjet.coredag.runtime.tasklet import Snapshot, TaskletSpec, runPartitionBatches
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError
from sparkjet.coredag.runtime.watermarks import InboundWatermarks, OutputWatermarks, queuesOf


def selectOrdinal(ordinal: int, batches: Iterator[list]) -> Iterator[list]:
    """Yield the items of ``(ordinal, item)`` batches that go to the outbound edge ``ordinal``."""
    for batch in batches:
        selected = [item for itemOrdinal, item in batch if itemOrdinal == ordinal]
        if selected:
            yield selected


def runVertex(
    spec: TaskletSpec, crossing: Crossing, packed: bool, countsInput: bool, counts, states,
    index: int, partition: Iterator,
) -> Iterator[list]:
    """Run processor ``index`` of the vertex over its partition; its output batches name the
    stage that emitted them where an item cannot be pickled (see ``namedBatches``). In a
    stream's micro-batch the processor takes up where it ended the previous one (kept alive in
    this worker, or restored from its state files), saves its state to the job's ``StateStore``
    and adds where it saved it to ``states``. Watermarks come and go in-band (see ``watermarks``):
    a processor that completes sends its done markers after its last item."""
    metrics = TaskMetrics()
    restored = spec.restoredStates.get(index) if spec.restoredStates else None
    start = restored.start if isinstance(restored, RestoredShare) else restored or ProcessorState()
    snapshot = _snapshot(spec, index, restored) if spec.savesState or restored is not None else None
    batches = (pickle.loads(packet) for _, packet in partition if packet) if packed else partition  # b"": the home's
    batches = sliced(batches, spec.queueSize)
    if countsInput:
        batches = metrics.countedInput(spec.vertexName, batches)
    inbound = outbound = None
    if spec.watermarkQueues:
        queues = queuesOf(spec.watermarkQueues, index)
        tagged = len(spec.inboundOrdinals) > 1
        inbound = InboundWatermarks(queues, tagged, spec.inboundOrdinals[0], start.coalescer, start.observedWatermark)
        batches = inbound.items(batches)
    try:
        output = runPartitionBatches(spec, index, batches, metrics, snapshot)
        if spec.carriesWatermarks:
            outbound = OutputWatermarks(index, start.emittedTo(spec.bucketCount), spec.hasOutboundEdges)
            output = outbound.items(output)
        output = metrics.countedOutput(spec.vertexName, output)
        if outbound is not None and spec.hasOutboundEdges and not spec.savesState:
            output = itertools.chain(output, outbound.done())
        yield from namedBatches(output, crossing)
        if spec.savesState:
            saved = _savedState(spec, index, snapshot, inbound, outbound)
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    metrics.discount(spec.vertexName, *(part.markerCount if part is not None else 0 for part in (inbound, outbound)))
    counts.add(metrics.total())
    if spec.savesState:
        states.add({(spec.dagVertexName, index): saved})
    _drained(partition)


class _RestoringSnapshot(Snapshot):
    """A snapshot that notes the entries it restored from the files, for the next delta (a
    processor that ``SavesChanges`` gives its own)."""

    def __init__(self, store: StateStore, restored, saves: bool, takenUp: TakenUp | None) -> None:
        chain = _chainOf(restored)
        live = None if takenUp is None else takenUp.live
        super().__init__(
            self._load, saves, restored is not None, None if live is None else (live.processor, live.outbox),
            changesOnly=saves and store.extends(chain),
            catchUp=self._replay if takenUp is not None and takenUp.replayed else None,
        )
        self._store, self._restored, self.chain = store, restored, chain
        self._replayed = () if takenUp is None else takenUp.replayed
        self.lastSaved: SavedEntries | None = None if live is None else live.saved

    def _load(self) -> list:
        entries = self._store.load(self._restored) if self._restored is not None else []
        if isinstance(self._restored, ProcessorState) and not self.givesChanges:
            self.lastSaved = SavedEntries.of(entries)
        return entries

    def _replay(self, processor: SavesChanges) -> None:
        replayChanges(processor, *self._store.changesIn(self._replayed))

    def save(self, vertex: str, index: int) -> SavedVersion:
        """Write the entries the processor saved to the store: the delta it gave, or its state
        (then compared with the last version, unless it gives its deltas)."""
        if self.changesOnly and self.givesChanges:
            return self._store.saveChanges(vertex, index, list(self.saved), self.chain)
        return self._store.save(vertex, index, list(self.saved), self.lastSaved, self.chain, not self.givesChanges)


def _chainOf(restored) -> tuple[str, ...]:
    """Return the files of the version a processor takes up (none when it restores a share)."""
    return restored.files if isinstance(restored, ProcessorState) else ()


def _snapshot(spec: TaskletSpec, index: int, restored) -> _RestoringSnapshot:
    """Return the snapshot processor ``index`` starts from: the processor kept alive in this
    worker where it saved the state ``restored`` names, else that state read back."""
    takenUp = None
    if isinstance(restored, ProcessorState) and spec.keptAlive and not spec.usesFastPath():
        takenUp = takeLive(_liveKey(spec, index), restored)
    return _RestoringSnapshot(spec.stateStore, restored, spec.savesState, takenUp)


def _savedState(
    spec: TaskletSpec, index: int, snapshot: _RestoringSnapshot,
    inbound: InboundWatermarks | None, outbound: OutputWatermarks | None,
) -> ProcessorState:
    """Save what the processor hands to the next micro-batch: its snapshot entries to the state
    store (kept alive in this worker too) and, beside where they are, its watermarks."""
    version = snapshot.save(spec.dagVertexName, index)
    if snapshot.kept is not None:
        processor, outbox = snapshot.kept
        keepLive(_liveKey(spec, index), LiveProcessor(processor, outbox, version.savedBy, version.files, version.entries))
    return ProcessorState(
        version.files,
        version.size,
        outbound.emitted() if outbound is not None else (),
        inbound.observed if inbound is not None else ProcessorState().observedWatermark,
        version.savedBy,
        inbound.state() if inbound is not None else None,
    )


def _liveKey(spec: TaskletSpec, index: int) -> tuple[str, str, int]:
    return spec.stateStore.root, spec.dagVertexName, index


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


