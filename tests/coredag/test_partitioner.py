"""DefaultPartitioner: the same partition for a key in every process, whatever the hash seed."""

import subprocess
import sys
import zoneinfo
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum
from fractions import Fraction

import pytest

from sparkjet.coredag import DagError, DefaultPartitioner, Partitioner
from tests.conftest import PROJECT
from tests.keys import Blob, Colour, Level, Mood, Perm, Point, Tag, Worker

HASH_SEEDS = ("0", "1", "12345")
COUNTS = (2, 7, 271, 1 << 32)  # modulo 2**32 the partition is the whole 32-bit hash



class Paint(Enum):
    """Another plain Enum with a member of the same name and value as Colour's."""

    RED = "red"


UTC, PLUS_ONE = timezone.utc, timezone(timedelta(hours=1))

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
    date(2020, 1, 1),
    datetime(2020, 1, 1, 12),
    datetime(2020, 1, 1, 12, tzinfo=UTC),
    time(12),
    time(12, tzinfo=UTC),
    timedelta(days=1, microseconds=5),
    Decimal("0.1"),
    Fraction(1, 3),
    complex(1, 2),
    frozenset({"alpha", "beta", "gamma", "delta", 7}),  # iterated in an order PYTHONHASHSEED sets
    frozenset(),
    Level.HIGH,
    Colour.RED,
    Colour.BLUE,
    Paint.RED,
    Perm.READ | Perm.WRITE,
    2**20000,  # more digits than str(int) may write
]

def runWithHashSeed(seed):
    """Return the partitions of KEYS and hash('word') in a process with PYTHONHASHSEED=seed."""
    worker = Worker(seed, COUNTS)
    try:
        return repr(worker.partitions(KEYS)), worker.pythonHash
    finally:
        worker.close()


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


def newYork() -> zoneinfo.ZoneInfo:
    """The zone of America/New_York, or a skip where the machine has no time zone data."""
    try:
        return zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone data for America/New_York")


EQUAL_KEYS = {
    "bools, ints and floats": (1, 1.0, True),
    "zeros": (0, 0.0, -0.0, False, Decimal("-0"), Fraction(0), complex(0, 0)),
    "a big int and its float": (2**70, float(2**70)),
    "2 as every number type": (2, 2.0, Decimal("2.000"), Fraction(4, 2), Level.HIGH, complex(2, -0.0)),
    "a half": (0.5, Decimal("0.5"), Fraction(1, 2), complex(0.5, 0)),
    "a tenth, not the float 0.1": (Decimal("0.1"), Decimal("0.10"), Fraction(1, 10)),
    "the float 0.1": (0.1, Decimal(0.1), Fraction(0.1)),
    "a third": (Fraction(1, 3), Fraction(2, 6)),
    "infinities": (float("inf"), Decimal("Infinity")),
    "an int of 5000 digits": (10**5000, Decimal("1e5000"), Fraction(10**5000)),
    "a tiny rational": (Fraction(1, 10**400), Decimal("1e-400")),
    "tuples": (("a", 1), ("a", 1.0), ("a", True), Point("a", Decimal(1))),
    "nested tuples": (((1,), "x"), ((True,), "x"), ((1.0,), "x"), ((Fraction(1),), Tag("x"))),
    "one instant in three zones": (
        datetime(2020, 1, 1, 12, tzinfo=UTC),
        datetime(2020, 1, 1, 13, tzinfo=PLUS_ONE),
        datetime(2020, 1, 1, 7, tzinfo=timezone(timedelta(hours=-5))),
    ),
    "naive datetimes, fold ignored": (datetime(2020, 11, 1, 1, 30), datetime(2020, 11, 1, 1, 30, fold=1)),
    "one time of day in two zones": (time(12, tzinfo=UTC), time(13, tzinfo=PLUS_ONE)),
    "timedeltas": (timedelta(days=1), timedelta(hours=24), timedelta(seconds=86400)),
    "frozensets": (frozenset({1, "a"}), frozenset({1.0, Tag("a")}), frozenset({True, "a"})),
    "str subclasses and str enums": ("happy", Tag("happy"), Mood.HAPPY),
    "bytes subclasses": (b"x", Blob(b"x")),
    "namedtuples": ((1, "a"), Point(1, "a"), Point(True, Tag("a"))),
    "flags": (Perm.READ | Perm.WRITE, Perm.WRITE | Perm.READ),
}
"""Groups of keys equal in Python, as dict keys: each group must go to one partition."""


