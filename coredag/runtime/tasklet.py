"""Running one processor of a vertex inside a Spark task: the fast path or the cooperative loop."""

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from time import monotonic, sleep

import attrs

from sparkjet.coredag.api.processor import (
    Inbox,
    Outbox,
    ProcessingGuarantee,
    Processor,
    ProcessorContext,
    callIdleHook,
    restoreSnapshot,
)
from sparkjet.coredag.api.saves_changes import replayChanges
from sparkjet.coredag.api.standard import BatchFunction, batched
from sparkjet.coredag.errors import ProcessorContractError, SparkjetError, UserFunctionError, shorten
from sparkjet.coredag.model.edge import Ordering
from sparkjet.coredag.model.metrics import TaskMetrics
from sparkjet.coredag.model.watermark import Watermark
from sparkjet.coredag.runtime.physical_plan import Loop
from sparkjet.coredag.runtime.watermarks import EdgeQueues, toEveryBucket

IDLE_SPINS = 10
"""How many calls in a row that make no progress the loop makes at once, before it parks."""
MIN_PARK_SECONDS, MAX_PARK_SECONDS = 1e-6, 1e-3
"""Jet's cooperative backoff: the first park after the spins, doubled at each idle call up to the last."""
MAX_SECONDS_WITHOUT_PROGRESS = 60.0
"""How long a processor may go without progress before it fails: one that waits on time (a
delay, a rate limit) waits as long as it likes in Jet, whose tasklets are never failed for
idling; here a minute, so that one that never progresses is told so instead of hanging its task."""


@attrs.frozen
class TaskletSpec:
    """What a Spark task needs to run a vertex's processor: the vertex and its edges' shape.

    ``inboundOrdinals`` lists the inbound edges in the order they are consumed (ascending
    priority) and ``inboundPriorities`` their priorities (all 0 when empty). ``loop`` is the
    physical plan's: the standard fast path (a standard supplier's) or the cooperative loop.
    """

    vertexName: str
    processorSupplier: Callable[[], Processor]
    totalParallelism: int
    inboundOrdinals: tuple[int, ...]
    bucketCount: int
    queueSize: int
    outboxCapacity: int
    jobName: str = ""
    processingGuarantee: ProcessingGuarantee = ProcessingGuarantee.NONE
    """The job's guarantee, which each processor's context gives."""
    inboundPriorities: tuple[int, ...] = ()
    inboundOrdering: Ordering | None = None
    loop: Loop = Loop.COOPERATIVE
    watermarkQueues: tuple[EdgeQueues, ...] = ()
    """The inbound edges whose upstream processors may send watermarks."""
    carriesWatermarks: bool = False
    """The vertex's processors may emit watermarks (their own, or forwarded): its output
    carries them as markers among its items."""
    hasOutboundEdges: bool = True

    def context(self, index: int, metrics: TaskMetrics | None = None) -> ProcessorContext:
        """Return the context of processor ``index``, counting into ``metrics`` if given."""
        return ProcessorContext(
            vertexName=self.vertexName,
            globalProcessorIndex=index,
            totalParallelism=self.totalParallelism,
            jobName=self.jobName,
            processingGuarantee=self.processingGuarantee,
            metrics=metrics,
        )

    def usesFastPath(self) -> bool:
        """Return whether the vertex runs as one loop, as its physical plan says."""
        return self.loop is Loop.STANDARD

    def priorityGroups(self) -> list[tuple[int, ...]]:
        """Return the inbound ordinals grouped by equal priority, lowest number first."""
        priorities = self.inboundPriorities or (0,) * len(self.inboundOrdinals)
        pairs = zip(priorities, self.inboundOrdinals)
        return [tuple(o for _, o in group) for _, group in itertools.groupby(pairs, key=_first)]


def _first(pair: tuple) -> object:
    return pair[0]


@attrs.frozen(kw_only=True)
class Start:
    """How a processor of a stream's micro-batch ends: where it ``saves``, by saving its state
    (only what changed since it last saved, where ``changesOnly``) and preparing its commit
    instead of completing, then kept for the next micro-batch where it ``keeps``. What it starts
    from is its kind's: ``Fresh``, ``Restored`` or ``Live``."""

    saves: bool = False
    changesOnly: bool = False
    keeps: bool = False

    def follows(self) -> bool:
        """Return whether it takes up a snapshot committed since, whose second commit phase is due."""
        return True


@attrs.frozen(kw_only=True)
class Fresh(Start):
    """A new processor that restores nothing: a batch job's, or a stream's before its first snapshot."""

    def follows(self) -> bool:
        """Return False: no snapshot came before."""
        return False


