"""The processors a Python worker keeps alive between a stream's micro-batches, as Jet keeps a
processor from one snapshot to the next: the next task of the same processor, if it runs in this
worker (PySpark reuses its workers), takes it up instead of restoring its state from the files.
A task takes its processor out before it runs and puts it back once it saved its state, so a
failed task leaves nothing behind. PySpark gives a task any idle worker, so a processor's tasks
may move between workers; a processor that saves its changes, kept by a worker its tasks left,
catches up when they come back by replaying the deltas saved meanwhile. No pyspark here."""

import time

import attrs

from sparkjet.coredag.api.saves_changes import SavesChanges
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.state_store import SavedEntries

STALE_SECONDS = 600.0
"""How long a kept processor no task took up stays: a job that ended, or a processor whose
tasks run in another worker now."""

LiveKey = tuple[str, str, int]
"""A job's state directory, a vertex's name and a processor's index."""


@attrs.frozen
class LiveProcessor:
    """A processor and its outbox as they ended a micro-batch, having saved ``savedBy``'s state
    in the chain of state files ``files`` (``saved``: its entries, what the next delta is taken
    against, unless it saves its changes)."""

    processor: object
    outbox: object
    savedBy: str
    files: tuple[str, ...]
    saved: SavedEntries
    keptAt: float = attrs.field(factory=time.monotonic)


@attrs.frozen
class TakenUp:
    """A kept processor a task takes up, and the delta files it replays first to reach the state
    the task restores (none: it saved that state itself)."""

    live: LiveProcessor
    replayed: tuple[str, ...] = ()


_kept: dict[LiveKey, LiveProcessor] = {}


def takeLive(key: LiveKey, restored: ProcessorState) -> TakenUp | None:
    """Take out the processor kept under ``key`` if it is the one that saved ``restored``, or if
    it saves its changes and saved an earlier version of ``restored``'s chain of files (then with
    the deltas after it to replay); any other kept there is dropped."""
    live = _kept.pop(key, None)
    if live is None:
        return None
    if live.savedBy == restored.savedBy:
        return TakenUp(live)
    behind = len(live.files)
    if isinstance(live.processor, SavesChanges) and behind and restored.files[:behind] == live.files:
        return TakenUp(live, restored.files[behind:])
    return None


def keepLive(key: LiveKey, live: LiveProcessor) -> None:
    """Keep ``live`` under ``key`` for the next micro-batch; drop those no task took up for long."""
    now = time.monotonic()
    for stale in [other for other, kept in _kept.items() if now - kept.keptAt > STALE_SECONDS]:
        del _kept[stale]
    _kept[key] = live
