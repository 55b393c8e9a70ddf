"""AggregateOperation: Jet's create / accumulate / combine / deduct / export / finish."""

from collections.abc import Callable

import attrs


def identity(value):
    """Return ``value`` unchanged."""
    return value


def zero() -> int:
    """Return 0: the accumulator of counting and summing before any item."""
    return 0


def increment(count: int, item: object) -> int:
    """Return ``count + 1``: counting's accumulate function (the fast path recognizes it)."""
    return count + 1


@attrs.frozen
class AggregateOperation:
    """How to aggregate items: an accumulator made by ``createFn`` and folded by the others.

    ``accumulateFn(acc, item)`` and ``combineFn(left, right)`` return the accumulator, so
    immutable values such as ints work; ``combineFn`` may mutate only its left argument.
    Without ``combineFn`` the planner aggregates in one stage. ``exportFn`` reads a result
    without consuming the accumulator; ``finishFn`` (``exportFn`` unless given) is the last
    call on it.
    """

    createFn: Callable[[], object]
    accumulateFn: Callable[[object, object], object]
    combineFn: Callable[[object, object], object] | None = None
    deductFn: Callable[[object, object], object] | None = None
    exportFn: Callable[[object], object] = identity
    finishFn: Callable[[object], object] = attrs.field(
        default=attrs.Factory(lambda self: self.exportFn, takes_self=True)
    )
