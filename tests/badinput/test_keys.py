"""Keys that are not what a pipeline expects: None, of every type Python can hash, unhashable,
a key function that raises."""

import os
import pickle
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from fractions import Fraction

import pytest

from sparkjet.coredag import AbstractProcessor, UserFunctionError
from sparkjet.coredag.runtime.execution import SMALL_JOB_BYTES
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources
from tests.conftest import here
from tests.keys import Blob, Colour, Level, Mood, Perm, Point, Tag

pytestmark = pytest.mark.spark
THIS_FILE = os.path.basename(__file__)
WORDS = ["to", "be", "or", "not", "to", "be"]


def first(pair: tuple):
    return pair[0]


def test_none_keys_are_grouped_like_any_other_key_across_a_shuffle(jet):
    items = [(None if n % 3 == 0 else f"k{n % 5}", n) for n in range(300)]
    p = Pipeline.create()
    source = p.readFrom(Sources.items(items)).setLocalParallelism(2)
    counts = source.groupingKey(first).aggregate(AggregateOperations.counting()).setLocalParallelism(2)
    counts.writeTo(Sinks.list("counts"))
    source.groupingKey(first).distinct().setLocalParallelism(2).writeTo(Sinks.list("distinct"))
    job = jet.newJob(p)
    job.join()
    expected = Counter(key for key, _ in items)
    assert dict(jet.getList("counts")) == expected
    assert Counter(map(first, jet.getList("distinct"))) == Counter(expected.keys())
    assert job.metrics().edge("group-and-aggregate-prepare", "group-and-aggregate").shuffleBytes > 0


def test_an_unhashable_key_names_the_stage_and_the_keys_type_and_leaves_no_output(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(WORDS)).groupingKey(list)
    keyed.aggregate(AggregateOperations.counting()).writeTo(Sinks.files(str(output)))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'group-and-aggregate' (defined at {THIS_FILE}:{line}) failed on item 'to': TypeError: "
        "unhashable type: 'list'; a key must be hashable (a str, a number, a tuple...)"
    )
    assert not output.exists()


def test_an_unhashable_key_on_a_distributed_edge_names_the_stage_and_the_keys_type(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(WORDS)).groupingKey(list)
    keyed.mapStateful(list, lambda state, key, word: word).setLocalParallelism(2).writeTo(Sinks.noop())
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value).startswith(f"Stage 'map-stateful-keyed' (defined at {THIS_FILE}:{line}) failed on item ")
    assert "'list'" in str(raised.value)


def test_a_key_function_that_raises_names_the_stage_its_line_and_the_item(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(WORDS)).groupingKey(lambda word: word[2])
    keyed.aggregate(AggregateOperations.counting()).writeTo(Sinks.files(str(output)))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'group-and-aggregate' (defined at {THIS_FILE}:{line}) failed on item 'to': "
        "IndexError: string index out of range"
    )
    assert raised.value.traceback.splitlines()[0] == f'  File "{__file__}", line {line - 1}, in <lambda>'
    assert not output.exists()


def test_a_key_function_that_raises_behind_a_distributed_edge_names_the_stage_and_its_line(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(WORDS)).groupingKey(lambda word: word[2])
    keyed.mapStateful(list, lambda state, key, word: word).setLocalParallelism(2).writeTo(Sinks.noop())
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'map-stateful-keyed' (defined at {THIS_FILE}:{line}) failed on item 'to': "
        "IndexError: string index out of range"
    )


class FailingProcessor(AbstractProcessor):
    """A processor of one's own that fails on its first item."""

    def tryProcess0(self, item) -> bool:
        """Refuse the item."""
        raise ValueError(f"cannot take {item}")


def test_a_processor_of_ones_own_that_raises_names_its_stage_and_line(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(WORDS)).customTransform("mine", FailingProcessor).writeTo(Sinks.noop())
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == f"Stage 'mine' (defined at {THIS_FILE}:{line}) failed on item 'to': ValueError: cannot take to"


PLUS_ONE, MINUS_FIVE = timezone(timedelta(hours=1)), timezone(timedelta(hours=-5))

