"""Where a stream processor's saved state lives: state files its own task writes under the
checkpoint's ``state`` directory, one version per micro-batch (a base of every entry or a delta
of the changes), read back by the next task of that processor; the driver only ever sees their
names (in ``ProcessorState``). When a base is written again: docs/internals/stream-state.md.
No pyspark here."""

import contextlib
import pickle
import uuid
from collections.abc import Hashable, Iterable

import attrs

from sparkjet.coredag.api.saves_changes import Removed
from sparkjet.coredag.errors import JobError
from sparkjet.coredag.model.broadcast_key import BroadcastKey
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.files import filesAt, withoutPassword
from sparkjet.coredag.runtime.processor_state import ProcessorState, RestoredShare, partitionKeyOf
from sparkjet.coredag.runtime.stream.state_directory import directoryName

COMPACT_EVERY = 10
"""How many versions a chain of files holds at most where the deltas are found by comparison."""
LONGEST_CHAIN = 100
"""How many versions a chain of files holds at most where the processor gives its deltas."""
SAVING = "A task saving its processor's state"


class MissingStateError(JobError):
    """A state file the checkpoint names is gone."""


@attrs.frozen
class SavedEntries:
    """A processor's entries as last saved, by key, each value pickled: what the next delta is
    taken against. ``None`` where keys repeat or cannot be hashed: then every version is a base."""

    byKey: dict | None

    @classmethod
    def of(cls, entries: Iterable[tuple]) -> "SavedEntries":
        """Return the entries ``entries`` by key (None where that loses or cannot hold one)."""
        byKey: dict = {}
        try:
            for key, value in entries:
                if key in byKey:
                    return cls(None)
                byKey[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except TypeError:
            return cls(None)
        return cls(byKey)


@attrs.frozen
class SavedVersion:
    """What one task saved: its chain of state files (a base, then deltas), the bytes it wrote,
    its entries as saved (for the next delta) and its own token (``savedBy``)."""

    files: tuple[str, ...]
    size: int
    entries: SavedEntries
    savedBy: str


@attrs.frozen
class StateStore:
    """The state files of one stream job under ``root`` (a local directory, as the tasks see it,
    or a URL), for micro-batch ``version``."""

    root: str
    version: int

    def load(self, restored: ProcessorState | RestoredShare) -> list[tuple]:
        """Return the entries a processor restores: the state it saved (its base with its deltas
        applied) or, as a ``RestoredShare``, its share of those another number of processors
        saved, as Jet restores a snapshot: every ``BroadcastKey`` entry, and the entries whose
        key the vertex's partitioner sends to it."""
        if isinstance(restored, ProcessorState):
            return self._entriesOf(restored)
        entries = (entry for state in restored.saved for entry in self._entriesOf(state))
        partitionOf, count, index = restored.partitioner.getPartition, restored.count, restored.index
        return [
            (key, value)
            for key, value in entries
            if isinstance(key, BroadcastKey) or partitionOf(partitionKeyOf(key), count) == index
        ]

    def extends(self, chain: tuple[str, ...]) -> bool:
        """Return whether the next version after the files ``chain`` may be a delta a processor
        gives: there is a base, and its deltas weigh less than it (else reading them back costs
        more than writing the base again)."""
        if not chain or len(chain) >= LONGEST_CHAIN:
            return False
        try:
            base, *deltas = (filesAt(self.root).size(name) for name in chain)
        except FileNotFoundError:  # restoring it says what is missing
            return False
        return sum(deltas) < base

    def changesOnly(self, chain: tuple[str, ...], savesChangesOnly: bool) -> bool:
        """Return whether the version after the files ``chain`` is a delta the processor gives:
        it ``savesChangesOnly`` (its ``Capabilities``) and the chain ``extends``; else it saves every entry."""
        return savesChangesOnly and self.extends(chain)

    def saveVersion(
        self, vertex: str, index: int, entries: list[tuple], changesOnly: bool, savesChangesOnly: bool,
        last: SavedEntries | None, chain: tuple[str, ...],
    ) -> SavedVersion:
        """Write what processor ``index`` of ``vertex`` saved after the version whose files are
        ``chain``: the delta it gave where it saved ``changesOnly``, else its entries, compared
        with ``last`` unless it ``savesChangesOnly`` (its next versions are deltas it gives)."""
        if changesOnly:
            return self.saveChanges(vertex, index, entries, chain)
        return self.save(vertex, index, entries, last, chain, not savesChangesOnly)

    def saveChanges(self, vertex: str, index: int, changes: list[tuple], chain: tuple[str, ...]) -> SavedVersion:
        """Write the delta processor ``index`` of ``vertex`` gave (``(key, REMOVED)`` for a removed
        key) after the version whose files are ``chain``."""
        savedBy = f"{self.version}-{uuid.uuid4().hex}"
        if not changes:
            return SavedVersion(chain, 0, SavedEntries(None), savedBy)
        changed = [(key, value) for key, value in changes if not isinstance(value, Removed)]
        removed = [key for key, value in changes if isinstance(value, Removed)]
        name, size = self._writeVersion(vertex, index, savedBy, "delta", (changed, removed))
        return SavedVersion((*chain, name), size, SavedEntries(None), savedBy)

    def save(
        self, vertex: str, index: int, entries: list[tuple], last: SavedEntries | None, chain: tuple[str, ...],
        comparing: bool = True,
    ) -> SavedVersion:
        """Write processor ``index`` of ``vertex``'s entries of this version: a delta against
        ``last`` (the entries of the version whose files are ``chain``) where it can, else a base;
        not ``comparing`` (its next versions are deltas it gives), a base without noting ``last``."""
        current = SavedEntries.of(entries) if comparing else SavedEntries(None)
        savedBy = f"{self.version}-{uuid.uuid4().hex}"
        if not entries:
            return SavedVersion((), 0, current, savedBy)
        compact = last is None or last.byKey is None or current.byKey is None or len(chain) >= COMPACT_EVERY
        if compact:
            kind, payload = "base", entries
        else:
            changed = [(key, value) for key, value in entries if last.byKey.get(key) != current.byKey[key]]
            removed = [key for key in last.byKey if key not in current.byKey]
            kind, payload = "delta", (changed, removed)
        name, size = self._writeVersion(vertex, index, savedBy, kind, payload)
        return SavedVersion((name,) if compact else (*chain, name), size, current, savedBy)

    def _writeVersion(self, vertex: str, index: int, savedBy: str, kind: str, payload: object) -> tuple[str, int]:
        """Write one version's file; return its name and size."""
        name = stateFileName(vertex, index, savedBy, kind)
        return name, self._write(name, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))

    def changesIn(self, deltas: tuple[str, ...]) -> tuple[dict, set]:
        """Return what the delta files ``deltas`` change, applied in turn: the entries changed
        (each key's last value) and the keys removed."""
        changed: dict[Hashable, object] = {}
        removed: set = set()
        for delta in deltas:
            entries, keys = self._read(delta)
            for key in keys:
                changed.pop(key, None)
                removed.add(key)
            for key, value in entries:
                removed.discard(key)
                changed[key] = value
        return changed, removed

    def _entriesOf(self, state: ProcessorState) -> list[tuple]:
        """Return the entries of one saved state: its base, then each delta applied in turn."""
        if not state.files:
            return []
        base, *deltas = state.files
        entries = self._read(base)
        if not deltas:
            return entries
        byKey: dict[Hashable, object] = dict(entries)
        changed, removed = self.changesIn(tuple(deltas))
        for key in removed:
            byKey.pop(key, None)
        byKey.update(changed)
        return list(byKey.items())

    def _read(self, name: str):
        """Return the entries of base ``name``, or what delta ``name`` changes (entries, removed keys)."""
        try:
            data = filesAt(self.root).read(name)
        except FileNotFoundError:
            raise MissingStateError(
                f"The state file '{filesAt(self.root).where(name)}' is missing: the checkpoint was changed from "
                "outside, or its directory is not shared with every executor (on a cluster, keep the checkpoint "
                "where every machine sees the same files: a Hadoop URL, or a file system every machine mounts)"
            ) from None
        try:
            payload = pickle.loads(data)
        except Exception as error:
            raise brokenState(self.root, name, f"{type(error).__name__}: {error}; {len(data)} bytes") from None
        isDelta = name.endswith(".delta")
        if not (_isDelta(payload) if isDelta else _isEntries(payload)):
            what = "entries changed and keys removed" if isDelta else "a list of (key, value) entries"
            raise brokenState(self.root, name, f"it holds a {type(payload).__name__}, not {what}")
        return payload

    def _write(self, name: str, data: bytes) -> int:
        """Write ``data`` as file ``name``, whole or absent."""
        filesAt(self.root).write(name, data, SAVING)
        return len(data)


