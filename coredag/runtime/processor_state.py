"""What a processor of a stream job hands from one micro-batch to the next: the entries it
saved to its snapshot, and the runtime's watermarks on either side of it. No pyspark here."""

import pickle
from collections.abc import Callable, Mapping

import attrs

from sparkjet.coredag.model.broadcast_key import BroadcastKey
from sparkjet.coredag.model.watermark import LONG_MIN

StateKey = tuple[str, int]
"""A vertex's name in the DAG and the index of one of its processors."""


@attrs.frozen
class ProcessorState:
    """The state of processor ``index`` of a vertex at the end of a micro-batch: its snapshot
    entries, pickled where the processor ran (the driver only stores and sends them on, never
    unpickling them), the last watermark it emitted to each outbound bucket and the last one it
    observed."""

    packedEntries: bytes = b""
    emittedWatermarks: tuple[int, ...] = ()
    observedWatermark: int = LONG_MIN

    @classmethod
    def of(cls, entries: tuple, emittedWatermarks: tuple[int, ...], observedWatermark: int) -> "ProcessorState":
        """Return the state of a processor that saved ``entries`` (packed only if there are some)."""
        packed = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL) if entries else b""
        return cls(packed, emittedWatermarks, observedWatermark)

    def entries(self) -> tuple:
        """Return the snapshot entries, unpacked."""
        return pickle.loads(self.packedEntries) if self.packedEntries else ()

    def reachedWatermark(self) -> int:
        """Return the watermark the processor reached: the one it observed or, with no
        watermark coming in (a source's add-timestamps), the highest it emitted."""
        if self.observedWatermark != LONG_MIN:
            return self.observedWatermark
        return max(self.emittedWatermarks, default=LONG_MIN)

    def emittedTo(self, bucketCount: int) -> list[int]:
        """Return the last watermark emitted to each of ``bucketCount`` buckets (none yet: ``LONG_MIN``)."""
        return list(self.emittedWatermarks) if self.emittedWatermarks else [LONG_MIN] * bucketCount


def partitionKeyOf(key: object) -> object:
    """Return what decides which processor restores an entry saved under ``key``: its
    ``partitionKey()`` where it has one (Jet's ``PartitionAware``), else the key itself."""
    partitionKey = getattr(key, "partitionKey", None)
    return partitionKey() if callable(partitionKey) else key


def redistributed(
    byIndex: Mapping[int, ProcessorState], count: int, partitionOf: Callable[[object, int], int]
) -> dict[int, ProcessorState]:
    """Return the states another number of processors saved, spread over ``count`` processors
    as Jet restores a snapshot: ``BroadcastKey`` entries to every processor, any other entry to
    processor ``partitionOf(partitionKeyOf(key), count)``, where the vertex's partitioner sends
    that key's items. Each starts from the lowest watermarks the saved processors had."""
    entries = [entry for state in byIndex.values() for entry in state.entries()]
    shared = [entry for entry in entries if isinstance(entry[0], BroadcastKey)]
    owned: dict[int, list] = {index: list(shared) for index in range(count)}
    for entry in entries:
        if not isinstance(entry[0], BroadcastKey):
            owned[partitionOf(partitionKeyOf(entry[0]), count)].append(entry)
    buckets = max((len(state.emittedWatermarks) for state in byIndex.values()), default=0)
    emitted = tuple(min(column) for column in zip(*(state.emittedTo(buckets) for state in byIndex.values())))
    observed = min((state.observedWatermark for state in byIndex.values()), default=LONG_MIN)
    return {index: ProcessorState.of(tuple(owned[index]), emitted, observed) for index in range(count)}


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


def vertexWatermarks(states: Mapping[str, Mapping[int, ProcessorState]]) -> dict[str, int]:
    """Return, per vertex, the watermark every one of its processors has reached (vertices
    with a processor that reached none are left out)."""
    reached = {name: min(state.reachedWatermark() for state in byIndex.values()) for name, byIndex in states.items() if byIndex}
    return {name: watermark for name, watermark in reached.items() if watermark != LONG_MIN}
