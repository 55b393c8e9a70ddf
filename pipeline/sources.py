"""Sources: where a pipeline's items come from."""

import os
from collections.abc import Iterable

import attrs

from pipeline.functions import checkPicklable


@attrs.frozen
class BatchSource:
    """A finite source of items, named as Jet names it."""

    name: str


@attrs.frozen
class FilesSource(BatchSource):
    """The lines of the files in a directory that match a glob."""

    directory: str
    glob: str
    charset: str


@attrs.frozen
class ItemsSource(BatchSource):
    """Items given in the program."""

    items: tuple


class Sources:
    """Factories of batch sources."""

    @staticmethod
    def files(directory: str, glob: str = "*", charset: str = "utf-8") -> FilesSource:
        """Read the lines of the files in ``directory`` whose names match ``glob``."""
        return FilesSource(f"filesSource({os.path.join(directory, glob)})", directory, glob, charset)

    @staticmethod
    def items(items: Iterable) -> ItemsSource:
        """Emit the given items; they must be picklable."""
        values = tuple(items)
        checkPicklable(values, "items", "items")
        return ItemsSource("items", values)