@attrs.frozen(kw_only=True)
class Restored(Start):
    """A new processor that restores the snapshot entries ``entries`` reads once it is ready for them."""

    entries: Callable[[], list[tuple]]


@attrs.frozen(kw_only=True)
class Live(Start):
    """The ``processor`` (with its ``outbox``) a Python worker kept from an earlier micro-batch,
    brought up to date, where it was kept a few micro-batches ago, by the changes ``catchUp``
    reads (the entries changed and the keys removed since)."""

    processor: Processor
    outbox: Outbox
    catchUp: Callable[[], tuple[Mapping, Iterable]] | None = None


FRESH = Fresh()
"""The start of a batch job's processors."""


@attrs.frozen
class Saved:
    """What a processor that saves ends its micro-batch with: the snapshot entries it saved
    (only those changed since it last saved, where its start said ``changesOnly``) and, where it
    keeps, itself with its outbox for the next micro-batch."""

    entries: tuple[tuple, ...]
    kept: tuple[Processor, Outbox] | None = None


def runPartition(
    spec: TaskletSpec, index: int, items: Iterator, start: Start = FRESH, metrics: TaskMetrics | None = None,
) -> Iterator:
    """Run processor ``index`` of the vertex over the partition's items, from ``start``.

    With several inbound edges ``items`` are ``(ordinal, item)`` pairs, the priority groups
    one after the other; with several buckets the output is ``(ordinal, item)`` pairs too.
    A watermark to observe comes in its place among the items (``(None, watermark)`` among pairs).
    A processor counts the late events it dropped into ``metrics``, if given. Where it saves,
    the output returns what it ``Saved`` (see ``returning``).
    """
    context = spec.context(index, metrics)
    if spec.usesFastPath():
        return spec.processorSupplier.fastPath(context)(items)
    if len(spec.inboundOrdinals) == 1:
        ordinal = spec.inboundOrdinals[0]
        items = ((None, item) if type(item) is Watermark else (ordinal, item) for item in items)
    output = runCooperatively(spec, context, items, start)
    if spec.bucketCount > 1:
        return output
    return _untagged(output) if start.saves else (item for _, item in output)


def runPartitionBatches(
    spec: TaskletSpec, index: int, batches: Iterator[list | Watermark], metrics: TaskMetrics | None = None,
    start: Start = FRESH,
) -> Iterator[list]:
    """Run processor ``index`` over a partition given and returned as lists of items, with the
    watermarks to observe in their places between the input's lists; the input of an ordered
    edge is sorted first (its runs come sorted: Timsort merges them; its watermarks follow it).
    A fused vertex counts its stages' items into ``metrics``, if given. A standard vertex
    forwards each watermark in its place, as Jet's processors do by default. Where it saves,
    the output returns what it ``Saved``."""
    ordering = spec.inboundOrdering
    if ordering is not None:
        elements = list(batches)
        items = itertools.chain.from_iterable(element for element in elements if type(element) is not Watermark)
        batches = itertools.chain(
            batched(sorted(items, key=ordering.key, reverse=ordering.reverse), spec.queueSize),
            (element for element in elements if type(element) is Watermark),
        )
    if spec.usesFastPath():
        run = spec.processorSupplier.batchFunction(spec.context(index, metrics))
        return _inBand(run, batches, spec.bucketCount)
    items = _flattened(batches, len(spec.inboundOrdinals) > 1)
    output = runPartition(spec, index, items, start, metrics)
    return _batched(output) if start.saves else batched(output)


def returning(generator: Generator, returned: list) -> Iterator:
    """Yield what ``generator`` yields, then add what it returns to ``returned``: what a
    processor ``Saved``, through code that passes the output on."""
    returned.append((yield from generator))


def _untagged(output: Generator) -> Generator:
    """Yield the items of ``output``'s ``(ordinal, item)`` pairs; return what it returns."""
    returned: list = []
    yield from (item for _, item in returning(output, returned))
    return returned[0]


def _batched(output: Generator) -> Generator:
    """Yield ``output``'s items in lists; return what it returns."""
    returned: list = []
    yield from batched(returning(output, returned))
    return returned[0]


def _flattened(batches: Iterator[list | Watermark], tagged: bool) -> Iterator:
    """Yield the items of ``batches`` and each watermark in its place (``(None, watermark)``
    among ``tagged`` pairs)."""
    for element in batches:
        if type(element) is Watermark:
            yield (None, element) if tagged else element
        else:
            yield from element


