"""Snapshot keys every processor of a vertex restores, not only the one owning the key."""

import attrs


@attrs.frozen
class BroadcastKey:
    """A snapshot key whose entries go to every processor of the vertex on restore (Jet's
    ``BroadcastKey``); processors saving one ``key`` each must make their keys differ."""

    key: object

    def __repr__(self) -> str:
        return f"BroadcastKey{{key={self.key!r}}}"


def broadcastKey(key: object) -> BroadcastKey:
    """Return the broadcast snapshot key wrapping ``key`` (Jet's ``BroadcastKey.broadcastKey``)."""
    return BroadcastKey(key)
