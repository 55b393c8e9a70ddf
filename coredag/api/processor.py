"""Jet's Processor API: Inbox, Outbox, context and the processor contract."""

import enum
import functools
import inspect
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from sparkjet.coredag.errors import ProcessorContractError, shorten
from sparkjet.coredag.model.watermark import Watermark

if TYPE_CHECKING:
    from sparkjet.coredag.model.metrics import TaskMetrics

ALL_ORDINALS = -1
_NUMBERED_ORDINALS = 4
"""The highest ordinal with its own ``tryProcessN`` method."""
_NOTHING = object()


class Inbox:
    """The items received over one inbound edge and not yet removed by the processor."""

    def __init__(self, items: Iterable = ()) -> None:
        self._items = deque(items)

    def isEmpty(self) -> bool:
        """Return whether the inbox holds no item."""
        return not self._items

    def size(self) -> int:
        """Return the number of items in the inbox."""
        return len(self._items)

    def peek(self):
        """Return the first item without removing it, None if the inbox is empty."""
        return self._items[0] if self._items else None

    def poll(self):
        """Remove and return the first item, None if the inbox is empty."""
        return self._items.popleft() if self._items else None

    def remove(self):
        """Remove and return the first item; the inbox must not be empty."""
        return self._items.popleft()

    def drain(self, consumer: Callable[[object], None]) -> int:
        """Pass every item to ``consumer``, removing it; return how many there were."""
        count = 0
        while self._items:
            consumer(self._items.popleft())
            count += 1
        return count

    def drainTo(self, target: list) -> int:
        """Move every item to the end of ``target``; return how many there were."""
        return self.drain(target.append)

    def clear(self) -> None:
        """Remove every item."""
        self._items.clear()

    def add(self, item) -> None:
        """Append an item: for the engine and for tests that feed a processor."""
        self._items.append(item)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator:
        return iter(self._items)


def _ordinals(ordinal: int | Sequence[int]) -> tuple[int, ...]:
    """Return the bucket ordinals an offer names: one ordinal, or several."""
    return (ordinal,) if isinstance(ordinal, int) else tuple(ordinal)


class Outbox:
    """A bucket per outbound ordinal; a full bucket refuses items until the engine drains it."""

    def __init__(self, bucketCount: int, capacity: int | None) -> None:
        self._buckets: list[list] = [[] for _ in range(bucketCount)]
        self._capacity = capacity
        self._refused = _NOTHING
        self._refusedOrdinals: tuple[int, ...] = ()
        self._acceptedBy: set[int] = set()
        self._snapshot: list[tuple] = []

    def bucketCount(self) -> int:
        """Return the number of buckets, one per outbound edge."""
        return len(self._buckets)

    def offer(self, item, ordinal: int | Sequence[int] = ALL_ORDINALS) -> bool:
        """Offer ``item`` to the bucket of ``ordinal``, or of each of several ordinals (-1:
        every bucket); False if a bucket refused it, and then only that bucket and the ones
        after it get the item when it is offered again."""
        ordinals = tuple(range(len(self._buckets))) if ordinal == ALL_ORDINALS else _ordinals(ordinal)
        self._checkReoffer(item, ordinals)
        for target in ordinals:
            if target in self._acceptedBy:
                continue
            bucket = self._bucket(target)
            if self._capacity is not None and len(bucket) >= self._capacity:
                self._refused, self._refusedOrdinals = item, ordinals
                return False
            bucket.append(item)
            self._acceptedBy.add(target)
        self._refused, self._acceptedBy = _NOTHING, set()
        return True

    def offerToSnapshot(self, key, value) -> bool:
        """Add the entry ``(key, value)`` to the snapshot bucket, which never refuses."""
        self._snapshot.append((key, value))
        return True

    def drainSnapshotBucket(self) -> list[tuple]:
        """Remove and return the snapshot entries offered so far: the engine's side."""
        entries, self._snapshot = self._snapshot, []
        return entries

    def hasUnfinishedItem(self) -> bool:
        """Return whether an item was refused and must be offered again."""
        return self._refused is not _NOTHING

    def drainBucket(self, ordinal: int) -> list:
        """Remove and return the items in the bucket of ``ordinal``: the engine's side."""
        items, self._buckets[ordinal] = self._buckets[ordinal], []
        return items

    def isEmpty(self) -> bool:
        """Return whether every bucket is empty."""
        return not any(self._buckets)

    def _bucket(self, ordinal: int) -> list:
        if not 0 <= ordinal < len(self._buckets):
            raise ProcessorContractError(
                f"Outbox has no bucket at ordinal {ordinal}: the vertex has "
                f"{len(self._buckets)} outbound edge(s)"
            )
        return self._buckets[ordinal]

    def _checkReoffer(self, item, ordinals: tuple[int, ...]) -> None:
        if self._refused is _NOTHING:
            return
        same = item is self._refused or item == self._refused
        if not same or ordinals != self._refusedOrdinals:
            raise ProcessorContractError(
                f"A processor offered {shorten(item)} after the outbox refused "
                f"{shorten(self._refused)}: it must offer the refused item again first"
            )


