"""Functions that are not what a pipeline expects: a flatMap returning no iterable, a function
capturing an open file or a lock."""

import os
import threading

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import Pipeline, PipelineError, Sinks, Sources
from tests.conftest import here

THIS_FILE = os.path.basename(__file__)
UNPICKLABLE = (
    "cannot be pickled, so Spark cannot send it to its workers ({cause}). Do not capture open files, locks, "
    "connections or other process-bound objects in it; create them inside the function instead"
)


@pytest.mark.spark
def test_flatMap_returning_a_non_iterable_says_what_to_return_and_leaves_no_output(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).flatMap(lambda n: n * 2).writeTo(Sinks.files(str(output)))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'flat-map' (defined at {THIS_FILE}:{line}) failed on item 1: TypeError: 'int' object is not "
        "iterable; flatMap's function must return an iterable (a list, a generator...)"
    )
    assert not output.exists()


@pytest.mark.parametrize("mode", ["w", "r"])
def test_a_function_capturing_an_open_file_is_refused_where_it_is_given(tmp_path, mode):
    path = tmp_path / "log.txt"
    path.write_text("a line\n")
    stage = Pipeline.create().readFrom(Sources.items([1]))
    with open(path, mode) as log, pytest.raises(PipelineError) as raised:
        stage.map(lambda item: log.name)
    line = here() - 1
    assert str(raised.value) == f"Stage 'map': the mapFn given at {THIS_FILE}:{line} " + UNPICKLABLE.format(
        cause=f"PicklingError: cannot pickle the file '{path}'"
    )


def test_a_function_capturing_a_lock_is_refused_where_it_is_given():
    lock = threading.Lock()
    stage = Pipeline.create().readFrom(Sources.items([1]))
    with pytest.raises(PipelineError) as raised:
        stage.filter(lambda item: lock.locked())
    line = here() - 1
    assert str(raised.value) == f"Stage 'filter': the filterFn given at {THIS_FILE}:{line} " + UNPICKLABLE.format(
        cause="TypeError: cannot pickle '_thread.lock' object"
    )
