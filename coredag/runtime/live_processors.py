"""The processors a Python worker keeps alive between a stream's micro-batches, as Jet keeps a
processor from one snapshot to the next: the next task of the same processor, if it runs in this
worker (PySpark reuses its workers), takes it up instead of restoring its state from the files.
A task takes its processor out before it runs and puts it back once it saved its state, so a
failed task leaves nothing behind. No pyspark here."""

import time

import attrs

from sparkjet.coredag.runtime.state_store import SavedEntries

STALE_SECONDS = 600.0
"""How long a kept processor no task took up stays: a job that ended, or a processor whose
tasks run in another worker now."""

LiveKey = tuple[str, str, int]
"""A job's state directory, a vertex's name and a processor's index."""


@attrs.frozen
class LiveProcessor:
    """A processor and its outbox as they ended a micro-batch, having saved ``savedBy``'s state
    (``saved``: its entries, what the next delta is taken against)."""

    processor: object
    outbox: object
    savedBy: str
    saved: SavedEntries
    keptAt: float = attrs.field(factory=time.monotonic)


_kept: dict[LiveKey, LiveProcessor] = {}


def takeLive(key: LiveKey, savedBy: str) -> LiveProcessor | None:
    """Take out the processor kept under ``key``, if it is the one that saved ``savedBy``'s state
    (one that saved another, a stale copy, is dropped)."""
    live = _kept.pop(key, None)
    return live if live is not None and live.savedBy == savedBy else None


def keepLive(key: LiveKey, live: LiveProcessor) -> None:
    """Keep ``live`` under ``key`` for the next micro-batch; drop those no task took up for long."""
    now = time.monotonic()
    for stale in [other for other, kept in _kept.items() if now - kept.keptAt > STALE_SECONDS]:
        del _kept[stale]
    _kept[key] = live
