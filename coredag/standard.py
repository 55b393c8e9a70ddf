"""Processor suppliers the planner emits, each with a fast path over a whole partition."""

import abc
from collections.abc import Callable, Iterator

import attrs

from coredag.dag import DAG
from coredag.processor import Processor, ProcessorContext

PartitionFunction = Callable[[Iterator], Iterator]


class StandardProcessorSupplier(abc.ABC):
    """Supplies a Processor and, for the fast path, one function over a partition's items.

    Both give the same output for the same input: the fast path runs the vertex as one tight
    loop (no inbox, no outbox), the processor runs in the cooperative loop.
    """

    acceptsAnyRouting = False
    """True where the output stays right whichever processor an item reaches (a prepare
    step, whose partial results are combined downstream): a local edge into such a vertex
    then keeps items in their Spark task whatever its routing policy."""

    @abc.abstractmethod
    def __call__(self) -> Processor:
        """Return a new processor."""

    @abc.abstractmethod
    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return the function that maps this processor's input items to its output items."""

    def preflight(self) -> "StandardProcessorSupplier":
        """Check the job's inputs and outputs on the driver; return the supplier to run."""
        return self


def preflightDag(dag: DAG) -> DAG:
    """Return a copy of ``dag`` whose standard suppliers checked their inputs and outputs."""
    checked = DAG()
    for vertex in dag.vertices():
        supplier = vertex.processorSupplier
        if isinstance(supplier, StandardProcessorSupplier):
            vertex = attrs.evolve(vertex, processorSupplier=supplier.preflight())
        checked.vertex(vertex)
    for edge in dag.edges():
        checked.edge(edge)
    return checked
