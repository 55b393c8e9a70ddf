"""Random mixes of every key type Python can put in a dict group as a dict does: at parallelism
3, in processes started with different PYTHONHASHSEED values, and across a Spark shuffle."""

import math
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkjet.coredag.model.partitioner import DefaultPartitioner
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources
from sparkjet.planner import Jet
from tests.badinput.test_keys import first
from tests.keys import Blob, Colour, Level, Mood, Perm, Point, Tag, Worker

PARALLELISM = 3
COUNTS = (PARALLELISM, 1 << 32)
HASH_SEEDS = ("0", "1")
ZONE_LIST = [timezone(timedelta(minutes=minutes)) for minutes in (0, -300, 60, 330, 840)]
ZONES = st.sampled_from(ZONE_LIST)

SMALL_NUMBERS = st.fractions(min_value=-3, max_value=3, max_denominator=4)
"""Numbers of few values: keys drawn apart are often equal (equalTo gives them other types)."""


def scalars(allowNan: bool) -> st.SearchStrategy:
    """Keys of every scalar type, subclasses included."""
    return st.one_of(
        st.none(),
        SMALL_NUMBERS,
        st.integers(),
        st.floats(allow_nan=allowNan),
        st.decimals(allow_nan=allowNan).filter(lambda number: not number.is_snan()),
        st.fractions(),
        st.complex_numbers(allow_nan=allowNan),
        st.text(max_size=3),
        st.text(max_size=3).map(Tag),
        st.binary(max_size=3),
        st.binary(max_size=3).map(Blob),
        st.dates(),
        st.datetimes(),
        st.datetimes(timezones=ZONES),
        st.times(),
        st.times(timezones=ZONES),
        st.timedeltas(),
        st.sampled_from([*Colour, *Level, *Mood, *Perm, Perm.READ | Perm.WRITE, "happy"]),
    )


def keys(allowNan: bool = True) -> st.SearchStrategy:
    """Keys of every type: scalars and tuples, namedtuples and frozensets of keys."""
    return st.recursive(
        scalars(allowNan),
        lambda children: st.one_of(
            st.tuples(children, children),
            st.builds(Point, children, children),
            st.frozensets(children, max_size=3),
        ),
        max_leaves=4,
    )


def equalTo(key) -> st.SearchStrategy:
    """Keys equal to ``key``, of other types where Python has some: 2 -> Decimal(2), "red" ->
    Tag("red"), an aware datetime -> the same instant in another zone, (1, "a") -> Point(1, "a")."""
    if type(key) in (tuple, Point):
        twins = st.tuples(*map(equalTo, key))
        return twins.flatmap(lambda twin: st.sampled_from([twin, Point(*twin)] if len(twin) == 2 else [twin]))
    if type(key) is frozenset:
        return st.tuples(*map(equalTo, inAFixedOrder(key))).map(frozenset)
    return st.sampled_from([key, *(twin for twin in twinsOf(key) if twin == key)])


def inAFixedOrder(keys: frozenset) -> list:
    """Return the members of ``keys`` in an order that does not depend on how the set was built:
    a frozenset of keys equal to another's may iterate in another order (colliding hashes), and
    Hypothesis, replaying an example, refuses a strategy whose shape changed (FlakyStrategyDefinition)."""
    return sorted(keys, key=lambda key: (type(key).__qualname__, repr(key)))


def twinsOf(key) -> list:
    """Return keys that may equal ``key`` (equalTo keeps those that do)."""
    number = key.real if isinstance(key, complex) and key.imag == 0 else key
    if isinstance(number, (int, float, Decimal, Fraction)) and number == number:
        if number in (math.inf, -math.inf):
            return [float(number), Decimal(number), complex(number, 0)]
        return numbersEqualTo(Fraction(number))
    if isinstance(key, str):
        return [str.__str__(key), Tag(key), *Mood]
    if isinstance(key, bytes):
        return [bytes.__bytes__(key), Blob(key)]
    if isinstance(key, datetime) and key.utcoffset() is not None and 1 < key.year < 9999:
        return [key.astimezone(zone) for zone in ZONE_LIST]
    if isinstance(key, time) and key.utcoffset() is not None:
        return [timeIn(key, zone) for zone in ZONE_LIST]
    return []


