"""Partitioners: which downstream processor owns a key."""

import abc
import struct

import attrs
import mmh3

from coredag.errors import DagError

_STR_SEED, _BYTES_SEED, _ENCODED_SEED = 0x5354, 0x4259, 0x454E


class Partitioner(abc.ABC):
    """Maps a partitioning key to a partition in ``range(partitionCount)``; must be picklable."""

    @abc.abstractmethod
    def getPartition(self, key: object, partitionCount: int) -> int:
        """Return the partition of ``key`` among ``partitionCount`` partitions."""


def _encode(key: object) -> bytes:
    """Encode a key so that keys equal in Python have equal bytes, in every process."""
    if key is None:
        return b"N"
    kind = type(key)
    if kind is int or kind is bool:
        return b"I%d" % key
    if kind is float:
        if key.is_integer():
            return b"I%d" % int(key)
        return b"F" + struct.pack(">d", key)
    if kind is str:
        return b"S" + key.encode("utf-8", "surrogatepass")
    if kind is bytes:
        return b"B" + key
    if kind is tuple:
        parts = [_encode(element) for element in key]
        return b"T%d:" % len(parts) + b"".join(b"%d:" % len(part) + part for part in parts)
    raise DagError(
        f"Cannot partition by a key of type '{kind.__qualname__}': the default partitioner "
        "encodes only str, bytes, int, float, bool, None and tuples of them the same way in "
        "every process. Use a key of those types or pass your own Partitioner to partitioned()"
    )


def keyHash(key: object) -> int:
    """Return the unsigned 32-bit MurmurHash3 of ``key``, the same whatever PYTHONHASHSEED is."""
    kind = type(key)
    if kind is str:
        return mmh3.hash(key.encode("utf-8", "surrogatepass"), _STR_SEED, signed=False)
    if kind is bytes:
        return mmh3.hash(key, _BYTES_SEED, signed=False)
    return mmh3.hash(_encode(key), _ENCODED_SEED, signed=False)


@attrs.frozen
class DefaultPartitioner(Partitioner):
    """MurmurHash3 over a canonical byte encoding of the key, modulo the partition count."""

    def getPartition(self, key: object, partitionCount: int) -> int:
        """Return ``keyHash(key) % partitionCount``."""
        return keyHash(key) % partitionCount
