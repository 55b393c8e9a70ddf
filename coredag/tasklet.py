"""Running one processor of a vertex inside a Spark task: the fast path or the cooperative loop."""

import itertools
from collections.abc import Callable, Iterable, Iterator

import attrs

from coredag.errors import DagError, UserFunctionError, shorten
from coredag.processor import Inbox, Outbox, Processor, ProcessorContext, callIdleHook
from coredag.standard import StandardProcessorSupplier

MAX_CALLS_WITHOUT_PROGRESS = 100_000


@attrs.frozen
class TaskletSpec:
    """What a Spark task needs to run a vertex's processor: the vertex and its edges' shape."""

    vertexName: str
    processorSupplier: Callable[[], Processor]
    totalParallelism: int
    inboundOrdinals: tuple[int, ...]
    bucketCount: int
    queueSize: int
    outboxCapacity: int
    jobName: str = ""

    def context(self, index: int) -> ProcessorContext:
        """Return the context of processor ``index``."""
        return ProcessorContext(
            vertexName=self.vertexName,
            globalProcessorIndex=index,
            totalParallelism=self.totalParallelism,
            jobName=self.jobName,
        )

    def usesFastPath(self) -> bool:
        """Return whether the vertex runs as one loop: a standard supplier with simple edges."""
        return (
            isinstance(self.processorSupplier, StandardProcessorSupplier)
            and len(self.inboundOrdinals) <= 1
            and self.bucketCount <= 1
        )


def runPartition(spec: TaskletSpec, index: int, items: Iterator) -> Iterator:
    """Run processor ``index`` of the vertex over the partition's items.

    With several inbound edges ``items`` are ``(ordinal, item)`` pairs, each ordinal's run
    contiguous and the runs in priority order; with several buckets so is the output.
    """
    context = spec.context(index)
    if spec.usesFastPath():
        return spec.processorSupplier.fastPath(context)(items)
    if len(spec.inboundOrdinals) == 1:
        inputs = [(spec.inboundOrdinals[0], items)]
    else:
        runs = itertools.groupby(items, key=_ordinalOf)
        inputs = ((ordinal, (item for _, item in run)) for ordinal, run in runs)
    output = runCooperatively(spec, context, inputs)
    if spec.bucketCount > 1:
        return output
    return (item for _, item in output)


def _ordinalOf(pair: tuple) -> int:
    return pair[0]


def runCooperatively(
    spec: TaskletSpec, context: ProcessorContext, inputs: Iterable[tuple[int, Iterable]]
) -> Iterator[tuple[int, object]]:
    """Drive one processor through its inputs in order; yield ``(ordinal, item)`` it emits."""
    processor = spec.processorSupplier()
    capacity = spec.outboxCapacity if processor.isCooperative() else None
    outbox = Outbox(spec.bucketCount, capacity)
    loop = _CooperativeLoop(processor, outbox, context.vertexName)
    try:
        processor.init(outbox, context)
        remaining = list(spec.inboundOrdinals)
        for ordinal, items in inputs:
            yield from loop.consume(ordinal, iter(items), spec.queueSize)
            yield from loop.repeat(lambda: processor.completeEdge(ordinal))
            remaining.remove(ordinal)
        for ordinal in remaining:
            yield from loop.repeat(lambda: processor.completeEdge(ordinal))
        yield from loop.repeat(processor.complete)
    finally:
        processor.close()


class _CooperativeLoop:
    """Calls a processor until it makes progress, draining its outbox after every call."""

    def __init__(self, processor: Processor, outbox: Outbox, vertexName: str) -> None:
        self._processor, self._outbox, self._vertexName = processor, outbox, vertexName

    def consume(self, ordinal: int, source: Iterator, queueSize: int) -> Iterator:
        """Feed the items of one inbound edge through the inbox in batches of ``queueSize``."""
        inbox = Inbox()
        idleCalls = 0
        while True:
            yield from self.repeat(lambda: callIdleHook(self._processor))
            if inbox.isEmpty():
                for item in itertools.islice(source, queueSize):
                    inbox.add(item)
                if inbox.isEmpty():
                    return
            before = inbox.size()
            self._guarded(lambda: self._processor.process(ordinal, inbox), inbox.peek)
            emitted = not self._outbox.isEmpty()
            yield from self._drain()
            idleCalls = 0 if emitted or inbox.size() < before else idleCalls + 1
            self._checkProgress(idleCalls, "process()")

    def repeat(self, call: Callable[[], bool]) -> Iterator:
        """Call ``call`` until it returns True, draining the outbox after each call."""
        idleCalls = 0
        while True:
            done = self._guarded(call, lambda: None)
            emitted = not self._outbox.isEmpty()
            yield from self._drain()
            if done:
                return
            idleCalls = 0 if emitted else idleCalls + 1
            self._checkProgress(idleCalls, "a method returning False")

    def _guarded(self, call: Callable, failingItem: Callable[[], object]):
        try:
            return call()
        except (UserFunctionError, DagError):
            raise
        except Exception as cause:
            item = failingItem()
            shown = shorten(item) if item is not None else "(none)"
            raise UserFunctionError(f"{self._vertexName}", shown, cause) from cause

    def _drain(self) -> Iterator[tuple[int, object]]:
        for ordinal in range(self._outbox.bucketCount()):
            for item in self._outbox.drainBucket(ordinal):
                yield ordinal, item

    def _checkProgress(self, idleCalls: int, what: str) -> None:
        if idleCalls > MAX_CALLS_WITHOUT_PROGRESS:
            raise DagError(
                f"The processor of vertex '{self._vertexName}' made no progress in "
                f"{MAX_CALLS_WITHOUT_PROGRESS} calls of {what}: it must remove items from "
                "its inbox or emit to its outbox"
            )