def brokenState(root: str, name: str, wrong: str) -> CheckpointError:
    """Return the error for state file ``name`` under ``root`` that cannot be read, ``wrong`` saying why."""
    checkpoint = withoutPassword(root.rstrip("/").rsplit("/", 1)[0])
    return CheckpointError(
        f"The state file '{filesAt(root).where(name)}' cannot be read ({wrong}): it was cut short or changed from "
        f"outside; restore it, or remove the checkpoint '{checkpoint}' to start the job over, empty: that loses the "
        "job's state and where it was in its sources"
    )


def _isEntries(payload: object) -> bool:
    return isinstance(payload, list) and all(isinstance(entry, tuple) and len(entry) == 2 for entry in payload)


def _isDelta(payload: object) -> bool:
    return (
        type(payload) is tuple and len(payload) == 2 and _isEntries(payload[0]) and isinstance(payload[1], list)
    )


def referencedFiles(states: dict) -> set[str]:
    """Return the state files that ``states`` (by vertex, by index) name."""
    return {name for byIndex in states.values() for state in byIndex.values() for name in state.files}


def stateFileName(vertex: str, index: int, savedBy: str, kind: str) -> str:
    """Return the name of the ``kind`` file (base or delta) that processor ``index`` of ``vertex``
    saved as ``savedBy``: ``<vertex>/<index>/<savedBy>.<kind>``, the layout ``removeStateFiles`` lists."""
    return f"{directoryName(vertex)}/{index}/{savedBy}.{kind}"


def removeStateFiles(root: str, keeping: set[str]) -> None:
    """Remove the state files under ``root`` but those ``keeping`` names (see ``stateFileName``)."""
    files = filesAt(root)
    for vertex in files.names():
        for index in files.names(vertex):
            for version in files.names(f"{vertex}/{index}"):
                if f"{vertex}/{index}/{version}" not in keeping:
                    with contextlib.suppress(FileNotFoundError):
                        files.remove(f"{vertex}/{index}/{version}")
