"""Jet's ``JetEvent``: an item with its event timestamp, as it travels after add-timestamps, and
the adapters that let a user's function see the item alone (Jet's ``JetEventFunctionAdapter``)."""

from collections.abc import Callable

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


def payloadOf(event: JetEvent) -> object:
    """Return an event's item."""
    return event.payload


@attrs.frozen
class OnPayload:
    """``fn`` of an event's item: a key or timestamp function, a predicate."""

    fn: Callable

    def __call__(self, event: JetEvent) -> object:
        return self.fn(event.payload)


@attrs.frozen
class MappedEvent:
    """Maps an event's item, keeping its timestamp; None drops it."""

    fn: Callable

    def __call__(self, event: JetEvent) -> JetEvent | None:
        result = self.fn(event.payload)
        return None if result is None else JetEvent(event.timestamp, result)


@attrs.frozen
class FlatMappedEvent:
    """Maps an event's item to items, each keeping the event's timestamp."""

    fn: Callable

    def __call__(self, event: JetEvent) -> list:
        return [JetEvent(event.timestamp, item) for item in self.fn(event.payload)]


@attrs.frozen
class AccumulatePayload:
    """Accumulates an event's item, as the operation's ``accumulateFn`` would the item."""

    accumulateFn: Callable

    def __call__(self, acc: object, event: JetEvent) -> object:
        return self.accumulateFn(acc, event.payload)
