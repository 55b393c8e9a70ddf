"""Processor suppliers the planner emits, each with a fast path over a whole partition."""

import abc
import itertools
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, DeclaresCapabilities, makesChangeSavers, mayPrepareCommits
from sparkjet.coredag.api.processor import Processor, ProcessorContext
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.vertex import Vertex

PartitionFunction = Callable[[Iterator], Iterator]
BatchFunction = Callable[[Iterator[list]], Iterator[list]]

BATCH_SIZE = 1024


def batched(items: Iterable, size: int = BATCH_SIZE) -> Iterator[list]:
    """Group a stream of items into lists of ``size`` (the last may be shorter)."""
    iterator = iter(items)
    return iter(lambda: list(itertools.islice(iterator, size)), [])


class StandardProcessorSupplier(DeclaresCapabilities):
    """Supplies a Processor and, for the fast path, one function over a partition's batches.

    Both give the same output for the same input: the fast path runs the vertex as one tight
    loop over lists of items (no inbox, no outbox, C-level iteration inside a batch), the
    processor runs in the cooperative loop.
    """

    takesOrdinalPairs = False
    """True where the fast path takes ``(ordinal, item)`` pairs, so it can serve a vertex
    with several inputs."""

    acceptsAnyRouting = False
    """True where the output stays right whichever processor an item reaches (a prepare
    step, whose partial results are combined downstream): a local edge into such a vertex
    then keeps items in their Spark task whatever its routing policy."""

    readsThroughSpark = False
    """True for a source whose input Spark reads: the driver builds it with
    ``sparkInput(spark)`` (a DataFrame) and the workers turn its rows into items with the
    processors of ``sparkRowsSupplier()``, so what the driver holds never goes to a task."""

    readsStream = False
    """True for a stream source: Spark reads it as a stream, and each micro-batch's rows come
    from ``microBatchRows(rows)`` instead of ``sparkInput``."""

    @abc.abstractmethod
    def __call__(self) -> Processor:
        """Return a new processor."""

    @abc.abstractmethod
    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the fast path: a function from input batches to output batches."""

    def capabilities(self) -> Capabilities:
        """Return its fast path, what its class attributes above declare, a heartbeat where
        the processors it makes may take part in a two-phase commit, and changes only where they
        save them."""
        return Capabilities(
            hasFastPath=True,
            takesOrdinalPairs=self.takesOrdinalPairs,
            acceptsAnyRouting=self.acceptsAnyRouting,
            readsThroughSpark=self.readsThroughSpark,
            readsStream=self.readsStream,
            needsHeartbeat=mayPrepareCommits(self),
            savesChangesOnly=makesChangeSavers(self),
        )

    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return the fast path as a function from input items to output items."""
        run = self.batchFunction(context)
        return lambda items: itertools.chain.from_iterable(run(batched(items)))

    def inputBytes(self) -> int | None:
        """For a source: about how many bytes it reads (None: unknown, or not a source)."""
        return None

    def preflight(self) -> "StandardProcessorSupplier":
        """Check the job's inputs and outputs on the driver; return the supplier to run."""
        return self


def preflightDag(dag: DAG) -> DAG:
    """Return a copy of ``dag`` whose standard suppliers checked their inputs and outputs."""
    return dag.withVertices(_preflightVertex)


def _preflightVertex(vertex: Vertex) -> Vertex:
    supplier = vertex.processorSupplier
    if isinstance(supplier, StandardProcessorSupplier):
        return attrs.evolve(vertex, processorSupplier=supplier.preflight())
    return vertex