KEYS_BY_TYPE = {
    "date": [date(2020, 1, 1), date(2020, 1, 2)],
    "naive datetime": [datetime(2020, 1, 1, 12), datetime(2020, 1, 1, 13)],
    "aware datetime, one instant in three zones": [
        datetime(2020, 1, 1, 12, tzinfo=timezone.utc),
        datetime(2020, 1, 1, 13, tzinfo=PLUS_ONE),
        datetime(2020, 1, 1, 7, tzinfo=MINUS_FIVE),
    ],
    "time": [time(12, 30), time(12, 30, tzinfo=timezone.utc), time(13, 30, tzinfo=PLUS_ONE)],
    "timedelta": [timedelta(days=1), timedelta(hours=24), timedelta(microseconds=1)],
    "numbers equal to 2": [2, 2.0, Decimal(2), Decimal("2.000"), Fraction(2), Level.HIGH, complex(2, 0)],
    "numbers equal to 1": [True, 1, Level.LOW, Fraction(3, 3)],
    "numbers equal to 0.5": [0.5, Decimal("0.5"), Fraction(1, 2)],
    "numbers equal to 1/10": [Decimal("0.1"), Fraction(1, 10)],
    "zeros": [0, -0.0, 0.0, Decimal("-0"), False],
    "complex": [complex(1, 2), complex(1.0, 2.0)],
    "frozenset": [frozenset({1, "a"}), frozenset({1.0, Tag("a")}), frozenset()],
    "enum": [Colour.RED, Colour.BLUE, Perm.READ, Perm.READ | Perm.WRITE, Mood.HAPPY, "happy"],
    "subclasses of str, bytes, tuple": [Tag("word"), "word", Blob(b"x"), b"x", Point(1, "a"), (1, "a")],
    "nested tuple": [
        (date(2020, 1, 1), (Decimal(2), frozenset({Colour.RED}))),
        (date(2020, 1, 1), (2, frozenset({Colour.RED}))),
    ],
}
"""Keys of every type Python can put in a dict, each group holding keys equal in Python."""


def groupedAcrossAShuffle(jet, items: list, parallelism: int) -> tuple[list, int]:
    """Return the (key, count) pairs of a job counting the keys of ``items`` at ``parallelism``
    (-1: the job's default), and the bytes its shuffle carried."""
    p = Pipeline.create()
    source = p.readFrom(Sources.items(items)).setLocalParallelism(parallelism)
    counts = source.groupingKey(first).aggregate(AggregateOperations.counting()).setLocalParallelism(parallelism)
    counts.writeTo(Sinks.list("counts"))
    job = jet.newJob(p)
    job.join()
    shuffle = job.metrics().edge("group-and-aggregate-prepare", "group-and-aggregate")
    return jet.getList("counts"), shuffle.shuffleBytes


def assertGroupedAsADict(pairs: list, keys: list) -> None:
    """Assert that ``pairs`` count ``keys`` as a Counter does, each key in one pair."""
    merged = Counter()
    for key, count in pairs:
        merged[key] += count
    expected = Counter(keys)
    assert merged == expected
    assert len(pairs) == len(expected)  # no key counted by two processors


EVERY_KEY_TYPE = [key for group in KEYS_BY_TYPE.values() for key in group]


def test_keys_of_every_type_python_can_hash_group_as_a_dict_does_across_a_shuffle(jet):
    keys = EVERY_KEY_TYPE * 20
    pairs, shuffleBytes = groupedAcrossAShuffle(jet, [(key, n) for n, key in enumerate(keys)], 3)
    assertGroupedAsADict(pairs, keys)
    assert shuffleBytes > 0


def test_keys_of_every_type_group_as_a_dict_does_in_a_job_over_the_small_job_size(jet):
    keys = EVERY_KEY_TYPE * 100
    items = [(key, f"{n:08}" + "x" * 1000) for n, key in enumerate(keys)]
    assert len(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)) > SMALL_JOB_BYTES
    pairs, shuffleBytes = groupedAcrossAShuffle(jet, items, -1)
    assertGroupedAsADict(pairs, keys)
    assert shuffleBytes > 0


class Account:
    """A key of one's own class: hashable, but not one the default partitioner can encode."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def __eq__(self, other) -> bool:
        return isinstance(other, Account) and other.owner == self.owner

    def __hash__(self) -> int:
        return hash(self.owner)


def test_a_key_of_ones_own_class_across_a_shuffle_says_what_the_key_function_can_return(jet):
    p = Pipeline.create()
    keyed = p.readFrom(Sources.items(WORDS)).setLocalParallelism(3).groupingKey(Account)
    keyed.aggregate(AggregateOperations.counting()).setLocalParallelism(3).writeTo(Sinks.noop())
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value).startswith(f"Stage 'group-and-aggregate' (defined at {THIS_FILE}:{line}) failed on item ")
    assert str(raised.value).endswith(
        ": DagError: Cannot partition by a key of type 'Account': the default partitioner sends keys "
        "equal in Python to the same partition in every process, so it takes only None, bool, int, "
        "float, complex, Decimal, Fraction, str, bytes, date, datetime, time, timedelta, enum members, "
        "and tuples and frozensets of them (subclasses too). Make the key function return one of "
        "these, for example a tuple of the object's fields; a Core DAG edge can take its own "
        "Partitioner instead: Edge.partitioned(keyFn, partitioner)"
    )
