"""Jet's ``TimestampKind``: what a window processor's timestamp function gives."""

import enum


class TimestampKind(enum.Enum):
    """``EVENT``: an event's time, put into the frame holding it; ``FRAME``: the end of the
    item's frame already (the result of an earlier frame-level aggregation, say)."""

    FRAME = "frame"
    EVENT = "event"
