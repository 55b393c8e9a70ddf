"""The functions Spark runs over a vertex's partitions: one processor over its input batches,
and the pick of one outbound edge's items. No pyspark here."""

import itertools
import pickle
from collections.abc import Iterator

from sparkjet.coredag.model.metrics import TaskMetrics
from sparkjet.coredag.runtime.crossing import Crossing, namedBatches
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.tasklet import Snapshot, TaskletSpec, runPartitionBatches
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError
from sparkjet.coredag.runtime.watermarks import InputMarkers, OutputWatermarks


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
    stream's micro-batch the processor starts from the state it saved in the previous one and
    adds the state it ends with to ``states``."""
    metrics = TaskMetrics()
    previous = spec.restoredStates.value.get(index) if spec.restoredStates else None
    restored = previous or ProcessorState()
    restoredEntries = restored.entries()
    follows = previous is not None
    snapshot = Snapshot(restoredEntries, spec.savesState, follows) if spec.savesState or follows else None
    batches = (pickle.loads(packet) for _, packet in partition) if packed else partition
    batches = sliced(batches, spec.queueSize)
    inputMarkers = outputWatermarks = None
    if spec.watermarks:
        inputMarkers = InputMarkers(
            len(spec.inboundOrdinals) > 1, (spec.inboundOrdinals or (0,))[0], restored.observedWatermark
        )
        batches = inputMarkers.items(batches)
    if countsInput:
        batches = metrics.countedInput(spec.vertexName, batches)
    try:
        endOfInput = inputMarkers.coalesced if inputMarkers is not None and spec.inboundOrdinals else None
        output = runPartitionBatches(spec, index, batches, metrics, endOfInput, snapshot)
        if spec.watermarks:
            outputWatermarks = OutputWatermarks(restored.emittedTo(spec.bucketCount))
            output = outputWatermarks.items(output)
        output = metrics.countedOutput(spec.vertexName, output)
        if outputWatermarks is not None and spec.hasOutboundEdges:
            output = itertools.chain(output, outputWatermarks.markers(index))
        yield from namedBatches(output, crossing)
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    counts.add(metrics.total())
    if spec.savesState:
        states.add({(spec.dagVertexName, index): _endState(snapshot, inputMarkers, outputWatermarks)})
    _drained(partition)


def _endState(
    snapshot: Snapshot, inputMarkers: InputMarkers | None, outputWatermarks: OutputWatermarks | None
) -> ProcessorState:
    """Return what a processor hands to the next micro-batch: its snapshot and watermarks."""
    return ProcessorState.of(
        snapshot.saved,
        outputWatermarks.emitted() if outputWatermarks is not None else (),
        inputMarkers.observed if inputMarkers is not None else ProcessorState().observedWatermark,
    )


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


