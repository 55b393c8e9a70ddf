"""peek(): logging the items a stage emits, on the worker, without adding a vertex.

One mechanism logs: an ``ItemLogger`` run as the PEEK step of a stateless chain. A peeked map,
filter or flat-map gets that step in its own chain (see the planner's lowering); any other
vertex is wrapped here so that its output goes through the same step."""

import logging
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import ALL_ORDINALS, Outbox, Processor, ProcessorContext
from sparkjet.coredag.api.processor_wrapper import ProcessorWrapper, StandardSupplierWrapper, SupplierWrapper
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.processors.sinks import workerLogger
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind


@attrs.frozen
class ItemLogger:
    """Logs an item at INFO (if ``shouldLogFn`` accepts it) and returns it unchanged."""

    stageName: str
    shouldLogFn: Callable | None = None
    toStringFn: Callable | None = None

    def __call__(self, item: object) -> object:
        if self.shouldLogFn is None or self.shouldLogFn(item):
            text = self.toStringFn(item) if self.toStringFn else item
            self.logger().info("%s", text)
        return item

    def logger(self) -> logging.Logger:
        """Return the worker-side logger of the peeked stage."""
        return workerLogger(logging.getLogger(f"sparkjet.peek.{self.stageName}"))

    def step(self) -> StatelessStep:
        """Return the PEEK step that logs with this logger, errors naming the peeked stage."""
        return StatelessStep(StepKind.PEEK, self, self.stageName)


def peeking(supplier: Callable, logger: ItemLogger) -> Callable:
    """Return ``supplier`` wrapped so that everything its processors emit is logged."""
    if isinstance(supplier, StandardProcessorSupplier):
        return PeekingP(supplier, logger)
    return PeekingSupplier(supplier, logger)


@attrs.frozen
class PeekingP(StandardSupplierWrapper):
    """A standard supplier whose output is logged, on the fast path and the cooperative one."""

    inner: StandardProcessorSupplier
    logger: ItemLogger

    def sparkRowsSupplier(self) -> "PeekingP":
        """Return the wrapped source's rows supplier, its output logged."""
        return attrs.evolve(self, inner=self.inner.sparkRowsSupplier())

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the inner fast path followed by the PEEK step."""
        inner = self.inner.batchFunction(context)
        peek = StatelessChainP((self.logger.step(),))
        return lambda batches: peek.overBatches(None, inner(batches))

    def __call__(self) -> "PeekingProcessor":
        return PeekingProcessor(self.inner(), self.logger)


@attrs.frozen
class PeekingSupplier(SupplierWrapper):
    """Any processor supplier whose processors' output is logged."""

    inner: Callable
    logger: ItemLogger

    def __call__(self) -> "PeekingProcessor":
        return PeekingProcessor(self.inner(), self.logger)


class PeekingOutbox:
    """An outbox that logs each item it accepts (not watermarks); the rest is the engine's outbox."""

    def __init__(self, outbox: Outbox, logger: ItemLogger) -> None:
        self._outbox, self._logger = outbox, logger

    def offer(self, item, ordinal: int = ALL_ORDINALS) -> bool:
        """Offer as the outbox does; log the item once it is accepted."""
        accepted = self._outbox.offer(item, ordinal)
        if accepted and not isinstance(item, Watermark):
            self._logger(item)
        return accepted

    def offerToSnapshot(self, key, value) -> bool:
        """Offer to the snapshot bucket, unlogged."""
        return self._outbox.offerToSnapshot(key, value)

    def bucketCount(self) -> int:
        """Return the outbox's number of buckets."""
        return self._outbox.bucketCount()

    def hasUnfinishedItem(self) -> bool:
        """Return whether the outbox waits for a refused item."""
        return self._outbox.hasUnfinishedItem()


class PeekingProcessor(ProcessorWrapper):
    """Runs a processor with an outbox that logs what it emits."""

    def __init__(self, wrapped: Processor, logger: ItemLogger) -> None:
        super().__init__(wrapped)
        self._logger = logger

    def wrapOutbox(self, outbox: Outbox) -> "PeekingOutbox":
        """Return the outbox that logs what the wrapped processor emits."""
        return PeekingOutbox(outbox, self._logger)