def _inBand(run: BatchFunction, batches: Iterator[list | Watermark], bucketCount: int) -> Iterator[list]:
    """Run the fast path ``run`` over the item lists of ``batches``, forwarding each watermark
    in its place: ``run`` takes a list once it has yielded the output of the lists before, so
    a watermark read before a list goes out before what ``run`` yields after taking it."""
    pending: list[Watermark] = []

    def itemBatches() -> Iterator[list]:
        for element in batches:
            if type(element) is Watermark:
                pending.append(element)
            else:
                yield element

    for output in run(itemBatches()):
        yield from _drainedWatermarks(pending, bucketCount)
        yield output
    yield from _drainedWatermarks(pending, bucketCount)


def _drainedWatermarks(pending: list[Watermark], bucketCount: int) -> Iterator[list]:
    """Yield each watermark of ``pending`` to every bucket and empty it."""
    while pending:
        yield toEveryBucket(pending.pop(0), bucketCount)


def runCooperatively(
    spec: TaskletSpec, context: ProcessorContext, taggedItems: Iterable[tuple[int | None, object]],
    start: Start = FRESH,
) -> Generator[tuple[int, object], None, Saved | None]:
    """Drive one processor through ``(ordinal, item)`` input; yield ``(ordinal, item)`` it emits.

    A ``(None, watermark)`` pair is a watermark the processor observes there. In a stream's
    micro-batch it first restores the entries its ``start`` gives (or catches up, kept alive)
    and finishes the previous commit; where it ``saves``, it ends by saving its state and
    preparing its commit instead of completing, and returns what it ``Saved``
    (docs/internals/core-dag-on-spark.md, "The cooperative loop")."""
    processor, outbox = (start.processor, start.outbox) if isinstance(start, Live) else _newProcessor(spec)
    loop = _CooperativeLoop(processor, outbox, context.vertexName, inputWaited=start.saves or start.follows())
    groups = spec.priorityGroups()
    groupOf = {ordinal: number for number, group in enumerate(groups) for ordinal in group}
    pending: dict[int, list] = {ordinal: [] for ordinal in spec.inboundOrdinals}
    lateBefore = _lateEventsDropped(processor)
    kept = None
    try:
        if not isinstance(start, Live):
            processor.init(outbox, context)
            restored = start.entries() if isinstance(start, Restored) else ()
            if restored:
                loop.guarded(lambda: restoreSnapshot(processor, Inbox(restored)))
                yield from loop.repeat(processor.finishSnapshotRestore)
        elif start.catchUp is not None:
            loop.guarded(lambda: replayChanges(processor, *start.catchUp()))
            yield from loop.repeat(processor.finishSnapshotRestore)
        if start.follows():
            yield from loop.repeat(lambda: processor.snapshotCommitFinish(True))
        current = 0
        for ordinal, item in taggedItems:
            if ordinal is None:
                yield from loop.observeWatermark(pending, item)
                continue
            while groupOf[ordinal] > current:
                yield from loop.completeGroup(groups[current], pending)
                current += 1
            batch = pending[ordinal]
            batch.append(item)
            if len(batch) >= spec.queueSize:
                yield from loop.process(ordinal, batch)
                pending[ordinal] = []
        if start.saves:
            yield from loop.saveState(pending, start.changesOnly)
            kept = (processor, outbox) if start.keeps else None
            return Saved(tuple(outbox.drainSnapshotBucket()), kept)
        for group in groups[current:]:
            yield from loop.completeGroup(group, pending)
        yield from loop.repeat(processor.complete)
        return None
    finally:
        if context.metrics is not None:
            context.metrics.countLateEvents(spec.vertexName, _lateEventsDropped(processor) - lateBefore)
        if kept is None:
            processor.close()


def _lateEventsDropped(processor: Processor) -> int:
    """Return how many late events ``processor`` dropped so far: a count sparkjet's window and
    stateful-mapping processors keep (not Jet's contract; 0 for a processor that keeps none)."""
    return getattr(processor, "lateEventsDropped", 0)


def _newProcessor(spec: TaskletSpec) -> tuple[Processor, Outbox]:
    """Return a new processor of the vertex and its outbox."""
    processor = spec.processorSupplier()
    return processor, Outbox(spec.bucketCount, spec.outboxCapacity if processor.isCooperative() else None)