def numbersEqualTo(value: Fraction) -> list:
    """Return numbers of every type that may equal ``value``."""
    numbers = [value, Decimal(value.numerator) / Decimal(value.denominator), *Level, False, True]
    if value.denominator == 1:
        numbers.append(int(value))
    try:
        numbers += [float(value), complex(float(value), 0)]
    except OverflowError:
        pass
    return numbers


def timeIn(key: time, zone: timezone) -> time:
    """Return the time of day ``key`` shows in ``zone`` (equal to it unless it passes midnight)."""
    return datetime.combine(date(2000, 1, 2), key).astimezone(zone).timetz()


def equalGroups(allowNan: bool = True, minGroups: int = 0) -> st.SearchStrategy:
    """Lists of keys where most keys have equal ones of other types, in a random order."""
    group = keys(allowNan).flatmap(lambda key: st.lists(equalTo(key), min_size=1, max_size=3))
    groups = st.lists(group, min_size=minGroups, max_size=max(minGroups, 10))
    return groups.map(lambda lists: [key for group in lists for key in group]).flatmap(st.permutations)


@pytest.fixture(scope="module")
def workers():
    """One worker per hash seed."""
    started = [Worker(seed, COUNTS) for seed in HASH_SEEDS]
    yield started
    for worker in started:
        worker.close()


def groupedAtParallelism(partitionOf: dict, keys: list) -> list[Counter]:
    """Return the key counts of PARALLELISM processors, key i sent to ``partitionOf[i]``."""
    processors = [Counter() for _ in range(PARALLELISM)]
    for index, key in enumerate(keys):
        processors[partitionOf[index]][key] += 1
    return processors


def test_the_workers_really_salt_pythons_hash(workers):
    assert len({worker.pythonHash for worker in workers}) == len(HASH_SEEDS)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(equalGroups())
def test_every_process_groups_keys_at_parallelism_3_as_a_dict_does(workers, keys):
    here = [[DefaultPartitioner().getPartition(key, count) for count in COUNTS] for key in keys]
    assert [worker.partitions(keys) for worker in workers] == [here] * len(workers)
    owners = {}
    for key, partitions in zip(keys, here):
        owners.setdefault(key, set()).add(tuple(partitions))
    assert {key: len(partitions) for key, partitions in owners.items()} == dict.fromkeys(owners, 1)
    processors = groupedAtParallelism({index: partitions[0] for index, partitions in enumerate(here)}, keys)
    assert sum(processors, Counter()) == Counter(keys)
    assert sum(len(processor) for processor in processors) == len(Counter(keys))


@pytest.mark.spark
@settings(max_examples=2, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(equalGroups(allowNan=False, minGroups=8))
def test_a_job_groups_a_random_mix_of_key_types_at_parallelism_3_as_a_dict_does(spark, keys):
    # a NaN is equal only to itself, and the same NaN is two objects once pickled to two tasks
    items = [(key, copy) for copy in range(4) for key in keys]
    p = Pipeline.create()
    source = p.readFrom(Sources.items(items)).setLocalParallelism(PARALLELISM)
    counts = source.groupingKey(first).aggregate(AggregateOperations.counting()).setLocalParallelism(PARALLELISM)
    counts.writeTo(Sinks.list("counts"))
    jet = Jet(spark=spark)
    try:
        job = jet.newJob(p)
        job.join()
        pairs = jet.getList("counts")
    finally:
        jet.shutdown()
    expected = Counter(key for key, _ in items)
    assert len(pairs) == len(expected)  # no key counted in two processors
    assert Counter(dict(pairs)) == expected
    assert job.metrics().edge("group-and-aggregate-prepare", "group-and-aggregate").shuffleBytes > 0
