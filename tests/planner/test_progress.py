"""The progress line: each running job's stage, tasks and elapsed time, on a terminal only, erased
before anything else is written there, and off with SPARKJET_PROGRESS=0."""

import io
import re
import sys
import time

import attrs
import pytest
from pyspark.status import SparkStageInfo

from sparkjet.coredag.model.metrics import JobMetrics, MicroBatchMetrics, VertexMetrics
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner.cli import main
from sparkjet.planner.jet import JobStatus
from sparkjet.planner.progress import (
    CLEAR_LINE,
    PROGRESS_VARIABLE,
    JobsProgress,
    ProgressLine,
    elapsedText,
    progressText,
    shortened,
    showingProgress,
    streamProgressText,
)

PROGRESS = re.compile(
    r"(?P<job>[\w-]+): stage (?P<stage>\d+)/(?P<stages>\d+) · tasks (?P<done>\d+)/(?P<tasks>\d+)"
    r"(?: · (?:waiting for \d+ tasks?|\d+ running))?(?: · \d+ failed)? · (?P<elapsed>\d+) s"
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


def screen(written: str) -> list[str]:
    """The lines a terminal shows after ``written``: ``\\r`` goes back to the start of the line,
    ``ESC[K`` erases to its end, ``\\n`` starts the next one."""
    lines, column = [""], 0
    for part in re.split(r"(\r|\n|\x1b\[K)", written):
        if part == "\r":
            column = 0
        elif part == "\n":
            lines.append("")
            column = 0
        elif part == "\x1b[K":
            lines[-1] = lines[-1][:column]
        else:
            lines[-1] = lines[-1][:column] + part + lines[-1][column + len(part):]
            column += len(part)
    return lines


def stage(stageId: int, tasks: int, active: int, completed: int, failed: int = 0) -> SparkStageInfo:
    return SparkStageInfo(stageId, 0, f"stage {stageId}", tasks, active, completed, failed)


def streamMetrics(watermark, name="job-7"):
    vertices = (VertexMetrics("source", 1, 0, 3, 0.1, ()), VertexMetrics("window", 1, 3, 1, 0.1, (), watermark))
    batches = (MicroBatchMetrics(0, 1.2, 2), MicroBatchMetrics(1, 0.4, 1))
    return JobMetrics(name, 3.0, vertices, (), batches)


@attrs.define(eq=False)
class FakeStreamJob:
    """What the progress line reads of a running stream job, without Spark."""

    name: str = "job-7"
    status: JobStatus = JobStatus.RUNNING
    sparkJobGroup: str = "group"
    isStream: bool = True

    def getStatus(self) -> JobStatus:
        return self.status

    def metrics(self) -> JobMetrics:
        return streamMetrics(None, self.name)


class Clock:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_text_says_which_stage_of_how_many_runs_its_tasks_and_what_it_waits_for():
    assert progressText("job-1", [4, 5, 7, 9, 12], [stage(7, 16, 2, 10)]) == "job-1: stage 3/5 · tasks 10/16 · 2 running"
    assert progressText("job-1", [4, 5, 7, 9, 12], [stage(7, 16, 4, 12)]) == (
        "job-1: stage 3/5 · tasks 12/16 · waiting for 4 tasks"
    )
    assert progressText("job-3", [0], [stage(0, 1, 1, 0)]) == "job-3: stage 1/1 · tasks 0/1 · waiting for 1 task"
    assert progressText("job-2", [1, 2], [stage(1, 4, 1, 2, failed=1), stage(2, 4, 2, 0)]) == (
        "job-2: stage 2/2 · tasks 2/8 · 3 running · 1 failed"
    )


def test_elapsed_time_reads_in_seconds_then_minutes():
    assert [elapsedText(s) for s in (0.4, 12.9, 60, 185)] == ["0 s", "12 s", "1 min 00 s", "3 min 05 s"]


def test_a_waiting_job_s_elapsed_time_ticks_on_and_its_end_is_said():
    clock, job = Clock(), FakeStreamJob()
    progress = JobsProgress([job], clock)
    assert progress.text() == "job-7: 2 micro-batches · 3 items read · 0 s"
    clock.now += 3.2
    assert progress.text() == "job-7: 2 micro-batches · 3 items read · 3 s"
    job.status = JobStatus.COMPLETED
    assert progress.text() == ""
    assert progress.endedText() == "job-7: COMPLETED after 3 s"
    job.status = JobStatus.RUNNING
    assert progress.endedText(interrupted=True) == "job-7: being cancelled after 3 s"


def test_a_job_added_later_is_timed_from_when_it_is_first_seen():
    clock, jobs = Clock(), []
    progress = JobsProgress(jobs, clock)
    clock.now += 30
    jobs.append(FakeStreamJob())
    assert progress.text().endswith(" · 0 s")


def test_output_written_meanwhile_erases_the_line_first_and_the_line_waits_for_its_end():
    terminal = FakeTerminal()
    line = ProgressLine([FakeStreamJob()], terminal)
    line.poll()
    line.writeAbove(terminal, "result 1\n")
    line.poll()
    line.writeAbove(terminal, "Enter a number: ")
    line.poll()
    assert screen(terminal.getvalue()) == ["result 1", "Enter a number: "]
    line.writeAbove(terminal, "4\n")
    line.poll()
    assert screen(terminal.getvalue()) == ["result 1", "Enter a number: 4", "job-7: 2 micro-batches · 3 items read · 0 s"]
    line.clear()
    assert screen(terminal.getvalue())[-1] == "" and terminal.getvalue().count(CLEAR_LINE + "job-7") == 3


def test_the_line_is_cut_to_the_terminal_s_width():
    assert shortened("a" * 10, 11) == "a" * 10
    assert shortened("a" * 10, 8) == "aaaaaa\u2026"
    terminal = FakeTerminal()
    line = ProgressLine([FakeStreamJob(name="a-stream-job-of-a-very-long-name" * 3)], terminal)
    line.poll()
    assert len(screen(terminal.getvalue())[0]) == 79


def test_while_progress_shows_the_standard_streams_write_through_the_line(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with showingProgress([FakeStreamJob()], interval=0.01):
        deadline = time.monotonic() + 10
        while not shownLines(terminal) and time.monotonic() < deadline:
            time.sleep(0.01)
        print("a warning", file=sys.stderr)
        assert sys.stderr is not terminal
    assert sys.stderr is terminal
    assert shownLines(terminal)[0].startswith("job-7: ")
    assert screen(terminal.getvalue()) == ["a warning", ""]


def test_nothing_shows_where_stderr_is_no_terminal_or_progress_is_off(monkeypatch):
    file, terminal = io.StringIO(), FakeTerminal()
    with showingProgress([FakeStreamJob()], file, interval=0.01):
        time.sleep(0.1)
    monkeypatch.setenv(PROGRESS_VARIABLE, "0")
    with showingProgress([FakeStreamJob()], terminal, interval=0.01):
        time.sleep(0.1)
    assert file.getvalue() == "" and terminal.getvalue() == ""


def test_jobs_a_display_shows_already_get_no_second_line():
    terminal, other = FakeTerminal(), FakeTerminal()
    job = FakeStreamJob()
    with showingProgress([job], terminal, interval=0.01), showingProgress([job], other, interval=0.01):
        time.sleep(0.1)
    assert shownLines(terminal) and other.getvalue() == ""


def test_a_stream_jobs_text_says_its_micro_batches_items_and_watermark():
    now = 1_700_000_010_000
    assert streamProgressText(streamMetrics(now - 1_500), now) == (
        "job-7: 2 micro-batches · 3 items read · watermark 1,700,000,008,500 · 1.5 s behind the clock"
    )
    assert streamProgressText(streamMetrics(97_000), now) == "job-7: 2 micro-batches · 3 items read · watermark 97,000"
    assert streamProgressText(streamMetrics(None), now) == "job-7: 2 micro-batches · 3 items read"
    one = JobMetrics("job-8", 1.0, (), (), (MicroBatchMetrics(0, 1.0, 1),))
    assert streamProgressText(one, now) == "job-8: 1 micro-batch · 1 item read"


@pytest.mark.spark
def test_polling_a_running_job_shows_its_stage_and_tasks(jet):
    terminal = FakeTerminal()
    job = jet.newJob(slowPipeline(), name="slow-polled")
    line = ProgressLine([job], terminal)
    deadline = time.monotonic() + 60
    while not any(PROGRESS.fullmatch(text) for text in shownLines(terminal)) and time.monotonic() < deadline:
        line.poll()
        time.sleep(0.05)
    job.join()
    line.clear()
    shown = shownLines(terminal)
    assert shown and shown[-1] == ""
    progress = next(PROGRESS.fullmatch(text) for text in shown if PROGRESS.fullmatch(text))
    assert progress["job"] == "slow-polled"
    assert 1 <= int(progress["stage"]) <= int(progress["stages"])
    assert int(progress["done"]) <= int(progress["tasks"])


@pytest.mark.spark
def test_a_batch_job_counts_the_items_its_sources_read_as_its_tasks_report_them(jet):
    job = jet.newJob(slowPipeline(), name="slow-counted")
    job.join()
    assert job.itemsRead() == 300


@pytest.mark.spark
def test_join_shows_the_job_s_progress_on_a_terminal_only_and_erases_it(jet, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    jet.newJob(slowPipeline(), name="slow-joined").join()
    assert any(PROGRESS.fullmatch(text) and text.startswith("slow-joined: ") for text in shownLines(terminal))
    assert terminal.getvalue().endswith(CLEAR_LINE) and sys.stderr is terminal
    file = io.StringIO()
    monkeypatch.setattr(sys, "stderr", file)
    jet.newJob(slowPipeline(), name="slow-unseen").join()
    assert file.getvalue() == ""


@pytest.mark.spark
def test_sparkjet_run_keeps_the_script_s_prints_off_the_progress_line(spark, tmp_path, monkeypatch):
    script = tmp_path / "printing.py"
    script.write_text(
        "import time\n"
        "from sparkjet.planner import Jet\n"
        "from tests.planner.test_progress import slowPipeline\n"
        "job = Jet().newJob(slowPipeline(), name='printing')\n"
        "time.sleep(1.5)\n"
        "print('while it runs')\n"
        "job.join()\n"
        "print('after it ran')\n"
    )
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["run", str(script)]) == 0
    assert any(text.startswith("printing: ") for text in shownLines(terminal))
    assert [line for line in screen(terminal.getvalue()) if line] == ["while it runs", "after it ran"]


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
        assert any(
            re.fullmatch(r"stream-polled: \d+ micro-batch(es)? · 2 items read · \d+ s", text)
            for text in shownLines(terminal)
        )
    finally:
        job.cancel()