class ProcessingGuarantee(enum.Enum):
    """What a stream job guarantees across a restart (Jet's ``ProcessingGuarantee``)."""

    NONE = "NONE"
    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    EXACTLY_ONCE = "EXACTLY_ONCE"


@attrs.frozen
class ProcessorContext:
    """Where a processor runs: its vertex, its index among the vertex's processors, the job."""

    vertexName: str
    globalProcessorIndex: int
    totalParallelism: int
    memberIndex: int = 0
    memberCount: int = 1
    jobName: str = ""
    processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE
    """The job's processing guarantee (Jet's ``Processor.Context.processingGuarantee()``)."""
    metrics: "TaskMetrics | None" = attrs.field(default=None, eq=False, repr=False)
    """Where a standard processor counts items per fused stage, when the job is measured."""

    @property
    def localParallelism(self) -> int:
        """Return the number of processors of the vertex on this member."""
        return self.totalParallelism // self.memberCount

    @property
    def localProcessorIndex(self) -> int:
        """Return the index of this processor among the vertex's processors on this member."""
        return self.globalProcessorIndex % self.localParallelism

    @property
    def logger(self) -> logging.Logger:
        """Return a logger named after the vertex and the processor index."""
        return logging.getLogger(f"sparkjet.{self.vertexName}#{self.globalProcessorIndex}")


class Processor:
    """The unit of work of a vertex; the engine calls it from one thread at a time."""

    def init(self, outbox: Outbox, context: ProcessorContext) -> None:
        """Prepare to run; called once before any other method."""

    def isCooperative(self) -> bool:
        """Return False to get an outbox that never refuses (for blocking work)."""
        return True

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Process items of the inbound edge ``ordinal``, removing each once fully processed."""
        raise ProcessorContractError(
            f"{type(self).__name__} received items on ordinal {ordinal} but does not "
            "implement process()"
        )

    def tryProcess(self) -> bool:
        """Do work not driven by input; return False to be called again first."""
        return True

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Process a watermark every input has reached (Jet's rules); return False to be called
        again with it. A processor on a stream must handle it (AbstractProcessor forwards it)."""
        raise ProcessorContractError(
            f"{type(self).__name__} received {watermark!r} but does not implement tryProcessWatermark(watermark)"
        )

    def completeEdge(self, ordinal: int) -> bool:
        """React to the end of inbound edge ``ordinal``; return False to be called again."""
        return True

    def saveToSnapshot(self) -> bool:
        """Offer the processor's state to the outbox's snapshot bucket as ``(key, value)``
        entries (``BroadcastKey`` ones reach every processor on restore); False to be called again."""
        return True

    def restoreFromSnapshot(self, inbox: Inbox) -> None:
        """Take back state from the ``(key, value)`` entries in ``inbox``, removing each."""
        raise ProcessorContractError(
            f"Processor {type(self).__name__} does not override the restoreFromSnapshot() method"
        )

    def finishSnapshotRestore(self) -> bool:
        """Finish restoring once every entry was given; False to be called again."""
        return True

    def snapshotCommitPrepare(self) -> bool:
        """Prepare the output to commit once the snapshot is taken (phase one); False to be called again."""
        return True

    def snapshotCommitFinish(self, success: bool) -> bool:
        """Commit (``success``) or roll back what ``snapshotCommitPrepare`` prepared; False to be called again."""
        return True

    def complete(self) -> bool:
        """Finish after all input is consumed; return False to be called again."""
        return True

    def close(self) -> None:
        """Release resources; always called last, after a failure too."""


