"""``job.cancel()``: a long job's Spark jobs stop, its tasks before they finish, ``join()`` raises
CancelledError as Jet's raises CancellationException, and the job leaves no output."""

import concurrent.futures
import functools
import time

import pytest

from sparkjet.coredag import JobError
from sparkjet.pipeline import Pipeline, Sinks, Sources
from tests.conftest import eventually
from tests.faults import note, noted

pytestmark = pytest.mark.spark

ITEMS = 10_000


def slowly(markers: str, item: int) -> int:
    """Take 10 ms per item, noting 'running' and the hundred it is in every 100 items."""
    if item % 100 == 0:
        note(markers, "running")
        note(markers, f"hundred{item // 100}")
    time.sleep(0.01)
    return item


def longPipeline(markers, sink) -> Pipeline:
    """A job of some 50 seconds on two processors, unless cancelled."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(ITEMS))).setLocalParallelism(2)
        .map(functools.partial(slowly, str(markers))).setLocalParallelism(2)
        .writeTo(sink)
    )
    return p


def awaitRunning(markers) -> None:
    """Wait until the job's Python workers are processing items."""
    eventually(lambda: noted(markers, "running"))


def hundredsStarted(markers) -> int:
    """Return how many hundreds of the long job's items its tasks started."""
    return len({path.name.split("-")[0] for path in markers.iterdir() if path.name.startswith("hundred")})


def runningTasks(jet, jobName: str) -> int:
    """Return how many tasks of the job's Spark jobs run."""
    tracker = jet.spark().sparkContext.statusTracker()
    jobs = [tracker.getJobInfo(sparkJob) for sparkJob in tracker.getJobIdsForGroup(jobName)]
    stages = [tracker.getStageInfo(stageId) for job in jobs for stageId in job.stageIds]
    return sum(stage.numActiveTasks for stage in stages if stage is not None)


def test_cancel_stops_a_long_job_within_seconds_and_leaves_no_output(jet, tmp_path):
    markers, output = tmp_path / "markers", tmp_path / "output"
    markers.mkdir()
    job = jet.newJob(longPipeline(markers, Sinks.files(str(output))), name="long")
    awaitRunning(markers)
    assert output.exists()
    job.cancel()
    with pytest.raises(concurrent.futures.CancelledError, match=r"^Job 'long' was cancelled$"):
        job.join()
    assert runningTasks(jet, "long") == 0
    assert hundredsStarted(markers) < ITEMS // 100, "its tasks were stopped, not left to finish"
    assert not output.exists()


def test_a_running_jobs_name_is_refused_and_a_cancelled_job_adds_nothing_to_its_list(jet, tmp_path):
    job = jet.newJob(longPipeline(tmp_path, Sinks.list("slow")), name="slow")
    awaitRunning(tmp_path)
    for _ in range(2):  # a second, then a third: refusing the second leaves the name taken
        with pytest.raises(JobError, match=r"^A job named 'slow' is already running: give the new job"):
            jet.newJob(longPipeline(tmp_path, Sinks.list("slow")), name="slow")
    job.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        job.join()
    assert jet.getList("slow") == []


def test_cancel_of_a_completed_job_is_ignored(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).writeTo(Sinks.list("done"))
    job = jet.newJob(p)
    job.join()
    job.cancel()
    job.join()
    assert sorted(jet.getList("done")) == list(range(10))
