"""The processors a Python worker keeps alive between a stream's micro-batches, as Jet keeps a
processor from one snapshot to the next: a task takes its processor out before it runs and puts
it back once it saved its state. How processors move between workers, catch up and are closed:
docs/internals/stream-state.md. No pyspark here."""

import logging
import threading
import time

import attrs

from sparkjet.coredag.api.processor import Outbox, Processor
from sparkjet.coredag.api.saves_changes import SavesChanges
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.runtime.files import filesAt
from sparkjet.coredag.runtime.state_store import SavedEntries

STALE_SECONDS = 600.0
"""How long a kept processor no task took up stays: a job that ended, or a processor whose
tasks run in another worker now."""

WATCH_SECONDS = 0.2
"""How often the watcher looks for kept processors to close."""

LiveKey = tuple[str, str, int]
"""A job's state directory, a vertex's name and a processor's index."""


@attrs.frozen
class LiveProcessor:
    """A processor and its outbox as they ended a micro-batch, having saved ``savedBy``'s state
    in the chain of state files ``files`` (``saved``: its entries, what the next delta is taken
    against, unless it saves its changes)."""

    processor: Processor
    outbox: Outbox
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
_keeping = threading.Lock()
_watcher: threading.Thread | None = None
_askedAt: dict[str, float] = {}
"""When the watcher last asked whether each state directory exists."""
_log = logging.getLogger("sparkjet")


def takeLive(key: LiveKey, restored: ProcessorState) -> TakenUp | None:
    """Take out the processor kept under ``key`` if it is the one that saved ``restored``, or if
    it saves its changes and saved an earlier version of ``restored``'s chain of files (then with
    the deltas after it to replay); any other kept there is superseded, and closed."""
    with _keeping:
        live = _kept.pop(key, None)
    if live is None:
        return None
    if live.savedBy == restored.savedBy:
        return TakenUp(live)
    behind = len(live.files)
    if isinstance(live.processor, SavesChanges) and behind and restored.files[:behind] == live.files:
        return TakenUp(live, restored.files[behind:])
    _close(key, live)
    return None


def keepLive(key: LiveKey, live: LiveProcessor) -> None:
    """Keep ``live`` under ``key`` for the next micro-batch, watched until a task takes it up."""
    global _watcher
    with _keeping:
        replaced = _kept.pop(key, None)
        _kept[key] = live
        if _watcher is None:
            _watcher = threading.Thread(target=_watchKept, name="sparkjet-live-processors", daemon=True)
            _watcher.start()
    if replaced is not None:
        _close(key, replaced)


def _watchKept() -> None:
    """Close and drop, for as long as this worker lives, the kept processors of ended jobs and
    those no task took up for ``STALE_SECONDS``."""
    while True:
        time.sleep(WATCH_SECONDS)
        now = time.monotonic()
        with _keeping:
            roots = {key[0] for key in _kept}
        ended = {root for root in roots if _ended(root, now)}
        with _keeping:
            done = [
                (key, _kept.pop(key))
                for key, live in list(_kept.items())
                if now - live.keptAt > STALE_SECONDS or key[0] in ended
            ]
        for key, live in done:
            _close(key, live)


def _ended(root: str, now: float) -> bool:
    """Return whether the job whose state directory is ``root`` ended (the directory went),
    asked no more often than its file system wants (``checkEvery``)."""
    files = filesAt(root)
    if now - _askedAt.get(root, -files.checkEvery) < files.checkEvery:
        return False
    _askedAt[root] = now
    try:
        return not files.exists()
    except Exception:  # a file system that does not answer now may later; the stale ones go anyway
        _log.debug("could not ask whether '%s' exists", root, exc_info=True)
        return False


def _close(key: LiveKey, live: LiveProcessor) -> None:
    """Close a kept processor this worker drops; what its ``close()`` raises is logged, as no
    job waits for it any more."""
    try:
        live.processor.close()
    except Exception:
        _log.warning("close() of vertex '%s' processor %d raised; it was dropped anyway", key[1], key[2], exc_info=True)
