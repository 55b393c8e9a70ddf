"""MurmurHash3 (x86, 32 bits): mmh3's C function where it loads, else the same hashes in pure Python."""

import struct

try:
    from mmh3 import hash as _mmh3Hash
except ImportError:  # a worker sparkjet was shipped to, where mmh3's C extension does not load
    _mmh3Hash = None

_MASK = 0xFFFFFFFF
_C1, _C2 = 0xCC9E2D51, 0x1B873593


def pythonMurmur3(data: bytes, seed: int = 0, signed: bool = True) -> int:
    """Return the MurmurHash3_x86_32 of ``data`` as ``mmh3.hash(data, seed, signed)`` does, in
    pure Python (about 8 times slower): for workers sparkjet was shipped to that cannot load mmh3."""
    h = seed & _MASK
    whole = len(data) & ~3
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        h ^= (k * _C2) & _MASK
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    if whole < len(data):
        k = (int.from_bytes(data[whole:], "little") * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        h ^= (k * _C2) & _MASK
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if signed and h >> 31 else h


murmur3 = pythonMurmur3 if _mmh3Hash is None else _mmh3Hash
"""``murmur3(data, seed, signed)``: the 32-bit MurmurHash3 of ``data``; mmh3's C function where
it loads, else ``pythonMurmur3`` (the same hashes). Called with positional arguments: the
fastest call of the C function."""
