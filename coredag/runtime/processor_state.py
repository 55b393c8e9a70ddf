"""What a processor of a stream job hands from one micro-batch to the next: where its saved
entries are (the names of its state files, see ``state_store``) and the runtime's watermarks on
either side of it. The driver holds these, never the entries. No pyspark here."""

from collections.abc import Mapping

import attrs

from sparkjet.coredag.model.watermark import LONG_MIN
from sparkjet.coredag.model.watermark_coalescer import CoalescerState

StateKey = tuple[str, int]
"""A vertex's name in the DAG and the index of one of its processors."""


@attrs.frozen
class ProcessorState:
    """The state of processor ``index`` of a vertex at the end of a micro-batch: the files of its
    snapshot entries (a base and the deltas after it, under the checkpoint's state directory;
    none while it saved no entry), their ``size`` in bytes, the last watermark it emitted to each
    outbound bucket, the last one it observed and its input queues' watermarks (``coalescer``)."""

    files: tuple[str, ...] = ()
    size: int = 0
    emittedWatermarks: tuple[int, ...] = ()
    observedWatermark: int = LONG_MIN
    savedBy: str = ""
    """The task that saved it: a processor kept alive in a Python worker is taken up again only
    by the task restoring what that processor saved."""
    coalescer: CoalescerState | None = None
    """Where each of its input queues' watermarks stood (None: no queue sends watermarks)."""

    def reachedWatermark(self) -> int:
        """Return the watermark the processor reached: the one it observed or, with no
        watermark coming in (a source's add-timestamps), the highest it emitted."""
        if self.observedWatermark != LONG_MIN:
            return self.observedWatermark
        return max(self.emittedWatermarks, default=LONG_MIN)

    def emittedTo(self, bucketCount: int) -> list[int]:
        """Return the last watermark emitted to each of ``bucketCount`` buckets (none yet: ``LONG_MIN``)."""
        return list(self.emittedWatermarks) if self.emittedWatermarks else [LONG_MIN] * bucketCount


@attrs.frozen
class RestoredShare:
    """What processor ``index`` of ``count`` restores from states another number of processors
    saved (``saved``): its share of their entries (see ``StateStore.loadShare``), routed by
    ``partitioner``, and the lowest watermarks they had (``start``)."""

    saved: tuple[ProcessorState, ...]
    index: int
    count: int
    partitioner: object
    start: ProcessorState


def partitionKeyOf(key: object) -> object:
    """Return what decides which processor restores an entry saved under ``key``: its
    ``partitionKey()`` where it has one (Jet's ``PartitionAware``), else the key itself."""
    partitionKey = getattr(key, "partitionKey", None)
    return partitionKey() if callable(partitionKey) else key


def redistributed(byIndex: Mapping[int, ProcessorState], count: int, partitioner) -> dict[int, RestoredShare]:
    """Return, for each of ``count`` processors, its share of the states another number of
    processors saved, as Jet restores a snapshot: ``BroadcastKey`` entries to every processor,
    any other entry to processor ``partitioner.getPartition(partitionKeyOf(key), count)``, where
    the vertex's partitioner sends that key's items. Each starts from the lowest watermarks the
    saved processors had, its input queues' afresh."""
    saved = tuple(byIndex.values())
    buckets = max((len(state.emittedWatermarks) for state in saved), default=0)
    emitted = tuple(min(column) for column in zip(*(state.emittedTo(buckets) for state in saved)))
    observed = min((state.observedWatermark for state in saved), default=LONG_MIN)
    start = ProcessorState(emittedWatermarks=emitted, observedWatermark=observed)
    return {index: RestoredShare(saved, index, count, partitioner, start) for index in range(count)}


class StatesAccumulatorParam:
    """A Spark accumulator parameter gathering the states tasks end with, by vertex and index;
    a task run twice (a retry, a recomputed stage) gives the same state, kept once."""

    def zero(self, value: Mapping) -> dict[StateKey, ProcessorState]:
        """Return no states."""
        return {}

    def addInPlace(self, total: dict, more: Mapping) -> dict[StateKey, ProcessorState]:
        """Add the states of ``more`` into ``total`` and return it."""
        total.update(more)
        return total


def statesByVertex(states: Mapping[StateKey, ProcessorState]) -> dict[str, dict[int, ProcessorState]]:
    """Return the ``states`` gathered by vertex and index (see ``StatesAccumulatorParam``) by vertex, then index."""
    byVertex: dict[str, dict[int, ProcessorState]] = {}
    for (vertexName, index), state in states.items():
        byVertex.setdefault(vertexName, {})[index] = state
    return byVertex


def processorWatermarks(states: Mapping[str, Mapping[int, ProcessorState]]) -> dict[str, dict[int, tuple[int, int]]]:
    """Return, per vertex and processor, the watermark it observed and the last it emitted
    (the highest over its outbound buckets); ``LONG_MIN`` where there is none yet."""
    return {
        name: {
            index: (state.observedWatermark, max(state.emittedWatermarks, default=LONG_MIN))
            for index, state in byIndex.items()
        }
        for name, byIndex in states.items()
    }


def vertexWatermarks(states: Mapping[str, Mapping[int, ProcessorState]]) -> dict[str, int]:
    """Return, per vertex, the watermark every one of its processors has reached (vertices
    with a processor that reached none are left out)."""
    reached = {name: min(state.reachedWatermark() for state in byIndex.values()) for name, byIndex in states.items() if byIndex}
    return {name: watermark for name, watermark in reached.items() if watermark != LONG_MIN}
