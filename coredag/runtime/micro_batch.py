"""One micro-batch of a stream job: the rows its stream sources read, and the state its
processors carry over from the previous micro-batch."""

from collections.abc import Mapping

import attrs
from pyspark.sql import DataFrame

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.runtime.output_directory import OutputDirectoryClaim
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.state_store import StateStore


@attrs.frozen
class MicroBatch:
    """Micro-batch ``batchId`` of a stream job: ``rows`` holds what every stream source read
    (None once the stream ended), ``restored`` the state each vertex's processors saved at the
    end of the previous one (their files in ``stateStore``, where they save this one's),
    ``outputs`` the directories the job claimed for its files sinks.
    The job's processors save their state at the end unless the stream ended (``final``): then
    they complete, emitting what they still hold. The ``staticVertices``, which no stream reaches
    (the batch side of a join, say), run once per run: their outputs are kept in the run's
    ``StreamCaches``, which the engine is given beside this value."""

    batchId: int
    rows: DataFrame | None
    restored: Mapping[str, Mapping[int, ProcessorState]]
    stateStore: StateStore
    outputs: Mapping[str, OutputDirectoryClaim] = attrs.Factory(dict)
    final: bool = False
    staticVertices: frozenset[str] = frozenset()
    processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE
    """The job's guarantee, given to its processors' contexts."""
