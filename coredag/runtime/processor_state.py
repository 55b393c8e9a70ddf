"""What a processor of a stream job hands from one micro-batch to the next: the entries it
saved to its snapshot, and the runtime's watermarks on either side of it. No pyspark here."""

import pickle
from collections.abc import Mapping

import attrs

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