class AbstractProcessor(Processor):
    """A Processor with Jet's conveniences: per-item ``tryProcessN`` and emission helpers."""

    outbox: Outbox
    context: ProcessorContext
    _pendingItem = _NOTHING

    def init(self, outbox: Outbox, context: ProcessorContext) -> None:
        """Keep the outbox and context, then call ``onInit``."""
        self.outbox, self.context = outbox, context
        self.onInit(context)

    def onInit(self, context: ProcessorContext) -> None:
        """Override to prepare state once the context is known."""

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Offer each item to ``tryProcessN(item)`` for ordinals 0 to 4 and to
        ``tryProcess(ordinal, item)`` above, stopping at the first refusal, as Jet does."""
        tryItem = (
            getattr(self, f"tryProcess{ordinal}")
            if ordinal <= _NUMBERED_ORDINALS
            else functools.partial(self.tryProcess, ordinal)
        )
        while not inbox.isEmpty():
            if not tryItem(inbox.peek()):
                return
            inbox.remove()

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Without arguments: the idle hook. With both: process ``item`` of inbound ``ordinal``.

        Jet's two methods share this name: override it with ``(ordinal, item)`` parameters to
        handle the items of every ordinal that has no ``tryProcessN`` of its own, or with none
        to do idle-time work (or with both defaulting to None, for both).
        """
        if ordinal is None:
            return True
        raise ProcessorContractError(
            f"{type(self).__name__} got an item on ordinal {ordinal} but implements neither "
            f"tryProcess{ordinal}(item) nor tryProcess(ordinal, item)"
            if ordinal <= _NUMBERED_ORDINALS
            else f"{type(self).__name__} got an item on ordinal {ordinal} but does not implement "
            "tryProcess(ordinal, item)"
        )

    def tryProcess0(self, item) -> bool:
        """Process an item of ordinal 0 (by default: ``tryProcess(0, item)``); False to retry."""
        return self._tryProcessAt(0, item)

    def tryProcess1(self, item) -> bool:
        """Process an item of ordinal 1 (by default: ``tryProcess(1, item)``); False to retry."""
        return self._tryProcessAt(1, item)

    def tryProcess2(self, item) -> bool:
        """Process an item of ordinal 2 (by default: ``tryProcess(2, item)``); False to retry."""
        return self._tryProcessAt(2, item)

    def tryProcess3(self, item) -> bool:
        """Process an item of ordinal 3 (by default: ``tryProcess(3, item)``); False to retry."""
        return self._tryProcessAt(3, item)

    def tryProcess4(self, item) -> bool:
        """Process an item of ordinal 4 (by default: ``tryProcess(4, item)``); False to retry."""
        return self._tryProcessAt(4, item)

    def _tryProcessAt(self, ordinal: int, item) -> bool:
        if not _acceptsItems(type(self)):
            return AbstractProcessor.tryProcess(self, ordinal, item)
        return self.tryProcess(ordinal, item)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Forward the watermark to every outbound edge, as Jet's default does; False while the
        outbox refuses it."""
        return self.tryEmit(watermark)

    def restoreFromSnapshot(self, inbox: Inbox, value=_NOTHING) -> None:
        """Give each ``(key, value)`` entry of ``inbox`` to ``restoreFromSnapshot(key, value)``.

        Jet's two methods share this name: override it with ``(key, value)`` parameters to
        restore one entry at a time, or with an inbox to take them all."""
        if value is not _NOTHING:
            raise ProcessorContractError(f"Missing implementation of restoreFromSnapshot(key, value) in {type(self)}")
        _restoreEntries(self, inbox)

    def tryEmitToSnapshot(self, key, value) -> bool:
        """Offer the entry ``(key, value)`` to the outbox's snapshot bucket."""
        return self.outbox.offerToSnapshot(key, value)

    def emitFromTraverserToSnapshot(self, traverser: Iterator[tuple]) -> bool:
        """Offer every ``(key, value)`` entry of an iterator to the snapshot bucket; True when exhausted."""
        return all(self.tryEmitToSnapshot(key, value) for key, value in traverser)

    def tryEmit(self, item, ordinal: int | Sequence[int] = ALL_ORDINALS) -> bool:
        """Offer ``item`` to the outbox bucket of ``ordinal`` (a sequence: of each of those
        ordinals, as Jet's ``tryEmit(int[] ordinals, item)``; -1: all buckets)."""
        return self.outbox.offer(item, ordinal)

    def emitFromTraverser(self, traverser: Iterator, ordinal: int | Sequence[int] = ALL_ORDINALS) -> bool:
        """Emit the items of an iterator until the outbox refuses one; True when exhausted."""
        item = self._pendingItem
        if item is _NOTHING:
            item = next(traverser, _NOTHING)
        while item is not _NOTHING:
            if not self.tryEmit(item, ordinal):
                self._pendingItem = item
                return False
            item = next(traverser, _NOTHING)
        self._pendingItem = _NOTHING
        return True

    def flatMapper(
        self, mapFn: Callable[[object], Iterable], ordinal: int = ALL_ORDINALS
    ) -> "FlatMapper":
        """Return a helper whose ``tryProcess(item)`` emits every item of ``mapFn(item)``."""
        return FlatMapper(self, mapFn, ordinal)