class _CooperativeLoop:
    """Calls a processor until it makes progress, draining its outbox after every call. The
    idle hook comes before each input batch, as Jet's tasklet calls ``tryProcess()`` whenever
    its inbox is empty, but the first where the input ``inputWaited`` (a stream's micro-batch):
    the time since the previous micro-batch was no time without input, so an ``add-timestamps``
    takes the events that waited before its partition's idle timeout is looked at, as Jet's
    source finds them when it polls."""

    def __init__(self, processor: Processor, outbox: Outbox, vertexName: str, inputWaited: bool = False) -> None:
        self._processor, self._outbox, self._vertexName = processor, outbox, vertexName
        self._idleHookDue = not inputWaited

    def process(self, ordinal: int, batch: list) -> Iterator:
        """Present ``batch`` in the inbox of ``ordinal`` until the processor has taken it all."""
        inbox = Inbox(batch)
        idleCalls, idleSince = 0, 0.0
        while not inbox.isEmpty():
            if self._idleHookDue:
                yield from self.repeat(lambda: callIdleHook(self._processor))
            self._idleHookDue = True
            before = inbox.size()
            self._guarded(lambda: self._processor.process(ordinal, inbox), inbox.peek)
            emitted = not self._outbox.isEmpty()
            yield from self._drain()
            if emitted or inbox.size() < before:
                idleCalls = 0
            else:
                idleCalls += 1
                idleSince = self._idle(idleCalls, idleSince, "process()")

    def observeWatermark(self, pending: dict[int, list], watermark: Watermark) -> Iterator:
        """Process every pending batch, then give the processor ``watermark``; the idle message
        goes straight on to every bucket, as Jet's tasklet forwards it."""
        yield from self.processPending(pending)
        if watermark.isIdle():
            yield from ((ordinal, watermark) for ordinal in range(self._outbox.bucketCount()))
        else:
            yield from self.repeat(lambda: self._processor.tryProcessWatermark(watermark))

    def processPending(self, pending: dict[int, list]) -> Iterator:
        """Process every batch still pending in ``pending``."""
        for ordinal, batch in pending.items():
            if batch:
                yield from self.process(ordinal, batch)
                pending[ordinal] = []

    def saveState(self, pending: dict[int, list], changesOnly: bool) -> Iterator:
        """Process every pending batch, do the idle work, then save the processor's state (only
        what changed since its last snapshot, if ``changesOnly``) and prepare its commit."""
        yield from self.processPending(pending)
        yield from self.repeat(lambda: callIdleHook(self._processor))
        processor = self._processor
        yield from self.repeat(processor.saveChangesToSnapshot if changesOnly else processor.saveToSnapshot)
        yield from self.repeat(self._processor.snapshotCommitPrepare)

    def guarded(self, call: Callable) -> object:
        """Return what ``call`` returns; a user function's error names the vertex."""
        return self._guarded(call, lambda: None)

    def completeGroup(self, ordinals: tuple[int, ...], pending: dict[int, list]) -> Iterator:
        """Process what is left of the group's edges, then complete each edge."""
        for ordinal in ordinals:
            if pending[ordinal]:
                yield from self.process(ordinal, pending[ordinal])
                pending[ordinal] = []
        for ordinal in ordinals:
            yield from self.repeat(lambda: self._processor.completeEdge(ordinal))

    def repeat(self, call: Callable[[], bool]) -> Iterator:
        """Call ``call`` until it returns True, draining the outbox after each call."""
        idleCalls, idleSince = 0, 0.0
        while True:
            done = self._guarded(call, lambda: None)
            emitted = not self._outbox.isEmpty()
            yield from self._drain()
            if done:
                return
            if emitted:
                idleCalls = 0
            else:
                idleCalls += 1
                idleSince = self._idle(idleCalls, idleSince, "a method returning False")

    def _guarded(self, call: Callable, failingItem: Callable[[], object]):
        try:
            return call()
        except SparkjetError:
            raise
        except Exception as cause:
            item = failingItem()
            shown = shorten(item) if item is not None else "(none)"
            raise UserFunctionError(self._vertexName, shown, cause) from cause

    def _drain(self) -> Iterator[tuple[int, object]]:
        for ordinal in range(self._outbox.bucketCount()):
            for item in self._outbox.drainBucket(ordinal):
                yield ordinal, item

    def _idle(self, idleCalls: int, idleSince: float, what: str) -> float:
        """Wait after the ``idleCalls``-th call in a row that made no progress, as Jet's backoff
        idler does: none for the first few, then a park of 1 µs doubling up to 1 ms; return when
        the streak's first park came (``idleSince`` after it). The clock is read only where the
        loop parks; a processor idle for MAX_SECONDS_WITHOUT_PROGRESS fails."""
        if idleCalls <= IDLE_SPINS:
            return idleSince
        parks = idleCalls - IDLE_SPINS
        now = monotonic()
        if parks == 1:
            idleSince = now
        elif now - idleSince > MAX_SECONDS_WITHOUT_PROGRESS:
            msg = (
                f"The processor of vertex '{self._vertexName}' made no progress in "
                f"{MAX_SECONDS_WITHOUT_PROGRESS:g} s of calls of {what}: it must remove items from "
                "its inbox or emit to its outbox"
            )
            raise ProcessorContractError(msg)
        sleep(min(MIN_PARK_SECONDS * 2 ** min(parks - 1, 10), MAX_PARK_SECONDS))
        return idleSince
