"""Watermarks: Jet's in-band statement that no event older than a timestamp is still to come."""

import attrs

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
"""Java's ``Long.MIN_VALUE`` and ``Long.MAX_VALUE``: Jet's timestamps are longs, and so are ours."""


@attrs.frozen(repr=False)
class Watermark:
    """No event with a timestamp below ``timestamp`` follows on this stream (Jet's ``Watermark``);
    processors receive it in ``tryProcessWatermark`` and it travels to every downstream processor."""

    timestamp: int

    def isIdle(self) -> bool:
        """Return whether this is the idle message: its sender has no events for a while."""
        return self.timestamp == LONG_MAX

    def __repr__(self) -> str:
        return "Watermark(IDLE_MESSAGE)" if self.isIdle() else f"Watermark({self.timestamp})"


IDLE_MESSAGE = Watermark(LONG_MAX)
"""Sent by an input with no events for its idle timeout: coalescing leaves it out until it wakes."""
