"""What a stream job's micro-batches keep for the next ones, each cache with one owner that
closes it: the micro-batch loop its run's, the stream job its own."""

from collections.abc import Callable, Hashable
from typing import TypeVar

import attrs

Kept = TypeVar("Kept")


class Cache:
    """Values built once by key and kept until ``close()``, which releases each as its builder said."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, tuple[object, Callable[[object], None]]] = {}

    def get(self, key: Hashable, build: Callable[[], Kept], release: Callable[[Kept], None]) -> Kept:
        """Return the value kept under ``key``, built by ``build()`` the first time; ``close()``
        gives it to ``release``."""
        if key not in self._kept:
            self._kept[key] = (build(), release)
        return self._kept[key][0]

    def close(self) -> None:
        """Release every value kept, and keep none."""
        kept, self._kept = self._kept, {}
        for value, release in kept.values():
            release(value)


@attrs.frozen
class StreamCaches:
    """The caches a stream job's micro-batch runs with: ``staticOutputs``, the outputs of the
    vertices no stream reaches (its run's: the micro-batch loop closes it as the run ends), and
    ``homes``, where each shuffled vertex's partitions live (the job's, kept across its runs)."""

    staticOutputs: Cache = attrs.Factory(Cache)
    homes: Cache = attrs.Factory(Cache)
