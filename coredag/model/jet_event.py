"""Jet's ``JetEvent``: an item with its event timestamp, as it travels after add-timestamps, and
the adapters that let a user's function see the item alone (Jet's ``JetEventFunctionAdapter``)."""

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Iterator

import attrs


@attrs.frozen
class JetEvent:
    """``payload`` with its event time ``timestamp``."""

    timestamp: int
    payload: object


def jetEvent(payload: object, timestamp: int) -> JetEvent:
    """Wrap ``payload`` with its timestamp: the add-timestamps processor's ``wrapFn``."""
    return JetEvent(timestamp, payload)


def eventTimestamp(event: JetEvent) -> int:
    """Return an event's timestamp."""
    return event.timestamp


def itemOf(item: object) -> object:
    """Return an event's item, any other item as it is: what a sink writes, as Jet's sinks
    take the items of a timestamped stage without their timestamps."""
    return item.payload if type(item) is JetEvent else item


def itemsOf(batches: Iterator[list]) -> Iterator[list]:
    """Return each batch with its events' items in their place (a sink's fast path)."""
    return map(_batchItems, batches)


def _batchItems(batch: list) -> list:
    """Return ``batch`` with its events' items in their place; a batch without events as it is,
    found by a look at its types that costs a batch sink next to nothing."""
    if JetEvent not in set(map(type, batch)):
        return batch
    return [itemOf(item) for item in batch]


@attrs.frozen
class OnPayload:
    """``fn`` of an event's item: a key or timestamp function, a predicate; where the event is
    one of several arguments (``position``: -1 the last, as a stateful or service function's
    item), the others are passed as they are."""

    fn: Callable
    position: int = 0

    def __call__(self, *arguments) -> object:
        return self.fn(*_withPayload(arguments, self.position))


@attrs.frozen
class MappedEvent:
    """Maps an event's item (the argument at ``position``), keeping its timestamp; None drops it."""

    fn: Callable
    position: int = 0

    def __call__(self, *arguments) -> JetEvent | None:
        result = self.fn(*_withPayload(arguments, self.position))
        return None if result is None else JetEvent(arguments[self.position].timestamp, result)


@attrs.frozen
class FlatMappedEvent:
    """Maps an event's item (the argument at ``position``) to items, each keeping the event's timestamp."""

    fn: Callable
    position: int = 0

    def __call__(self, *arguments) -> list:
        timestamp = arguments[self.position].timestamp
        return [JetEvent(timestamp, item) for item in self.fn(*_withPayload(arguments, self.position))]


@attrs.frozen
class AsyncMappedEvent:
    """Calls an async map function with an event's item (the argument at ``position``): the
    awaitable or ``concurrent.futures.Future`` it returns gives the result as an event with the
    item's timestamp (None drops it)."""

    fn: Callable
    position: int = 0

    def __call__(self, *arguments) -> object:
        call = self.fn(*_withPayload(arguments, self.position))
        if not (inspect.isawaitable(call) or isinstance(call, concurrent.futures.Future)):
            return call  # None drops the item; anything else the async stage refuses, naming it
        return _stamped(call, arguments[self.position].timestamp)


@attrs.frozen
class AsyncBatchMappedEvents:
    """Calls a batched async map function with the items of a list of events (the argument at
    ``position``): the list its future gives becomes events with their items' timestamps."""

    fn: Callable
    position: int = -1

    def __call__(self, *arguments) -> object:
        events = arguments[self.position]
        call = self.fn(*_replacedAt(arguments, self.position, [event.payload for event in events]))
        if not (inspect.isawaitable(call) or isinstance(call, concurrent.futures.Future)):
            return call  # None drops the batch; anything else the async stage refuses, naming it
        return _stampedList(call, [event.timestamp for event in events])


async def _stamped(call: object, timestamp: int) -> JetEvent | None:
    result = await _awaited(call)
    return None if result is None else JetEvent(timestamp, result)


async def _stampedList(call: object, timestamps: list[int]) -> object:
    """Return the call's results as events; a result that is no list of one per item as it
    is, for the async stage to refuse, naming it."""
    results = await _awaited(call)
    if not isinstance(results, list | tuple) or len(results) != len(timestamps):
        return results
    return [None if result is None else JetEvent(timestamp, result) for timestamp, result in zip(timestamps, results)]


def _awaited(call: object) -> object:
    return asyncio.wrap_future(call) if isinstance(call, concurrent.futures.Future) else call


def _withPayload(arguments: tuple, position: int) -> list:
    """Return ``arguments`` with the event at ``position`` replaced by its item."""
    return _replacedAt(arguments, position, arguments[position].payload)


def _replacedAt(arguments: tuple, position: int, value: object) -> list:
    """Return ``arguments`` with the one at ``position`` replaced by ``value``."""
    replaced = list(arguments)
    replaced[position] = value
    return replaced


@attrs.frozen
class AccumulatePayload:
    """Accumulates an event's item, as the operation's ``accumulateFn`` would the item."""

    accumulateFn: Callable

    def __call__(self, acc: object, event: JetEvent) -> object:
        return self.accumulateFn(acc, event.payload)
