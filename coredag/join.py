"""Hash join: collectors build lookup tables, the joiner enriches each primary item."""

import itertools
from collections.abc import Callable, Iterable, Iterator

import attrs

from coredag.aggregation import FoldingSupplier
from coredag.errors import UserFunctionError, shorten
from coredag.processor import AbstractProcessor


@attrs.frozen
class HashJoinCollectP(FoldingSupplier):
    """Collects one side of a join into a dict ``key -> [projected items]`` and emits it."""

    keyFn: Callable
    projectFn: Callable | None
    stageName: str

    def initialState(self) -> dict:
        """Return an empty lookup table."""
        return {}

    def fold(self, items: Iterable, state: dict) -> dict:
        """Add each item to the list of its key."""
        keyFn, project = self.keyFn, self.projectFn
        for item in items:
            try:
                key = keyFn(item)
                state.setdefault(key, []).append(project(item) if project else item)
            except Exception as cause:
                raise UserFunctionError(self.stageName, shorten(item), cause) from cause
        return state

    def emit(self, state: dict) -> Iterator:
        """Emit the table as one item."""
        return iter((state,))


@attrs.frozen
class HashJoinP:
    """Supplies joiners: tables arrive on ordinals 1..n first, primary items on ordinal 0."""

    leftKeyFns: tuple[Callable, ...]
    mapFn: Callable
    inner: bool
    matchesByTag: bool
    stageName: str

    def joined(self, item: object, tables: list[dict]) -> list:
        """Return ``mapFn`` of ``item`` with every combination of its matches."""
        try:
            matches = [table.get(keyFn(item), ()) for keyFn, table in zip(self.leftKeyFns, tables)]
            if not self.inner:
                matches = [found or (None,) for found in matches]
            outputs = []
            for combination in itertools.product(*matches):
                output = (
                    self.mapFn(item, dict(enumerate(combination)))
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
