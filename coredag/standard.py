"""Processor suppliers the planner emits, each with a fast path over a whole partition."""

import abc
from collections.abc import Callable, Iterator

from coredag.processor import Processor, ProcessorContext

PartitionFunction = Callable[[Iterator], Iterator]


class StandardProcessorSupplier(abc.ABC):
    """Supplies a Processor and, for the fast path, one function over a partition's items.

    Both give the same output for the same input: the fast path runs the vertex as one tight
    loop (no inbox, no outbox), the processor runs in the cooperative loop.
    """

    @abc.abstractmethod
    def __call__(self) -> Processor:
        """Return a new processor."""

    @abc.abstractmethod
    def fastPath(self, context: ProcessorContext) -> PartitionFunction:
        """Return the function that maps this processor's input items to its output items."""

    def preflight(self) -> "StandardProcessorSupplier":
        """Check the job's inputs and outputs on the driver; return the supplier to run."""
        return self
