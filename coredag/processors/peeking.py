"""peek(): logging the items a stage emits, on the worker, without adding a vertex.

One mechanism logs: an ``ItemLogger`` run as the PEEK step of a stateless chain. A peeked map,
filter or flat-map gets that step in its own chain (see the planner's lowering); any other
vertex is wrapped here so that its output goes through the same step."""

import logging
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import (
    ALL_ORDINALS,
    Inbox,
    Outbox,
    Processor,
    ProcessorContext,
    callIdleHook,
    restoreSnapshot,
)
from sparkjet.coredag.api.saves_changes import SavesChanges
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
class PeekingP(StandardProcessorSupplier):
    """A standard supplier whose output is logged, on the fast path and the cooperative one."""

    inner: StandardProcessorSupplier
    logger: ItemLogger

    @property
    def acceptsAnyRouting(self) -> bool:
        """As the wrapped supplier."""
        return self.inner.acceptsAnyRouting

    @property
    def readsThroughSpark(self) -> bool:
        """As the wrapped supplier."""
        return self.inner.readsThroughSpark

    @property
    def readsStream(self) -> bool:
        """As the wrapped supplier."""
        return self.inner.readsStream

    @property
    def finite(self) -> bool:
        """As the wrapped stream source."""
        return self.inner.finite

    def sparkInput(self, spark):
        """Return the wrapped source's input."""
        return self.inner.sparkInput(spark)

    def streamingRows(self, spark, workDirectory: str):
        """Return the wrapped stream source's streaming rows."""
        return self.inner.streamingRows(spark, workDirectory)

    def microBatchRows(self, rows):
        """Return the wrapped stream source's rows of a micro-batch."""
        return self.inner.microBatchRows(rows)

    def feeder(self, jobName: str, workDirectory: str):
        """Return the wrapped stream source's feeder."""
        return self.inner.feeder(jobName, workDirectory)

    def sparkRowsSupplier(self) -> "PeekingP":
        """Return the wrapped source's rows supplier, its output logged."""
        return attrs.evolve(self, inner=self.inner.sparkRowsSupplier())

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the inner fast path followed by the PEEK step."""
        inner = self.inner.batchFunction(context)
        peek = StatelessChainP((self.logger.step(),))
        return lambda batches: peek.overBatches(None, inner(batches))

    def preflight(self) -> "PeekingP":
        """Preflight the wrapped supplier."""
        return attrs.evolve(self, inner=self.inner.preflight())

    def __call__(self) -> "PeekingProcessor":
        return peekingProcessor(self.inner(), self.logger)


@attrs.frozen
class PeekingSupplier:
    """Any processor supplier whose processors' output is logged."""

    inner: Callable
    logger: ItemLogger

    @property
    def emitsWatermarks(self) -> bool:
        """As the wrapped supplier: a peeked add-timestamps vertex still inserts watermarks."""
        return getattr(self.inner, "emitsWatermarks", False)

    @property
    def windowsByEventTime(self) -> bool:
        """As the wrapped supplier: a peeked window vertex is still drawn as one."""
        return getattr(self.inner, "windowsByEventTime", False)

    def __call__(self) -> "PeekingProcessor":
        return peekingProcessor(self.inner(), self.logger)


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


class PeekingProcessor(Processor):
    """Runs a processor with an outbox that logs what it emits."""

    def __init__(self, inner: Processor, logger: ItemLogger) -> None:
        self._inner, self._logger = inner, logger

    @property
    def lateEventsDropped(self) -> int:
        """As the inner processor (0 if it drops none)."""
        return getattr(self._inner, "lateEventsDropped", 0)

    def init(self, outbox: Outbox, context: ProcessorContext) -> None:
        """Give the inner processor the logging outbox."""
        self._inner.init(PeekingOutbox(outbox, self._logger), context)

    def isCooperative(self) -> bool:
        """As the inner processor."""
        return self._inner.isCooperative()

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Delegate."""
        self._inner.process(ordinal, inbox)

    def tryProcess(self) -> bool:
        """Delegate the idle hook."""
        return callIdleHook(self._inner)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Delegate."""
        return self._inner.tryProcessWatermark(watermark)

    def completeEdge(self, ordinal: int) -> bool:
        """Delegate."""
        return self._inner.completeEdge(ordinal)

    def saveToSnapshot(self) -> bool:
        """Delegate."""
        return self._inner.saveToSnapshot()

    def restoreFromSnapshot(self, inbox: Inbox) -> None:
        """Delegate, in the form the inner processor takes."""
        restoreSnapshot(self._inner, inbox)

    def finishSnapshotRestore(self) -> bool:
        """Delegate."""
        return self._inner.finishSnapshotRestore()

    def complete(self) -> bool:
        """Delegate."""
        return self._inner.complete()

    def close(self) -> None:
        """Delegate."""
        self._inner.close()


class PeekingChangesProcessor(PeekingProcessor, SavesChanges):
    """A ``PeekingProcessor`` of a processor that saves its changes, which it saves as the inner one does."""

    def saveChangesToSnapshot(self) -> bool:
        """Delegate."""
        return self._inner.saveChangesToSnapshot()

    def forgetFromSnapshot(self, key: object) -> None:
        """Delegate."""
        self._inner.forgetFromSnapshot(key)


def peekingProcessor(inner: Processor, logger: ItemLogger) -> PeekingProcessor:
    """Return ``inner`` with an outbox that logs what it emits, saving its changes if it does."""
    return (PeekingChangesProcessor if isinstance(inner, SavesChanges) else PeekingProcessor)(inner, logger)
