"""ComparatorEx: Jet's picklable comparators, for ``sort`` and whoever orders items by comparison.

A comparator is a function ``compare(a, b)`` returning a negative number, zero or a positive
number as ``a`` sorts before, with or after ``b``. Python sorts by keys; ``functools.cmp_to_key``
bridges the two but its result cannot be pickled, so Spark could not ship it. These comparators
are frozen values that pickle, compose as Jet's do (``reversed``, ``thenComparing``,
``nullsFirst``...), and tell ``sort`` the plain key they amount to where there is one, so sorting
by ``comparing(keyFn)`` costs what sorting by ``keyFn`` does.
"""

import abc
import functools
from collections.abc import Callable

import attrs

SortKey = tuple[Callable | None, bool]
"""A key function (None: the items themselves) and whether to reverse: how ``sorted`` says it."""


class ComparatorEx(abc.ABC):
    """A comparison of two items, as Jet's ``ComparatorEx``: call it as ``compare(a, b)``."""

    @abc.abstractmethod
    def compare(self, a, b) -> int:
        """Return a negative number, zero or a positive number as ``a`` sorts before, with or after ``b``."""

    def __call__(self, a, b) -> int:
        return self.compare(a, b)

    def sortKey(self) -> SortKey | None:
        """Return the key and direction sorting in this order, or None if only comparing does."""
        return None

    def reversed(self) -> "ComparatorEx":
        """Return the opposite order."""
        return _Reversed(self)

    def thenComparing(self, other: "Callable | ComparatorEx", keyComparator: Callable | None = None) -> "ComparatorEx":
        """Return this order, ties broken by ``other``: a comparator, or a key function (compared
        by ``keyComparator``, or naturally)."""
        if not isinstance(other, ComparatorEx):
            other = ComparatorEx.comparing(other, keyComparator)
        return _ThenComparing(self, other)

    @staticmethod
    def of(compareFn: Callable) -> "ComparatorEx":
        """Return the comparator calling ``compareFn(a, b)``, a plain comparison function."""
        return compareFn if isinstance(compareFn, ComparatorEx) else _Function(compareFn)

    @staticmethod
    def naturalOrder() -> "ComparatorEx":
        """Return the items' own order (``<``)."""
        return _NATURAL

    @staticmethod
    def reverseOrder() -> "ComparatorEx":
        """Return the opposite of the items' own order."""
        return _REVERSE

    @staticmethod
    def comparing(keyFn: Callable, keyComparator: Callable | None = None) -> "ComparatorEx":
        """Return the order of ``keyFn(item)``: natural, or by ``keyComparator``."""
        return _Comparing(keyFn, None if keyComparator is None else ComparatorEx.of(keyComparator))

    @staticmethod
    def nullsFirst(comparator: Callable) -> "ComparatorEx":
        """Return ``comparator``'s order with None before every other item."""
        return _NullsFirst(ComparatorEx.of(comparator), nullsFirst=True)

    @staticmethod
    def nullsLast(comparator: Callable) -> "ComparatorEx":
        """Return ``comparator``'s order with None after every other item."""
        return _NullsFirst(ComparatorEx.of(comparator), nullsFirst=False)


def _naturally(a, b) -> int:
    return (a > b) - (a < b)


@attrs.frozen
class _Natural(ComparatorEx):
    reverse: bool

    def compare(self, a, b) -> int:
        return _naturally(b, a) if self.reverse else _naturally(a, b)

    def sortKey(self) -> SortKey:
        return None, self.reverse

    def reversed(self) -> ComparatorEx:
        return _Natural(not self.reverse)


_NATURAL, _REVERSE = _Natural(False), _Natural(True)


@attrs.frozen
class _Function(ComparatorEx):
    compareFn: Callable

    def compare(self, a, b) -> int:
        return self.compareFn(a, b)


@attrs.frozen
class _Reversed(ComparatorEx):
    comparator: ComparatorEx

    def compare(self, a, b) -> int:
        return self.comparator.compare(b, a)

    def sortKey(self) -> SortKey | None:
        inner = self.comparator.sortKey()
        return None if inner is None else (inner[0], not inner[1])

    def reversed(self) -> ComparatorEx:
        return self.comparator


@attrs.frozen
class _Comparing(ComparatorEx):
    keyFn: Callable
    keyComparator: ComparatorEx | None

    def compare(self, a, b) -> int:
        keyA, keyB = self.keyFn(a), self.keyFn(b)
        return _naturally(keyA, keyB) if self.keyComparator is None else self.keyComparator.compare(keyA, keyB)

    def sortKey(self) -> SortKey | None:
        if self.keyComparator is None:
            return self.keyFn, False
        inner = self.keyComparator.sortKey()
        if inner is None or inner[0] is not None:
            return None
        return self.keyFn, inner[1]


@attrs.frozen
class _ThenComparing(ComparatorEx):
    first: ComparatorEx
    then: ComparatorEx

    def compare(self, a, b) -> int:
        return self.first.compare(a, b) or self.then.compare(a, b)


@attrs.frozen
class _NullsFirst(ComparatorEx):
    comparator: ComparatorEx
    nullsFirst: bool

    def compare(self, a, b) -> int:
        if a is None or b is None:
            order = (a is not None) - (b is not None)
            return order if self.nullsFirst else -order
        return self.comparator.compare(a, b)


@attrs.frozen
class ComparatorKey:
    """The sort key of items ordered by ``comparator``: ``functools.cmp_to_key``, but picklable."""

    comparator: Callable

    def __call__(self, item):
        return functools.cmp_to_key(self.comparator)(item)


def sortKeyOf(comparator: Callable) -> SortKey:
    """Return the key and direction sorting items in ``comparator``'s order."""
    comparator = ComparatorEx.of(comparator)
    return comparator.sortKey() or (ComparatorKey(comparator), False)
