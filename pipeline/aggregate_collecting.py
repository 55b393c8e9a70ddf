"""The aggregate operations that collect the items: into a list, a set, a map, a collection of
your choice, groups by key, a sorted list or one string."""

import functools
from collections.abc import Callable

from sparkjet.coredag.errors import shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation, identity
from sparkjet.pipeline.errors import DuplicateKeyError


def _append(items: list, item: object) -> list:
    items.append(item)
    return items


def _extend(left: list, right: list) -> list:
    left.extend(right)
    return left


def _addToSet(items: set, item: object) -> set:
    items.add(item)
    return items


def _addAllToSet(left: set, right: set) -> set:
    left.update(right)
    return left


def _putValue(mergeFn: Callable | None, entries: dict, key: object, value: object) -> dict:
    if key not in entries:
        entries[key] = value
    elif mergeFn is None:
        raise DuplicateKeyError(
            f"toMap: duplicate key {shorten(key)} with the values {shorten(entries[key])} and "
            f"{shorten(value)}; expected each key once. Pass a mergeFn to combine the values "
            "of one key: toMap(keyFn, valueFn, mergeFn)"
        )
    else:
        entries[key] = mergeFn(entries[key], value)
    return entries


def _putItem(keyFn: Callable, valueFn: Callable, mergeFn: Callable | None, entries: dict, item):
    return _putValue(mergeFn, entries, keyFn(item), valueFn(item))


def _putAll(mergeFn: Callable | None, left: dict, right: dict) -> dict:
    for key, value in right.items():
        _putValue(mergeFn, left, key, value)
    return left


def _accumulateInGroup(keyFn: Callable, downstream: AggregateOperation, groups: dict, item) -> dict:
    key = keyFn(item)
    acc = groups[key] if key in groups else downstream.createFn()
    groups[key] = downstream.accumulateFn(acc, item)
    return groups


def _combineGroups(downstream: AggregateOperation, left: dict, right: dict) -> dict:
    """Combine each group of ``right`` into ``left``'s, into a new one where ``left`` has none."""
    for key, acc in right.items():
        mine = left[key] if key in left else downstream.createFn()
        left[key] = downstream.combineFn(mine, acc)
    return left


def _mapValues(fn: Callable, mapFactory: Callable, groups: dict) -> dict:
    """Return a new map of ``mapFactory`` holding ``fn`` of each group's accumulator."""
    result = mapFactory()
    for key, acc in groups.items():
        result[key] = fn(acc)
    return result


def _addToCollection(collection, item: object):
    """Add ``item`` as its collection adds: ``append`` (lists, deques) or ``add`` (sets)."""
    add = collection.append if hasattr(collection, "append") else collection.add
    add(item)
    return collection


def _addAllToCollection(left, right):
    for item in right:
        _addToCollection(left, item)
    return left


def _copiedCollection(collectionFactory: Callable, collection):
    return _addAllToCollection(collectionFactory(), collection)


def _sorted(keyFn: Callable | None, reverse: bool, items: list) -> list:
    return sorted(items, key=keyFn, reverse=reverse)


def _sortInPlace(keyFn: Callable | None, reverse: bool, items: list) -> list:
    items.sort(key=keyFn, reverse=reverse)
    return items


def _appendNonEmpty(parts: list, text: str) -> list:
    if text:
        parts.append(text)
    return parts


def _joined(delimiter: str, prefix: str, suffix: str, parts: list) -> str:
    return prefix + delimiter.join(parts) + suffix


def toList() -> AggregateOperation:
    """Collect the items into a list; [] for no items."""
    return AggregateOperation(
        createFn=list,
        accumulateFn=_append,
        combineFn=_extend,
        exportFn=list,
        finishFn=identity,
    )


def toSet() -> AggregateOperation:
    """Collect the items into a set; an empty set for no items."""
    return AggregateOperation(
        createFn=set,
        accumulateFn=_addToSet,
        combineFn=_addAllToSet,
        exportFn=set,
        finishFn=identity,
    )


def toMap(
    keyFn: Callable, valueFn: Callable, mergeFn: Callable | None = None, mapFactory: Callable = dict
) -> AggregateOperation:
    """Collect ``{keyFn(item): valueFn(item)}`` into a map ``mapFactory`` makes; ``mergeFn``
    merges the values of one key (without it, a duplicate key is an error)."""
    return AggregateOperation(
        createFn=mapFactory,
        accumulateFn=functools.partial(_putItem, keyFn, valueFn, mergeFn),
        combineFn=functools.partial(_putAll, mergeFn),
        exportFn=functools.partial(_mapValues, identity, mapFactory),
        finishFn=identity,
    )


def toCollection(collectionFactory: Callable) -> AggregateOperation:
    """Collect the items into a collection ``collectionFactory`` makes (``list``, ``set``,
    ``collections.deque``...), added with its ``append`` or ``add``."""
    return AggregateOperation(
        createFn=collectionFactory,
        accumulateFn=_addToCollection,
        combineFn=_addAllToCollection,
        exportFn=functools.partial(_copiedCollection, collectionFactory),
        finishFn=identity,
    )


def groupingBy(
    keyFn: Callable, downstream: AggregateOperation | None = None, mapFactory: Callable = dict
) -> AggregateOperation:
    """Map each ``keyFn(item)`` to its items aggregated by ``downstream`` (default toList),
    in a map ``mapFactory`` makes."""
    downstream = toList() if downstream is None else downstream
    combineFn = None
    if downstream.combineFn is not None:
        combineFn = functools.partial(_combineGroups, downstream)
    return AggregateOperation(
        createFn=mapFactory,
        accumulateFn=functools.partial(_accumulateInGroup, keyFn, downstream),
        combineFn=combineFn,
        exportFn=functools.partial(_mapValues, downstream.exportFn, mapFactory),
        finishFn=functools.partial(_mapValues, downstream.finishFn, mapFactory),
    )


def sorting(keyFn: Callable | None = None, reverse: bool = False) -> AggregateOperation:
    """List the items sorted as ``sorted(items, key=keyFn, reverse=reverse)``; [] for none."""
    return AggregateOperation(
        createFn=list,
        accumulateFn=_append,
        combineFn=_extend,
        exportFn=functools.partial(_sorted, keyFn, reverse),
        finishFn=functools.partial(_sortInPlace, keyFn, reverse),
    )


def concatenating(
    delimiter: str = "", prefix: str = "", suffix: str = ""
) -> AggregateOperation:
    """Join the non-empty string items with ``delimiter`` between ``prefix`` and ``suffix``."""
    return AggregateOperation(
        createFn=list,
        accumulateFn=_appendNonEmpty,
        combineFn=_extend,
        exportFn=functools.partial(_joined, delimiter, prefix, suffix),
    )
