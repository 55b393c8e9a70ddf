"""Processors whose snapshot can hold only what changed (sparkjet's, not Jet's): a stream's
micro-batch then writes the keys it touched, not every key its processor holds. Jet's contract
stays: ``saveToSnapshot`` saves everything, and the runtime calls it for the first snapshot of a
chain of state files and whenever the chain is compacted."""

import abc
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping

import attrs

from sparkjet.coredag.api.processor import Inbox, restoreSnapshot
from sparkjet.coredag.model.broadcast_key import BroadcastKey


@attrs.frozen
class Removed:
    """The value of a key removed since the last snapshot, in a snapshot of changes."""


REMOVED = Removed()


class SavesChanges(abc.ABC):
    """A processor that, besides ``saveToSnapshot``, can save only the entries changed since its
    last ``saveToSnapshot``, ``saveChangesToSnapshot`` or restore (``(key, REMOVED)`` for a key
    removed since), and forget a key's state, so that a delta can be replayed onto it."""

    @abc.abstractmethod
    def saveChangesToSnapshot(self) -> bool:
        """Offer the entries changed since the last snapshot or restore; False to be called again."""

    @abc.abstractmethod
    def forgetFromSnapshot(self, key: object) -> None:
        """Drop ``key``'s state, as if it had never been restored."""


def replayChanges(processor: SavesChanges, changed: Mapping, removed: Iterable) -> None:
    """Bring ``processor`` from the state it saved to a later one: forget each key the deltas
    since removed or changed, then restore the changed entries (``BroadcastKey`` ones as they are)."""
    for key in itertools.chain(removed, changed):
        if not isinstance(key, BroadcastKey):
            processor.forgetFromSnapshot(key)
    restoreSnapshot(processor, Inbox(changed.items()))


class TouchedKeys:
    """The keys of a processor's state touched since its last snapshot or restore."""

    def __init__(self) -> None:
        self.keys: set = set()

    def touch(self, key: object) -> None:
        """Note that ``key``'s state was changed, made or removed."""
        self.keys.add(key)

    def changes(self, states: Mapping, entryOf: Callable[[object], object]) -> Iterator[tuple]:
        """Yield each touched key's entry (``entryOf(key)``, or ``REMOVED`` where ``states`` no
        longer holds it) and forget the keys."""
        keys, self.keys = self.keys, set()
        for key in keys:
            yield key, entryOf(key) if key in states else REMOVED

    def clear(self) -> None:
        """Forget the touched keys: the state was just saved whole or restored."""
        self.keys = set()
