"""DefaultPartitioner: the same partition for a key in every process, whatever the hash seed."""

import pathlib
import subprocess
import sys
from collections import Counter

import pytest

from coredag import DagError, DefaultPartitioner, Partitioner

PROJECT = pathlib.Path(__file__).resolve().parents[2]
HASH_SEEDS = ("0", "1", "12345")
COUNTS = (2, 7, 271, 1 << 32)  # modulo 2**32 the partition is the whole 32-bit hash

KEYS = [
    "word",
    "",
    "héllo wörld €",
    b"bytes",
    b"",
    b"\x00\xff",
    0,
    -17,
    2**70,
    1.5,
    -0.25,
    float("inf"),
    True,
    False,
    None,
    ("a", 1),
    ("a", (b"b", (None, 2.5)), ()),
    (),
]

PARTITIONS_SCRIPT = """
import sys
from coredag.partitioner import DefaultPartitioner
keys = eval(sys.argv[1], {"inf": float("inf")})
counts = eval(sys.argv[2])
partitioner = DefaultPartitioner()
print([[partitioner.getPartition(key, count) for count in counts] for key in keys])
print(hash("word"))
"""


def runWithHashSeed(seed):
    """Return the partitions of KEYS and hash('word') in a process with PYTHONHASHSEED=seed."""
    result = subprocess.run(
        [sys.executable, "-c", PARTITIONS_SCRIPT, repr(KEYS), repr(COUNTS)],
        env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
        check=True,
    )
    partitions, pythonHash = result.stdout.splitlines()
    return partitions, pythonHash


@pytest.fixture(scope="module")
def perSeed():
    """The output of runWithHashSeed for every seed."""
    return {seed: runWithHashSeed(seed) for seed in HASH_SEEDS}


def test_the_processes_really_salt_pythons_hash(perSeed):
    assert len({pythonHash for _, pythonHash in perSeed.values()}) == len(HASH_SEEDS)


def test_same_key_same_partition_in_processes_with_different_hash_seeds(perSeed):
    assert len({partitions for partitions, _ in perSeed.values()}) == 1


def test_other_processes_agree_with_this_one(perSeed):
    partitioner = DefaultPartitioner()
    here = [[partitioner.getPartition(key, count) for count in COUNTS] for key in KEYS]
    assert perSeed["12345"][0] == repr(here)


def test_unequal_keys_get_different_hashes():
    hashes = {DefaultPartitioner().getPartition(key, 1 << 32) for key in KEYS}
    assert len(hashes) == len(set(KEYS)) == len(KEYS) - 1  # 0 == False


@pytest.mark.parametrize(
    "equalKeys",
    [
        (1, 1.0, True),
        (0, 0.0, -0.0, False),
        (2**70, float(2**70)),
        (("a", 1), ("a", 1.0), ("a", True)),
        (((1,), "x"), ((True,), "x"), ((1.0,), "x")),
    ],
    ids=repr,
)
def test_keys_equal_in_python_get_the_same_partition(equalKeys):
    assert len(set(equalKeys)) == 1
    partitioner = DefaultPartitioner()
    for count in (7, 271, 1 << 32):
        assert len({partitioner.getPartition(key, count) for key in equalKeys}) == 1


def test_str_key_with_lone_surrogate_gets_a_partition_without_crashing():
    # surrogateescape-decoded text (os.listdir of non-UTF-8 names) holds lone surrogates;
    # mmh3.hash(str) segfaults on them (mmh3 5.3.1), so this runs in a subprocess
    code = (
        "from coredag.partitioner import DefaultPartitioner\n"
        "key = bytes([120, 255]).decode('utf-8', 'surrogateescape')\n"
        "print(DefaultPartitioner().getPartition(key, 7))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-300:]
    assert int(result.stdout) in range(7)


class Custom:
    """A key type the default partitioner cannot encode."""


@pytest.mark.parametrize(
    ("key", "typeName"),
    [
        (frozenset({1}), "frozenset"),
        (Custom(), "Custom"),
        (["a"], "list"),
        (("ok", frozenset()), "frozenset"),
    ],
    ids=["frozenset", "custom object", "list", "frozenset inside a tuple"],
)
def test_unsupported_key_type_names_the_type_and_suggests_a_partitioner(key, typeName):
    with pytest.raises(DagError) as raised:
        DefaultPartitioner().getPartition(key, 4)
    message = str(raised.value)
    assert f"Cannot partition by a key of type '{typeName}'" in message
    assert "pass your own Partitioner" in message


@pytest.mark.parametrize("count", range(1, 8))
def test_partitions_are_in_range(count):
    partitioner = DefaultPartitioner()
    partitions = {partitioner.getPartition(key, count) for key in KEYS}
    partitions |= {partitioner.getPartition(f"key-{i}", count) for i in range(200)}
    assert partitions <= set(range(count))


@pytest.mark.parametrize("count", range(2, 8))
def test_string_keys_spread_over_every_partition(count):
    partitioner = DefaultPartitioner()
    sizes = Counter(partitioner.getPartition(f"key-{i}", count) for i in range(1000))
    assert set(sizes) == set(range(count))
    assert min(sizes.values()) > 1000 / count / 2


def test_default_partitioner_is_a_partitioner():
    assert isinstance(DefaultPartitioner(), Partitioner)
    assert DefaultPartitioner() == DefaultPartitioner()
