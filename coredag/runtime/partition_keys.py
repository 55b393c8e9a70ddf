"""Partition keys: the INT values that Spark's hash partitioning sends to a chosen partition.

``DataFrame.repartition(n, col)`` puts a row in partition ``pmod(murmur3(col, seed 42), n)``
(Spark's ``HashPartitioning``, whose Murmur3 hashes an INT as its 4 bytes, little-endian). A
job routing an item to processor ``t`` writes ``partitionKeys(n)[t]`` beside it, so that the
shuffle delivers it exactly where Jet's partitioner said. Pure: no Spark."""

import functools

SPARK_HASH_SEED = 42
"""The seed of Spark's ``Murmur3Hash`` in hash partitioning."""

_MASK = 0xFFFFFFFF


def murmur3Int(value: int, seed: int = SPARK_HASH_SEED) -> int:
    """Return Spark's ``Murmur3_x86_32.hashInt(value, seed)``, as a signed 32-bit int."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = ((k1 << 15) | (k1 >> 17)) & _MASK
    k1 = k1 * 0x1B873593 & _MASK
    h1 = (seed & _MASK) ^ k1
    h1 = ((h1 << 13) | (h1 >> 19)) & _MASK
    h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def sparkPartition(value: int, count: int) -> int:
    """Return the partition of ``count`` that ``repartition(count, col)`` gives the INT ``value``."""
    return murmur3Int(value) % count


@functools.lru_cache(maxsize=64)
def partitionKeys(count: int) -> tuple[int, ...]:
    """Return, for each partition of ``count``, the smallest non-negative INT that hash
    partitioning sends there."""
    keys: dict[int, int] = {}
    value = 0
    while len(keys) < count:
        keys.setdefault(sparkPartition(value, count), value)
        value += 1
    return tuple(keys[partition] for partition in range(count))
