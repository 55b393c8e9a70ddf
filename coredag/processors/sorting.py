"""Sorting a partition: the first step of a total sort.

Items with equal keys keep their arrival order, which depends on how the input was split and on
the shuffle: as in Jet, only a key without ties fixes one order at every parallelism. Ties are not
broken by the items' own order: comparing whole items wherever keys tie made a sort of a million
``(word, count)`` items by count 4 to 30 times slower, and fails for items without an order
(dicts); the key ``(key(item), item)`` asks for it where it is wanted.
"""

import itertools
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier, batched
from sparkjet.coredag.errors import UserFunctionError


def sortedItems(items: Iterable, keyFn: Callable | None, reverse: bool, stageName: str) -> list:
    """Return ``items`` sorted by ``keyFn``, naming the stage if the key or comparison fails."""
    try:
        return sorted(items, key=keyFn, reverse=reverse)
    except Exception as cause:
        raise UserFunctionError(stageName, "(one of the items being sorted)", cause) from cause


@attrs.frozen
class SortP(StandardProcessorSupplier):
    """Emits its partition's items sorted by ``keyFn`` (the items' own order if None); equal
    keys in arrival order."""

    keyFn: Callable | None
    reverse: bool
    stageName: str

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a function sorting all input batches into sorted output batches."""
        return self._sortBatches

    def _sortBatches(self, batches: Iterable[list]) -> Iterator[list]:
        everything = itertools.chain.from_iterable(batches)
        yield from batched(sortedItems(everything, self.keyFn, self.reverse, self.stageName))

    def __call__(self) -> "SortProcessor":
        return SortProcessor(self)


class SortProcessor(AbstractProcessor):
    """Collects every item, then emits them sorted from ``complete()``."""

    def __init__(self, supplier: SortP) -> None:
        self._supplier = supplier
        self._items: list = []
        self._output: Iterator | None = None

    def tryProcess0(self, item) -> bool:
        """Keep ``item``."""
        self._items.append(item)
        return True

    def complete(self) -> bool:
        """Emit the items in order; False while the outbox refuses."""
        if self._output is None:
            supplier = self._supplier
            self._output = iter(sortedItems(self._items, supplier.keyFn, supplier.reverse, supplier.stageName))
        return self.emitFromTraverser(self._output)
