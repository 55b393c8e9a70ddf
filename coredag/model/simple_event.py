"""Jet's ``SimpleEvent``: what ``TestSources.itemStream`` emits."""

import attrs

from sparkjet.coredag.model.window_result import toLocalTime


@attrs.frozen(repr=False)
class SimpleEvent:
    """The ``sequence``-th event of a test stream, made at ``timestamp`` (ms since the epoch)."""

    timestamp: int
    sequence: int

    def __repr__(self) -> str:
        return f"SimpleEvent(timestamp={toLocalTime(self.timestamp)}, sequence={self.sequence})"
