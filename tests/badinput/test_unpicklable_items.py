"""Items that cannot be pickled where they cross from one stage to the next (a map returning a
generator into a shuffle, a list sink, or several stages): the job fails at its first attempt,
naming the stage that emitted the item, where it was defined, the item's type and what to do."""

import functools
import os
import re
import threading
import time

import pytest
from pyspark import TaskContext

from sparkjet.coredag.errors import UnpicklableItemError
from sparkjet.pipeline import Pipeline, Sinks, Sources
from tests.conftest import here
from tests.faults import note, noted

pytestmark = pytest.mark.spark

THIS_FILE = os.path.basename(__file__)
SLOW_RETRY_SECONDS = 30
"""How long an attempt after the first takes to emit: far longer than the driver takes to see
the first attempt's error and cancel the retry."""
GENERATOR = r"<generator object .*>"
MUST_BE_PICKLABLE = "; items that cross between stages must be picklable: "
RETURN_A_LIST = MUST_BE_PICKLABLE + "return a list instead of a generator"


def rangeOf(markers: str, item: int):
    """Return a generator, noting 'emitted'; attempts after the first take their time."""
    if TaskContext.get().attemptNumber() > 0:
        time.sleep(SLOW_RETRY_SECONDS)
    note(markers, "emitted")
    return (number for number in range(item))


def generatorRefused(stage: str, line: int, destination: str) -> str:
    """Return the pattern of the error naming ``stage`` for a generator sent to ``destination``."""
    named = re.escape(f"Stage '{stage}' (defined at {THIS_FILE}:{line})")
    return (
        rf"{named} emitted an item of type 'generator' that cannot be pickled to send it to "
        rf"{re.escape(destination)}: {GENERATOR} \(TypeError: cannot pickle 'generator' object\)"
        rf"{re.escape(RETURN_A_LIST)}"
    )


def assertRefusesGenerator(jet, p, markers, stage: str, line: int, destination: str) -> None:
    """Running ``p`` fails at the first attempt naming ``stage`` for a generator to ``destination``."""
    with pytest.raises(UnpicklableItemError) as raised:
        jet.newJob(p).join()
    assertFailedOnceWith(generatorRefused(stage, line, destination), raised, markers)


def assertFailedOnceWith(expected: str, raised, markers) -> None:
    """The job failed with a message matching ``expected``, in the first attempt of its tasks."""
    assert re.fullmatch(expected, str(raised.value)), str(raised.value)
    assert {attempt for _, _, attempt in noted(markers, "emitted")} == {0}


def test_a_generator_into_a_shuffle_names_the_stage_that_emitted_it(jet, tmp_path):
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(10))).setLocalParallelism(2)
        .map(functools.partial(rangeOf, str(tmp_path))).setName("ranges").setLocalParallelism(2)
        .rebalance().map(list).setLocalParallelism(2)
        .writeTo(Sinks.list("out"))
    )
    line = here() - 4
    assertRefusesGenerator(jet, p, tmp_path, "ranges", line, "Stage 'map'")
    assert jet.getList("out") == []


def test_a_generator_into_a_list_sink_names_the_stage_that_emitted_it(jet, tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(functools.partial(rangeOf, str(tmp_path))).writeTo(Sinks.list("out"))
    line = here() - 1
    assertRefusesGenerator(jet, p, tmp_path, "map", line, "the driver's list 'out'")
    assert jet.getList("out") == []


def test_a_generator_into_two_stages_names_the_stage_that_emitted_it(jet, tmp_path):
    p = Pipeline.create()
    ranges = p.readFrom(Sources.items(range(10))).map(functools.partial(rangeOf, str(tmp_path)))
    line = here() - 1
    ranges.map(list).writeTo(Sinks.list("a"))
    ranges.filter(bool).writeTo(Sinks.list("b"))
    assertRefusesGenerator(jet, p, tmp_path, "map", line, "Stage 'map-2' and Stage 'filter'")


def lockOf(markers: str, item: int):
    """Return an item holding a lock, noting 'emitted'; attempts after the first take their time."""
    rangeOf(markers, item)
    return (item, threading.Lock())


def test_another_unpicklable_item_says_items_must_be_picklable(jet, tmp_path):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(functools.partial(lockOf, str(tmp_path))).writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(UnpicklableItemError) as raised:
        jet.newJob(p).join()
    stage = re.escape(f"Stage 'map' (defined at {THIS_FILE}:{line})")
    expected = (
        rf"{stage} emitted an item of type 'tuple' that cannot be pickled to send it to the driver's "
        rf"list 'out': \(0, <unlocked _thread.lock object at .*>\) \(TypeError: cannot pickle "
        rf"'_thread.lock' object\){re.escape(MUST_BE_PICKLABLE)}emit plain data \(numbers, strings, "
        r"tuples, lists, dicts, instances of module-level classes\) instead"
    )
    assertFailedOnceWith(expected, raised, tmp_path)


def test_a_generator_into_a_stage_of_fewer_processors_names_the_stage_that_emitted_it(jet, tmp_path):
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(10))).setLocalParallelism(2)
        .map(functools.partial(rangeOf, str(tmp_path))).setName("ranges").setLocalParallelism(2)
        .map(list).setLocalParallelism(1)
        .writeTo(Sinks.list("out"))
    )
    line = here() - 4
    assertRefusesGenerator(jet, p, tmp_path, "ranges", line, "Stage 'map'")
