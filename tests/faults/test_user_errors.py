"""A user function's error is the job's own: the job fails at the first attempt that raises it,
with one error naming the stage, although Spark retries tasks."""

import functools
import time

import pytest
from pyspark import TaskContext

from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import Pipeline, Sinks, Sources
from tests.conftest import QUIET_SECONDS
from tests.faults import note, noted

pytestmark = pytest.mark.spark

SLOW_RETRY_SECONDS = QUIET_SECONDS
"""How long an attempt after the first takes to reach the failing item: as long as the tests
wait while nothing moves, far longer than the driver takes to see the first attempt's error and
cancel the retry, however loaded the machine (Spark kills the cancelled retry's worker)."""


def failOnSeven(markers: str, item: int) -> int:
    """Raise on item 7 in every attempt, noting 'raised'; retries take their time to raise."""
    if item == 7:
        if TaskContext.get().attemptNumber() > 0:
            time.sleep(SLOW_RETRY_SECONDS)
        note(markers, "raised")
        raise ValueError("seven")
    return item


SINKS = {
    "list": lambda output: Sinks.list("out"),
    "files": lambda output: Sinks.files(str(output)),
}


@pytest.mark.parametrize("sinkOf", SINKS.values(), ids=SINKS.keys())
def test_a_user_functions_error_fails_the_job_once_at_its_first_attempt(jet, tmp_path, sinkOf):
    markers, output = tmp_path / "markers", tmp_path / "output"
    markers.mkdir()
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(100)))
        .map(functools.partial(failOnSeven, str(markers)))
        .writeTo(sinkOf(output))
    )
    with pytest.raises(UserFunctionError) as failure:
        jet.newJob(p).join()
    assert str(failure.value).endswith("failed on item 7: ValueError: seven")
    assert str(failure.value).startswith("Stage 'map' (defined at test_user_errors.py:")
    assert [attempt for _, _, attempt in noted(markers, "raised")] == [0]
    assert jet.getList("out") == [] and not output.exists()
