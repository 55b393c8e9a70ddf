"""The Processor API of seed 003: Inbox, Outbox, context and the processor contract."""

import functools
import inspect
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import attrs

from sparkjet.coredag.errors import ProcessorContractError, shorten

if TYPE_CHECKING:
    from sparkjet.coredag.model.metrics import TaskMetrics

ALL_ORDINALS = -1
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


class Outbox:
    """A bucket per outbound ordinal; a full bucket refuses items until the engine drains it."""

    def __init__(self, bucketCount: int, capacity: int | None) -> None:
        self._buckets: list[list] = [[] for _ in range(bucketCount)]
        self._capacity = capacity
        self._refused = _NOTHING
        self._refusedOrdinal = ALL_ORDINALS
        self._acceptedBy: set[int] = set()

    def bucketCount(self) -> int:
        """Return the number of buckets, one per outbound edge."""
        return len(self._buckets)

    def offer(self, item, ordinal: int = ALL_ORDINALS) -> bool:
        """Offer ``item`` to the bucket of ``ordinal`` (-1: every bucket); False if refused."""
        self._checkReoffer(item, ordinal)
        ordinals = range(len(self._buckets)) if ordinal == ALL_ORDINALS else (ordinal,)
        for target in ordinals:
            if target in self._acceptedBy:
                continue
            bucket = self._bucket(target)
            if self._capacity is not None and len(bucket) >= self._capacity:
                self._refused, self._refusedOrdinal = item, ordinal
                return False
            bucket.append(item)
            self._acceptedBy.add(target)
        self._refused, self._acceptedBy = _NOTHING, set()
        return True

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

    def _checkReoffer(self, item, ordinal: int) -> None:
        if self._refused is _NOTHING:
            return
        same = item is self._refused or item == self._refused
        if not same or ordinal != self._refusedOrdinal:
            raise ProcessorContractError(
                f"A processor offered {shorten(item)} after the outbox refused "
                f"{shorten(self._refused)}: it must offer the refused item again first"
            )


@attrs.frozen
class ProcessorContext:
    """Where a processor runs: its vertex, its index among the vertex's processors, the job."""

    vertexName: str
    globalProcessorIndex: int
    totalParallelism: int
    memberIndex: int = 0
    memberCount: int = 1
    jobName: str = ""
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

    def completeEdge(self, ordinal: int) -> bool:
        """React to the end of inbound edge ``ordinal``; return False to be called again."""
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
        """Offer each item to ``tryProcess(ordinal, item)``, stopping at the first refusal."""
        tryItem = self.tryProcess if _handlesItems(type(self)) else self._dispatch
        while not inbox.isEmpty():
            if not tryItem(ordinal, inbox.peek()):
                return
            inbox.remove()

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Without arguments: the idle hook. With both: dispatch ``item`` to ``tryProcessN``.

        Override it with ``(ordinal, item)`` parameters to handle every ordinal in one
        place, or with none to do idle-time work; ``tryProcess0..4`` keep working then.
        """
        if ordinal is None:
            return True
        return self._dispatch(ordinal, item)

    def _dispatch(self, ordinal: int, item) -> bool:
        handler = (
            self.tryProcess0,
            self.tryProcess1,
            self.tryProcess2,
            self.tryProcess3,
            self.tryProcess4,
        )
        if ordinal >= len(handler):
            raise ProcessorContractError(
                f"{type(self).__name__} got an item on ordinal {ordinal}: override "
                "tryProcess(ordinal, item) to handle ordinals above 4"
            )
        return handler[ordinal](item)

    def tryProcess0(self, item) -> bool:
        """Process an item of ordinal 0; return False if it must be offered again."""
        return self._missing(0)

    def tryProcess1(self, item) -> bool:
        """Process an item of ordinal 1; return False if it must be offered again."""
        return self._missing(1)

    def tryProcess2(self, item) -> bool:
        """Process an item of ordinal 2; return False if it must be offered again."""
        return self._missing(2)

    def tryProcess3(self, item) -> bool:
        """Process an item of ordinal 3; return False if it must be offered again."""
        return self._missing(3)

    def tryProcess4(self, item) -> bool:
        """Process an item of ordinal 4; return False if it must be offered again."""
        return self._missing(4)

    def tryEmit(self, item, ordinal: int = ALL_ORDINALS) -> bool:
        """Offer ``item`` to the outbox bucket of ``ordinal`` (-1: all buckets)."""
        return self.outbox.offer(item, ordinal)

    def emitFromTraverser(self, traverser: Iterator, ordinal: int = ALL_ORDINALS) -> bool:
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

    def _missing(self, ordinal: int) -> bool:
        raise ProcessorContractError(
            f"{type(self).__name__} got an item on ordinal {ordinal} but does not implement "
            f"tryProcess{ordinal}(item)"
        )


@functools.cache
def _handlesItems(processorClass: type) -> bool:
    """Return whether the class's ``tryProcess`` takes an ordinal and an item."""
    parameters = inspect.signature(processorClass.tryProcess).parameters
    return len(parameters) >= 3


@functools.cache
def _idleHookNeedsItem(processorClass: type) -> bool:
    """Return whether the class's ``tryProcess`` cannot be called without arguments."""
    parameters = list(inspect.signature(processorClass.tryProcess).parameters.values())[1:]
    return any(p.default is inspect.Parameter.empty for p in parameters)


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
