"""The pure-Python MurmurHash3 of workers that cannot load mmh3 hashes exactly as mmh3 does."""

import random

import mmh3
import pytest

from sparkjet.coredag.model import partitioner
from sparkjet.coredag.model.murmur3 import pythonMurmur3
from sparkjet.coredag.model.partitioner import DefaultPartitioner, keyHash
from tests.keys import Colour, Point

SEEDS = (0, 1, 0x5354, 0x4259, 0x454E, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


def test_every_byte_length_up_to_300_hashes_as_mmh3_with_every_seed():
    generator = random.Random(13)
    for length in range(300):
        for seed in SEEDS:
            data = generator.randbytes(length)
            assert pythonMurmur3(data, seed, False) == mmh3.hash(data, seed, signed=False), (length, seed)
            assert pythonMurmur3(data, seed) == mmh3.hash(data, seed), (length, seed)


def test_many_random_keys_hash_as_mmh3():
    generator = random.Random(8)
    for _ in range(20000):
        data = generator.randbytes(generator.randrange(40))
        seed = generator.randrange(1 << 32)
        assert pythonMurmur3(data, seed, False) == mmh3.hash(data, seed, signed=False)


KEYS = ["word", "", "héllo wörld €", b"\x00\xff", 0, -17, 2**70, 1.5, None, (1, "a"), frozenset({2, 3}),
        Colour.RED, Point(1, 2)]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_keys_get_the_same_partition_without_mmh3(monkeypatch, key):
    withC = keyHash(key)
    monkeypatch.setattr(partitioner, "murmur3", pythonMurmur3)
    assert keyHash(key) == withC
    assert DefaultPartitioner().getPartition(key, 271) == withC % 271
