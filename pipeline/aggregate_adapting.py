"""The aggregate operations made of another or of functions: one aggregating each item mapped,
filtered or flat-mapped first, and a reduction."""

import functools
from collections.abc import Callable

import attrs

from sparkjet.coredag.model.aggregate_operation import AggregateOperation, identity


def _accumulateMapped(mapFn: Callable, accumulateFn: Callable, acc: object, item: object):
    mapped = mapFn(item)
    return acc if mapped is None else accumulateFn(acc, mapped)


def _accumulateIf(predicate: Callable, accumulateFn: Callable, acc: object, item: object):
    return accumulateFn(acc, item) if predicate(item) else acc


def _accumulateEach(flatMapFn: Callable, accumulateFn: Callable, acc: object, item: object):
    for each in flatMapFn(item):
        acc = accumulateFn(acc, each)
    return acc


def _reduceItem(toValueFn: Callable, combineFn: Callable, acc: object, item: object):
    return combineFn(acc, toValueFn(item))


def mapping(mapFn: Callable, downstream: AggregateOperation) -> AggregateOperation:
    """Aggregate ``mapFn(item)`` with ``downstream``; a None result skips the item."""
    return attrs.evolve(
        downstream,
        accumulateFn=functools.partial(_accumulateMapped, mapFn, downstream.accumulateFn),
    )


def filtering(predicate: Callable, downstream: AggregateOperation) -> AggregateOperation:
    """Aggregate with ``downstream`` only the items for which ``predicate`` is true."""
    return attrs.evolve(
        downstream,
        accumulateFn=functools.partial(_accumulateIf, predicate, downstream.accumulateFn),
    )


def flatMapping(flatMapFn: Callable, downstream: AggregateOperation) -> AggregateOperation:
    """Aggregate with ``downstream`` every value of the iterable ``flatMapFn(item)``."""
    return attrs.evolve(
        downstream,
        accumulateFn=functools.partial(_accumulateEach, flatMapFn, downstream.accumulateFn),
    )


def reducing(
    emptyAccValue: object,
    toValueFn: Callable,
    combineFn: Callable,
    deductFn: Callable | None = None,
) -> AggregateOperation:
    """Fold ``toValueFn(item)`` into ``emptyAccValue`` with the associative ``combineFn``."""
    return AggregateOperation(
        createFn=functools.partial(identity, emptyAccValue),
        accumulateFn=functools.partial(_reduceItem, toValueFn, combineFn),
        combineFn=combineFn,
        deductFn=deductFn,
    )
