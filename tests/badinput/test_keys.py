"""Keys that are not what a pipeline expects: None, unhashable, a key function that raises."""

import os
from collections import Counter

import pytest

from coredag import AbstractProcessor, UserFunctionError
from pipeline import AggregateOperations, Pipeline, Sinks, Sources
from tests.conftest import here

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
