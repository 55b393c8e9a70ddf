"""Ctrl-C (SIGINT) while a job runs, at any moment: its Spark jobs stop, it leaves no output,
``sparkjet run`` ends with one line, and an interrupted ``join()`` raises CancelledError."""

import _thread
import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sparkjet.pipeline import Pipeline, Sinks, Sources
from tests.conftest import PROJECT

SPARKJET = os.path.join(os.path.dirname(sys.executable), "sparkjet")
"""The command the project installs beside the interpreter running the tests."""

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from sparkjet.pipeline import Pipeline, Sinks, Sources
    from sparkjet.planner import Jet

    output = sys.argv[1]

    def slowly(n):
        if n == 0:
            open(output + ".started", "w").close()
        time.sleep(0.05)
        return n

    p = Pipeline.create()
    p.readFrom(Sources.items(range(2000))).map(slowly).writeTo(Sinks.files(output))
    print("starting", flush=True)
    job = Jet(master="local[2]").newJob(p)
    print("submitted", flush=True)
    time.sleep(1.0)  # Ctrl-C on 'submitted' lands here, outside join()
    job.join()
    print("joined", flush=True)
    """
)


def interruptedRun(tmp_path, when: str, runner: tuple = (SPARKJET, "run")) -> tuple[subprocess.CompletedProcess, str]:
    """Run SCRIPT with ``runner`` (``sparkjet run`` or python) in a process group of its own
    and send the group SIGINT, as a terminal's Ctrl-C does: ``when`` it prints 'starting' (the
    session starts), 'submitted', or once the job has processed an item ('running')."""
    script, output = tmp_path / "slow.py", str(tmp_path / "out")
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [*runner, str(script), output], cwd=PROJECT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    lines = iter(process.stdout.readline, "")
    if when != "running":
        assert when in (line.strip() for line in lines), process.communicate()
    if when == "starting":
        time.sleep(1.0)  # planning takes milliseconds, starting the JVM and Spark seconds
    while when == "running" and not os.path.exists(output + ".started"):
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    ended = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    ended.pid = process.pid
    return ended, output


def sparkjetLines(stderr: str) -> list[str]:
    """Return the lines of stderr but the JVM's own start-up notice."""
    return [line for line in stderr.splitlines() if "jdk.incubator" not in line]


@pytest.mark.parametrize("when", ["submitted", "running"])
def test_ctrl_c_while_a_job_runs_cancels_it_leaves_no_output_and_ends_with_one_line(tmp_path, when):
    ended, output = interruptedRun(tmp_path, when)
    assert sparkjetLines(ended.stderr) == ["sparkjet: Job 'job-1' was cancelled: interrupted (Ctrl-C)"]
    assert ended.returncode == 130
    assert "joined" not in ended.stdout
    assert not os.path.exists(output)


@pytest.mark.parametrize("when", ["starting", "running"])
def test_ctrl_c_ends_a_python_script_with_one_line_too(tmp_path, when):
    ended, output = interruptedRun(tmp_path, when, runner=(sys.executable,))
    assert len(sparkjetLines(ended.stderr)) == 1
    assert sparkjetLines(ended.stderr)[0].startswith("sparkjet: ")
    assert sparkjetLines(ended.stderr)[0].endswith("interrupted (Ctrl-C)" if when == "running" else "started")
    assert not os.path.exists(output)


def test_ctrl_c_while_the_session_starts_ends_with_one_line_and_leaves_no_jvm(tmp_path):
    ended, output = interruptedRun(tmp_path, "starting")
    assert sparkjetLines(ended.stderr) == ["sparkjet: interrupted (Ctrl-C) while the Spark session started"]
    assert ended.returncode == 130
    assert not os.path.exists(output)
    assert groupEnds(ended.pid, within=30)  # the JVM goes with the process that started it


def groupEnds(group: int, within: float) -> bool:
    """Wait until no process of ``group`` is left, ``within`` seconds at most."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.spark
def test_an_interrupted_join_cancels_the_job_and_raises_cancelled_error(jet, tmp_path):
    output = tmp_path / "out"
    def slowly(n: int) -> int:
        time.sleep(0.05)
        return n

    p = Pipeline.create()
    p.readFrom(Sources.items(range(2000))).map(slowly).writeTo(Sinks.files(str(output)))
    job = jet.newJob(p)
    threading.Timer(1.0, _thread.interrupt_main).start()  # what a notebook's interrupt does
    with pytest.raises(concurrent.futures.CancelledError) as raised:
        job.join()
    assert str(raised.value) == f"Job '{job.getName()}' was cancelled: interrupted (Ctrl-C)"
    assert not output.exists()


def test_the_message_names_every_job_ctrl_c_cancelled():
    from sparkjet.planner.interrupts import cancelledMessage

    assert cancelledMessage(["job-1"]) == "Job 'job-1' was cancelled: interrupted (Ctrl-C)"
    assert cancelledMessage(["a", "b"]) == "Jobs 'a', 'b' were cancelled: interrupted (Ctrl-C)"
