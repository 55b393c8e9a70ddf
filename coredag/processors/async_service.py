"""``mapUsingServiceAsync``: a function returning an awaitable (or a ``concurrent.futures.Future``)
per item, at most ``maxConcurrentOps`` in flight per processor, results in input order where
``preserveOrder`` asks for it, as Jet's ``AsyncTransformUsingServiceOrderedP`` and
``...UnorderedP`` do, watermarks waiting behind the calls before them. Each processor runs its
own asyncio event loop. ``mapUsingServiceAsyncBatched``: one call per list of up to
``maxBatchSize`` items, its future giving a list of one result per item, as Jet's
``AsyncTransformUsingServiceBatchedP``."""

import asyncio
import collections
import concurrent.futures
import inspect
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, Inbox, ProcessorContext
from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import UserFunctionError, shorten
from sparkjet.coredag.model.watermark import Watermark

DEFAULT_MAX_CONCURRENT_OPS = 4
"""Jet's default number of async calls in flight per processor."""
DEFAULT_PRESERVE_ORDER = True
"""Jet's default: results leave in the order their items came."""
MAX_CONCURRENT_ASYNC_BATCHES = 2
"""Jet's number of batched calls in flight per processor (results always in input order)."""


@attrs.frozen
class AsyncServiceP(StandardProcessorSupplier):
    """Maps ``fn(service, item)`` (``fn(service, key, item)`` with a ``keyFn``) asynchronously;
    a None future or a None result drops the item. With a ``maxBatchSize``, each call maps a
    list of items (``fn(service, items)``, ``fn(service, keys, items)``) and its future gives
    a list of as many results, a None result dropping its item."""

    serviceFactory: ServiceFactory
    fn: Callable
    maxConcurrentOps: int
    preserveOrder: bool
    stageName: str
    keyFn: Callable | None = None
    maxBatchSize: int | None = None

    def call(self, service: object, unit: object) -> object:
        """Start the call for ``unit`` (an item, or a list of them where batched): return its
        future, or None to drop it."""
        try:
            result = self.fn(service, *self._arguments(unit))
        except Exception as cause:
            raise UserFunctionError(self.stageName, shorten(unit), cause) from cause
        if result is not None and not (inspect.isawaitable(result) or isinstance(result, concurrent.futures.Future)):
            raise UserFunctionError(
                self.stageName, shorten(unit),
                TypeError(
                    f"mapAsyncFn must return an awaitable or a concurrent.futures.Future (or None), got "
                    f"{type(result).__name__}; a function returning its result belongs in mapUsingService"
                ),
            )
        return result

    def _arguments(self, unit: object) -> tuple:
        if self.keyFn is None:
            return (unit,)
        return ([self.keyFn(item) for item in unit] if self.maxBatchSize else self.keyFn(unit)), unit

    def results(self, unit: object, result: object) -> list:
        """Return what the call for ``unit`` emits: its result, or the batch's non-None results
        (a list of another length than the batch is refused, as Jet refuses it)."""
        if self.maxBatchSize is None:
            return [] if result is None else [result]
        if not isinstance(result, list | tuple) or len(result) != len(unit):
            got = f"{len(result)} results" if isinstance(result, list | tuple) else type(result).__name__
            raise UserFunctionError(
                self.stageName, shorten(unit),
                ValueError(f"mapAsyncFn's future must give a list of {len(unit)} results, one per item, got {got}"),
            )
        return [output for output in result if output is not None]

    def units(self, batch: list) -> Iterable:
        """Return the calls' units of an input ``batch``: its items, or lists of up to
        ``maxBatchSize`` of them."""
        if self.maxBatchSize is None:
            return batch
        return (batch[start:start + self.maxBatchSize] for start in range(0, len(batch), self.maxBatchSize))

    def createService(self, context: ProcessorContext) -> object:
        """Make this processor's service."""
        return self.serviceFactory.createFor(context, self.stageName)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop over the batches with one service and one event loop."""
        return lambda batches: self._overBatches(context, batches)

    def _overBatches(self, context: ProcessorContext, batches: Iterable[list]) -> Iterator[list]:
        window = AsyncWindow(self, self.createService(context))
        try:
            for batch in batches:
                outputs = [output for unit in self.units(batch) for output in window.submit(unit)]
                if outputs:
                    yield outputs
            outputs = window.drain()
            if outputs:
                yield outputs
        finally:
            window.close()

    def __call__(self) -> "AsyncServiceProcessor":
        return AsyncServiceProcessor(self)


class AsyncWindow:
    """The calls one processor has in flight, the watermarks queued behind them, its event loop
    and the results ready to emit."""

    def __init__(self, supplier: AsyncServiceP, service: object) -> None:
        self._supplier, self._service = supplier, service
        self._loop = asyncio.new_event_loop()
        self._queue: collections.deque[tuple[object, asyncio.Future] | Watermark] = collections.deque()
        self._calls = 0

    def submit(self, unit: object) -> list:
        """Start the call for ``unit`` once a slot is free; return what is ready by then."""
        ready = self._waitWhile(lambda: self._calls >= self._supplier.maxConcurrentOps)
        call = self._supplier.call(self._service, unit)
        if call is not None:
            self._queue.append((unit, self._future(call)))
            self._calls += 1
        return ready + self._takeDone()

    def submitWatermark(self, watermark: Watermark) -> list:
        """Queue ``watermark`` behind the calls in flight, replacing a watermark queued last (Jet
        conflates them), without taking a slot; return what is ready, the watermark if nothing
        is in flight."""
        if self._queue and isinstance(self._queue[-1], Watermark):
            self._queue.pop()
        self._queue.append(watermark)
        return self._takeDone()

    def drain(self) -> list:
        """Wait for every call in flight; return their results and the watermarks behind them."""
        return self._waitWhile(lambda: self._calls > 0)

    def close(self) -> None:
        """Cancel what is still in flight, close the loop and destroy the service."""
        futures = self._futures()
        for future in futures:
            future.cancel()
        if futures:  # let the cancelled calls end inside the loop before it closes
            self._loop.run_until_complete(asyncio.gather(*futures, return_exceptions=True))
        self._loop.close()
        if self._service is not None:
            self._supplier.serviceFactory.destroyFn(self._service)

    def _future(self, call: object) -> asyncio.Future:
        if isinstance(call, concurrent.futures.Future):
            return asyncio.wrap_future(call, loop=self._loop)
        return asyncio.ensure_future(call, loop=self._loop)

    def _futures(self) -> list[asyncio.Future]:
        return [entry[1] for entry in self._queue if not isinstance(entry, Watermark)]

    def _waitWhile(self, busy: Callable[[], bool]) -> list:
        ready = []
        while busy():
            waitFor = self._futures()[:1] if self._supplier.preserveOrder else self._futures()
            self._loop.run_until_complete(asyncio.wait(waitFor, return_when=asyncio.FIRST_COMPLETED))
            ready += self._takeDone()
        return ready

    def _takeDone(self) -> list:
        """Remove the finished calls and return their non-None results, then the watermarks no
        call is still ahead of: where order is preserved, all in queue order up to the first
        unfinished call (Jet's ordered processor); else every finished call's result, then the
        last such watermark (Jet's unordered one)."""
        if self._supplier.preserveOrder:
            ready = []
            while self._queue and (isinstance(self._queue[0], Watermark) or self._queue[0][1].done()):
                entry = self._queue.popleft()
                ready += [entry] if isinstance(entry, Watermark) else self._result(*entry)
            return ready
        done = [e for e in self._queue if not isinstance(e, Watermark) and e[1].done()]
        self._queue = collections.deque(e for e in self._queue if isinstance(e, Watermark) or not e[1].done())
        ready = [result for unit, future in done for result in self._result(unit, future)]
        watermarks = []
        while self._queue and isinstance(self._queue[0], Watermark):
            watermarks.append(self._queue.popleft())
        return ready + watermarks[-1:]

    def _result(self, unit: object, future: asyncio.Future) -> list:
        """Count the call as ended; return what it emits."""
        self._calls -= 1
        try:
            result = future.result()
        except Exception as cause:
            raise UserFunctionError(self._supplier.stageName, shorten(unit), cause) from cause
        return self._supplier.results(unit, result)


class AsyncServiceProcessor(AbstractProcessor):
    """The cooperative form: emits results as calls finish, waits for the rest at the end."""

    def __init__(self, supplier: AsyncServiceP) -> None:
        self._supplier = supplier
        self._window: AsyncWindow | None = None
        self._output: Iterator = iter(())

    def onInit(self, context: ProcessorContext) -> None:
        """Make the service and the event loop."""
        self._window = AsyncWindow(self._supplier, self._supplier.createService(context))

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Start a call per item, or, batched, per list of up to ``maxBatchSize`` items taken
        from the inbox (Jet's ``drainTo(batch, maxBatchSize)``), once earlier results are emitted."""
        batchSize = self._supplier.maxBatchSize
        if batchSize is None:
            super().process(ordinal, inbox)
            return
        while not inbox.isEmpty() and self.emitFromTraverser(self._output):
            unit = [inbox.poll() for _ in range(min(batchSize, inbox.size()))]
            self._output = iter(self._window.submit(unit))

    def tryProcess0(self, item) -> bool:
        """Start the call for ``item`` once earlier results are emitted."""
        if not self.emitFromTraverser(self._output):
            return False
        self._output = iter(self._window.submit(item))
        return True

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Queue the watermark behind the calls in flight, as Jet's async processors do."""
        if not self.emitFromTraverser(self._output):
            return False
        self._output = iter(self._window.submitWatermark(watermark))
        return True

    def complete(self) -> bool:
        """Emit what is left, then the results of every call still in flight."""
        if not self.emitFromTraverser(self._output):
            return False
        self._output = iter(self._window.drain())
        return self.emitFromTraverser(self._output)

    def close(self) -> None:
        """Close the event loop and destroy the service."""
        if self._window is not None:
            self._window.close()
