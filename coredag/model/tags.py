"""Jet's ``Tag`` and ``ItemsByTag``: which input or which operation a value belongs to."""

import functools
from collections.abc import Iterable, Iterator, Mapping

import attrs


@functools.total_ordering
@attrs.frozen(repr=False, order=False)
class Tag:
    """The tag of an input (``tag0()`` for the stage a builder starts from) or of a result."""

    index: int

    @staticmethod
    def tag(index: int) -> "Tag":
        """Return the tag of ``index``."""
        return Tag(index)

    @staticmethod
    def tag0() -> "Tag":
        """Return the tag of index 0."""
        return Tag(0)

    @staticmethod
    def tag1() -> "Tag":
        """Return the tag of index 1."""
        return Tag(1)

    @staticmethod
    def tag2() -> "Tag":
        """Return the tag of index 2."""
        return Tag(2)

    def __lt__(self, other: "Tag") -> bool:
        return self.index < other.index

    def __repr__(self) -> str:
        return f"Tag{self.index}"


class ItemsByTag(Mapping):
    """Values by their tags, as Jet's: ``get(tag)`` (or ``[tag]``) raises when a tag has none."""

    def __init__(self, pairs: Iterable[tuple[Tag, object]] = ()) -> None:
        self._values = dict(pairs)

    @staticmethod
    def itemsByTag(*tagsAndValues) -> "ItemsByTag":
        """Return ``ItemsByTag`` of alternating tags and values: ``itemsByTag(tag0, a, tag1, b)``."""
        if len(tagsAndValues) % 2:
            raise ValueError("itemsByTag takes tags and values in pairs")
        return ItemsByTag(zip(tagsAndValues[::2], tagsAndValues[1::2]))

    @staticmethod
    def ofResults(results: Iterable) -> "ItemsByTag":
        """Return the results tagged by their position: the first by ``tag0()``, and so on."""
        return ItemsByTag((Tag(index), value) for index, value in enumerate(results))

    def get(self, tag: Tag, *default):
        """Return the value of ``tag``; without one, ``default`` if given, else raise KeyError."""
        if tag in self._values:
            return self._values[tag]
        if default:
            return default[0]
        raise KeyError(f"No value associated with {tag!r}")

    __getitem__ = get

    def __iter__(self) -> Iterator[Tag]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ItemsByTag) and self._values == other._values

    def __hash__(self) -> int:
        return hash(frozenset(self._values.items()))

    def __repr__(self) -> str:
        return "ItemsByTag{" + ", ".join(f"{tag!r}={value!r}" for tag, value in self._values.items()) + "}"