@pytest.mark.parametrize("equalKeys", EQUAL_KEYS.values(), ids=EQUAL_KEYS.keys())
def test_keys_equal_in_python_get_the_same_partition(equalKeys):
    assert len(set(equalKeys)) == 1
    partitioner = DefaultPartitioner()
    for count in (7, 271, 1 << 32):
        assert len({partitioner.getPartition(key, count) for key in equalKeys}) == 1


def test_one_datetime_at_either_fold_in_its_own_zone_gets_one_partition():
    first = datetime(2020, 11, 1, 1, 30, tzinfo=newYork())
    second = first.replace(fold=1)
    assert first == second and first.utcoffset() != second.utcoffset()
    assert DefaultPartitioner().getPartition(first, 1 << 32) == DefaultPartitioner().getPartition(second, 1 << 32)


UNEQUAL_KEYS = {
    "a decimal tenth and the float 0.1": (Decimal("0.1"), 0.1),
    "a date and its midnight": (date(2020, 1, 1), datetime(2020, 1, 1)),
    "a naive and an aware datetime": (datetime(2020, 1, 1, 12), datetime(2020, 1, 1, 12, tzinfo=UTC)),
    "one wall time in two zones": (datetime(2020, 1, 1, 12, tzinfo=UTC), datetime(2020, 1, 1, 12, tzinfo=PLUS_ONE)),
    "a naive and an aware time": (time(12), time(12, tzinfo=UTC)),
    "an enum member and its value": (Colour.RED, "red"),
    "members of one name in two enums": (Colour.RED, Paint.RED),
    "a frozenset and a tuple": (frozenset({1}), (1,)),
    "an empty frozenset and tuple": (frozenset(), ()),
    "a complex and a tuple": (complex(1, 2), (1.0, 2.0)),
    "a timedelta and its microseconds": (timedelta(seconds=1), 1_000_000),
    "a str and its bytes": ("x", b"x"),
}


@pytest.mark.parametrize("unequalKeys", UNEQUAL_KEYS.values(), ids=UNEQUAL_KEYS.keys())
def test_keys_unequal_in_python_get_different_hashes(unequalKeys):
    assert len(set(unequalKeys)) == len(unequalKeys)
    hashes = {DefaultPartitioner().getPartition(key, 1 << 32) for key in unequalKeys}
    assert len(hashes) == len(unequalKeys)


@pytest.mark.parametrize("nan", [float("nan"), Decimal("NaN"), complex(float("nan"), 1)], ids=repr)
def test_a_nan_key_gets_one_partition(nan):
    partitioner = DefaultPartitioner()
    assert len({partitioner.getPartition(nan, 7) for _ in range(3)}) == 1


def test_str_key_with_lone_surrogate_gets_a_partition_without_crashing():
    # surrogateescape-decoded text (os.listdir of non-UTF-8 names) holds lone surrogates;
    # mmh3.hash(str) segfaults on them (mmh3 5.3.1), so this runs in a subprocess
    code = (
        "from sparkjet.coredag.model.partitioner import DefaultPartitioner\n"
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


HOW_TO_FIX = (
    "the default partitioner sends keys equal in Python to the same partition in every process, "
    "so it takes only None, bool, int, float, complex, Decimal, Fraction, str, bytes, date, "
    "datetime, time, timedelta, enum members, and tuples and frozensets of them (subclasses "
    "too). Make the key function return one of these, for example a tuple of the object's "
    "fields; a Core DAG edge can take its own Partitioner instead: Edge.partitioned(keyFn, "
    "partitioner)"
)


@pytest.mark.parametrize(
    ("key", "received"),
    [
        (Custom(), "a key of type 'Custom'"),
        (["a"], "a key of type 'list'"),
        (("ok", (1, Custom())), "a key of type 'tuple' holding a value of type 'Custom'"),
        (frozenset({Custom()}), "a key of type 'frozenset' holding a value of type 'Custom'"),
    ],
    ids=["custom object", "list", "custom object inside a tuple", "custom object inside a frozenset"],
)
def test_unsupported_key_type_names_the_type_and_says_what_the_key_function_can_return(key, received):
    with pytest.raises(DagError) as raised:
        DefaultPartitioner().getPartition(key, 4)
    assert str(raised.value) == f"Cannot partition by {received}: {HOW_TO_FIX}"


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
