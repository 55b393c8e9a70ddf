"""The progress line: each running job's stage and tasks, on a terminal only."""

import io
import re
import time

import pytest
from pyspark.status import SparkStageInfo

from sparkjet.coredag.model.metrics import JobMetrics, MicroBatchMetrics, VertexMetrics
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner.progress import CLEAR_LINE, ProgressLine, progressText, showingProgress, streamProgressText

PROGRESS = re.compile(
    r"(?P<job>[\w-]+): stage (?P<stage>\d+)/(?P<stages>\d+) · tasks (?P<done>\d+)/(?P<tasks>\d+)"
)


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def slowPipeline() -> Pipeline:
    """A job of about three seconds: 300 items, each sleeping 10 ms in a map."""
    p = Pipeline.create()
    p.readFrom(Sources.items(range(300))).map(lambda item: time.sleep(0.01) or item).writeTo(Sinks.noop())
    return p


def shownLines(stream: io.StringIO) -> list[str]:
    """The lines written to ``stream``, each rewriting the one before."""
    return stream.getvalue().split(CLEAR_LINE)[1:]


def stage(stageId: int, tasks: int, active: int, completed: int, failed: int = 0) -> SparkStageInfo:
    return SparkStageInfo(stageId, 0, f"stage {stageId}", tasks, active, completed, failed)


def test_the_text_says_which_stage_of_how_many_runs_and_its_tasks():
    assert progressText("job-1", [4, 5, 7, 9, 12], [stage(7, 16, 4, 12)]) == "job-1: stage 3/5 · tasks 12/16"
    assert progressText("job-2", [1, 2], [stage(1, 4, 1, 2, failed=1), stage(2, 4, 2, 0)]) == (
        "job-2: stage 2/2 · tasks 2/8 · 1 failed"
    )


@pytest.mark.spark
def test_polling_a_running_job_shows_its_stage_and_tasks(jet):
    terminal = FakeTerminal()
    job = jet.newJob(slowPipeline(), name="slow-polled")
    line = ProgressLine([job], terminal)
    deadline = time.monotonic() + 60
    while not shownLines(terminal) and time.monotonic() < deadline:
        line.poll()
        time.sleep(0.05)
    job.join()
    line.clear()
    shown = shownLines(terminal)
    assert shown and shown[-1] == ""
    progress = PROGRESS.fullmatch(shown[0])
    assert progress and progress["job"] == "slow-polled"
    assert 1 <= int(progress["stage"]) <= int(progress["stages"])
    assert int(progress["done"]) <= int(progress["tasks"])


@pytest.mark.spark
def test_progress_shows_on_a_terminal_only_and_is_erased_at_the_end(jet):
    terminal, file = FakeTerminal(), io.StringIO()
    jobs = []
    with showingProgress(jobs, terminal, interval=0.1), showingProgress(jobs, file, interval=0.1):
        jobs.append(jet.newJob(slowPipeline(), name="slow-watched"))
        jobs[0].join()
    shown = shownLines(terminal)
    assert any(PROGRESS.fullmatch(text) and text.startswith("slow-watched: ") for text in shown)
    assert shown[-1] == "" and terminal.getvalue().endswith(CLEAR_LINE)
    assert file.getvalue() == ""


def streamMetrics(watermark):
    vertices = (VertexMetrics("source", 1, 0, 3, 0.1, ()), VertexMetrics("window", 1, 3, 1, 0.1, (), watermark))
    batches = (MicroBatchMetrics(0, 1.2, 2), MicroBatchMetrics(1, 0.4, 1))
    return JobMetrics("job-7", 3.0, vertices, (), batches)


def test_a_stream_jobs_text_says_its_micro_batches_items_and_watermark():
    now = 1_700_000_010_000
    assert streamProgressText(streamMetrics(now - 1_500), now) == (
        "job-7: 2 micro-batches · 3 items read · watermark 1,700,000,008,500 · 1.5 s behind the clock"
    )
    assert streamProgressText(streamMetrics(97_000), now) == "job-7: 2 micro-batches · 3 items read · watermark 97,000"
    assert streamProgressText(streamMetrics(None), now) == "job-7: 2 micro-batches · 3 items read"


@pytest.mark.spark
def test_polling_a_stream_job_shows_its_micro_batches(jet, tmp_path):
    terminal = FakeTerminal()
    p = Pipeline.create()
    p.readFrom(Sources.fileWatcher(str(tmp_path))).withoutTimestamps().writeTo(Sinks.noop())
    job = jet.newJob(p, name="stream-polled")
    try:
        (tmp_path / ".a").write_text("one\ntwo\n")
        (tmp_path / ".a").rename(tmp_path / "a.txt")
        line = ProgressLine([job], terminal)
        deadline = time.monotonic() + 60
        while not any("2 items read" in text for text in shownLines(terminal)) and time.monotonic() < deadline:
            line.poll()
            time.sleep(0.1)
        assert any(re.fullmatch(r"stream-polled: \d+ micro-batch(es)? · 2 items read", text) for text in shownLines(terminal))
    finally:
        job.cancel()