@functools.cache
def _acceptsItems(processorClass: type) -> bool:
    """Return whether the class's ``tryProcess`` can be called with an ordinal and an item."""
    return _canCall(processorClass.tryProcess, None, 0, None)


@functools.cache
def _idleHookNeedsItem(processorClass: type) -> bool:
    """Return whether the class's ``tryProcess`` cannot be called without arguments."""
    return not _canCall(processorClass.tryProcess, None)


def _canCall(function: Callable, *arguments) -> bool:
    try:
        inspect.signature(function).bind(*arguments)
    except TypeError:
        return False
    return True


def restoreSnapshot(processor: Processor, inbox: Inbox) -> None:
    """Give ``processor`` its snapshot entries: to ``restoreFromSnapshot(key, value)`` one by
    one where it overrides that form, else the inbox to ``restoreFromSnapshot(inbox)``."""
    if _canCall(type(processor).restoreFromSnapshot, None, inbox):
        processor.restoreFromSnapshot(inbox)
    else:
        _restoreEntries(processor, inbox)


def _restoreEntries(processor: Processor, inbox: Inbox) -> None:
    while not inbox.isEmpty():
        key, value = inbox.poll()
        processor.restoreFromSnapshot(key, value)


def callIdleHook(processor: Processor) -> bool:
    """Call ``processor.tryProcess()``, unless it is an override that needs an item."""
    return True if _idleHookNeedsItem(type(processor)) else processor.tryProcess()


class FlatMapper:
    """Emits the items ``mapFn`` returns for an input item, resuming after outbox refusals."""

    def __init__(self, processor: AbstractProcessor, mapFn: Callable, ordinal: int) -> None:
        self._processor, self._mapFn, self._ordinal = processor, mapFn, ordinal
        self._traverser: Iterator | None = None

    def tryProcess(self, item) -> bool:
        """Emit the results of ``mapFn(item)``; False if the outbox refused one."""
        if self._traverser is None:
            self._traverser = iter(self._mapFn(item))
        if self._processor.emitFromTraverser(self._traverser, self._ordinal):
            self._traverser = None
            return True
        return False
