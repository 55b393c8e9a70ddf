"""ComparatorEx: Jet's comparators as picklable values, and the sort key each amounts to."""

import functools
import pickle
import random

import pytest

from sparkjet.pipeline import ComparatorEx, Pipeline, PipelineError, Sources
from sparkjet.pipeline.comparators import ComparatorKey, sortKeyOf

PEOPLE = [("ann", 31), ("bob", None), ("cid", 25), ("dee", 31), (None, 40), ("eve", 25)]


def byAge(person):
    return person[1]


def byName(person):
    return person[0]


def descending(a, b):
    return b - a


def sortedBy(comparator, items):
    return sorted(items, key=functools.cmp_to_key(comparator))


def sortedByItsKey(comparator, items):
    key, reverse = sortKeyOf(comparator)
    return sorted(items, key=key, reverse=reverse)


NUMBERS = random.Random(7).sample(range(100), 40)

COMPARATORS = {
    "natural": (ComparatorEx.naturalOrder(), sorted(NUMBERS)),
    "reverse": (ComparatorEx.reverseOrder(), sorted(NUMBERS, reverse=True)),
    "function": (ComparatorEx.of(descending), sorted(NUMBERS, reverse=True)),
    "comparing": (ComparatorEx.comparing(lambda n: n % 10), sorted(NUMBERS, key=lambda n: n % 10)),
    "comparing-reversed": (
        ComparatorEx.comparing(lambda n: n % 10).reversed(), sorted(NUMBERS, key=lambda n: n % 10, reverse=True)
    ),
    "comparing-by-reverse-order": (
        ComparatorEx.comparing(lambda n: n % 10, ComparatorEx.reverseOrder()),
        sorted(NUMBERS, key=lambda n: n % 10, reverse=True),
    ),
    "then-comparing": (
        ComparatorEx.comparing(lambda n: n % 10).thenComparing(ComparatorEx.reverseOrder()),
        sorted(NUMBERS, key=lambda n: (n % 10, -n)),
    ),
    "then-comparing-a-key": (
        ComparatorEx.comparing(lambda n: n % 10).thenComparing(lambda n: n // 10, descending),
        sorted(NUMBERS, key=lambda n: (n % 10, -(n // 10))),
    ),
}


@pytest.mark.parametrize("name", list(COMPARATORS))
def test_each_comparator_orders_as_python_sorts_and_its_sort_key_agrees(name):
    comparator, expected = COMPARATORS[name]
    assert sortedBy(comparator, NUMBERS) == expected
    assert sortedByItsKey(comparator, NUMBERS) == expected


@pytest.mark.parametrize("name", list(COMPARATORS))
def test_each_comparator_and_its_sort_key_pickle(name):
    import cloudpickle

    comparator, expected = COMPARATORS[name]
    key, reverse = sortKeyOf(cloudpickle.loads(cloudpickle.dumps(comparator)))
    assert sorted(NUMBERS, key=cloudpickle.loads(cloudpickle.dumps(key)), reverse=reverse) == expected


def test_a_plain_comparator_has_no_key_but_a_picklable_key_object():
    key, reverse = sortKeyOf(descending)
    assert key == ComparatorKey(ComparatorEx.of(descending)) and not reverse
    assert sorted(NUMBERS, key=pickle.loads(pickle.dumps(key))) == sorted(NUMBERS, reverse=True)


def test_key_comparisons_that_are_natural_sort_by_the_key_itself():
    assert sortKeyOf(ComparatorEx.comparing(byAge)) == (byAge, False)
    assert sortKeyOf(ComparatorEx.comparing(byAge).reversed()) == (byAge, True)
    assert sortKeyOf(ComparatorEx.naturalOrder().reversed()) == (None, True)
    assert ComparatorEx.reverseOrder().reversed() == ComparatorEx.naturalOrder()


def test_nulls_first_and_last_as_jets():
    """Jet's Comparator.nullsFirst/nullsLast: None before (after) every item, the rest in order."""
    ages = [31, None, 25, None, 40]
    assert sortedBy(ComparatorEx.nullsFirst(ComparatorEx.naturalOrder()), ages) == [None, None, 25, 31, 40]
    assert sortedBy(ComparatorEx.nullsLast(ComparatorEx.reverseOrder()), ages) == [40, 31, 25, None, None]
    byAgeNullsLast = ComparatorEx.comparing(byAge, ComparatorEx.nullsLast(ComparatorEx.naturalOrder()))
    thenName = byAgeNullsLast.thenComparing(byName, ComparatorEx.nullsFirst(ComparatorEx.naturalOrder()))
    assert sortedBy(thenName, PEOPLE) == [
        ("cid", 25), ("eve", 25), ("ann", 31), ("dee", 31), (None, 40), ("bob", None)
    ]


def test_a_comparator_class_must_compare():
    class Incomplete(ComparatorEx):
        pass

    with pytest.raises(TypeError, match="compare"):
        Incomplete()


def test_sort_refuses_a_cmp_to_key_key_and_names_the_way_out():
    stage = Pipeline.create().readFrom(Sources.items([3, 1, 2]))
    with pytest.raises(PipelineError, match=r"Stage 'sort': a functools.cmp_to_key\(...\) key cannot be pickled.*sort\(comparator=compareFn\)"):
        stage.sort(functools.cmp_to_key(descending))


def test_sort_refuses_a_two_argument_key():
    stage = Pipeline.create().readFrom(Sources.items([3, 1, 2]))
    with pytest.raises(PipelineError, match=r"Stage 'sort': sort's key takes one item; to compare two items, give sort\(comparator=compareFn\)"):
        stage.sort(descending)


def test_sort_takes_a_key_or_a_comparator_not_both():
    stage = Pipeline.create().readFrom(Sources.items([3, 1, 2]))
    with pytest.raises(PipelineError, match="sort takes a key or a comparator, not both"):
        stage.sort(byAge, comparator=descending)

