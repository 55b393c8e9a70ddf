"""Hash join: collectors build lookup tables, the joiner enriches each primary item."""

import itertools
import pickle
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor
from sparkjet.coredag.errors import JobError, UserFunctionError, describeStage, shorten
from sparkjet.coredag.model.tags import ItemsByTag
from sparkjet.coredag.processors.aggregation import FoldingSupplier

BROADCAST_LIMIT = 512 << 20
"""The default most bytes, pickled, that one joined side of a hash join may hold: every joiner
keeps a copy of every side in its Python worker's memory (``JoinClause.withBroadcastLimit``)."""


@attrs.define
class JoinSide:
    """A joined side being collected: its lookup table, its items and about how many bytes
    they pickle to."""

    table: dict = attrs.field(factory=dict)
    itemCount: int = 0
    pickledBytes: int = 0


@attrs.frozen
class HashJoinCollectP(FoldingSupplier):
    """Collects one side of a join into a dict ``key -> [projected items]`` and emits it; fails
    once the side's pickled size passes ``broadcastLimit``."""

    keyFn: Callable
    projectFn: Callable | None
    stageName: str
    sideName: str
    broadcastLimit: int = BROADCAST_LIMIT

    def initialState(self) -> JoinSide:
        """Return an empty side."""
        return JoinSide()

    def fold(self, items: Iterable, state: JoinSide) -> JoinSide:
        """Add each item to the list of its key; fail once the side is past the limit."""
        added = self.addTo(state.table, items)
        state.itemCount += len(added)
        state.pickledBytes += len(pickle.dumps(added, protocol=pickle.HIGHEST_PROTOCOL))
        if state.pickledBytes > self.broadcastLimit:
            raise JobError(self.overLimit(state))
        return state

    def addTo(self, table: dict, items: Iterable) -> list[tuple]:
        """Add each item, projected, to the list of its key; return the ``(key, value)`` added."""
        keyFn, project, added = self.keyFn, self.projectFn, []
        for item in items:
            try:
                key, value = keyFn(item), project(item) if project else item
                table.setdefault(key, []).append(value)
            except Exception as cause:
                raise UserFunctionError(self.stageName, shorten(item), cause) from cause
            added.append((key, value))
        return added

    def overLimit(self, state: JoinSide) -> str:
        """Return the error of a side past the broadcast limit: which side, its size, what to do."""
        stage = describeStage(self.stageName, getattr(self.stageName, "definedAt", None))
        return (
            f"{stage}: the joined stage '{self.sideName}' is too large to broadcast: its first "
            f"{state.itemCount} items pickle to {state.pickledBytes} bytes, over the limit of "
            f"{self.broadcastLimit} bytes (every joiner keeps a copy of it). Make the larger stage "
            "the primary one (the stage hashJoin is called on, which is streamed, not copied), "
            "filter it or keep only what the join needs (JoinClause.projecting) before the join, "
            "or raise the limit with JoinClause.withBroadcastLimit(bytes)"
        )

    def emit(self, state: JoinSide) -> Iterator:
        """Emit the table as one item."""
        return iter((state.table,))


_UNMATCHED = {False: (None,), True: ()}
"""What an outer and an inner side match when the table has no item of the key."""


@attrs.frozen
class HashJoinP:
    """Supplies joiners: tables arrive on ordinals 1..n first, primary items on ordinal 0."""

    leftKeyFns: tuple[Callable, ...]
    mapFn: Callable
    inner: tuple[bool, ...]
    matchesByTag: bool
    stageName: str

    def joined(self, item: object, tables: list[dict]) -> list:
        """Return ``mapFn`` of ``item`` with every combination of its matches; an outer side
        without a match gives None, an inner one drops the item."""
        try:
            matches = [
                table.get(keyFn(item), ()) or _UNMATCHED[inner]
                for keyFn, table, inner in zip(self.leftKeyFns, tables, self.inner)
            ]
            outputs = []
            for combination in itertools.product(*matches):
                output = (
                    self.mapFn(item, ItemsByTag.ofResults(combination))
                    if self.matchesByTag
                    else self.mapFn(item, *combination)
                )
                if output is not None:
                    outputs.append(output)
            return outputs
        except Exception as cause:
            raise UserFunctionError(self.stageName, shorten(item), cause) from cause

    def __call__(self) -> "HashJoinProcessor":
        return HashJoinProcessor(self)


class HashJoinProcessor(AbstractProcessor):
    """Keeps the tables of ordinals 1..n, then emits the joined primary items."""

    def __init__(self, supplier: HashJoinP) -> None:
        self._tables: list[dict] = [{} for _ in supplier.leftKeyFns]
        self._flatMapper = self.flatMapper(lambda item: supplier.joined(item, self._tables))

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Keep a table (ordinal >= 1) or join a primary item (ordinal 0)."""
        if ordinal is None:
            return True
        if ordinal == 0:
            return self._flatMapper.tryProcess(item)
        for key, matches in item.items():
            self._tables[ordinal - 1].setdefault(key, []).extend(matches)
        return True
