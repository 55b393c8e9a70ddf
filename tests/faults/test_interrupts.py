"""Ctrl-C (SIGINT) while a job runs, at any moment: its Spark jobs stop, it leaves no output,
``sparkjet run`` ends with one line, and an interrupted ``join()`` raises CancelledError."""

import _thread
import concurrent.futures
import glob
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sparkjet.coredag.errors import Interrupted
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner.cli import main
from sparkjet.planner.interrupts import InterruptCancelsJobs
from tests.conftest import PROJECT, QUIET_SECONDS, eventually, finished, treeProgress

SPARKJET = os.path.join(os.path.dirname(sys.executable), "sparkjet")
"""The command the project installs beside the interpreter running the tests."""

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from sparkjet.pipeline import Pipeline, Sinks, Sources
    from sparkjet.planner import Jet

    output, when = sys.argv[1:3]

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
    while when == "submitted":  # the Ctrl-C sent on 'submitted' lands here, outside join()
        time.sleep(0.05)
    job.join()
    print("joined", flush=True)
    """
)


STARTING = "sparkjet: interrupted (Ctrl-C) while the Spark session start"
"""How the line of a Ctrl-C during the session's start begins."""


def interruptedRun(
    tmp_path, when: str, runner: tuple = (SPARKJET, "run"), environment: dict | None = None
) -> tuple[subprocess.CompletedProcess, str]:
    """Run SCRIPT with ``runner`` (``sparkjet run`` or python) in a process group of its own
    and send the group SIGINT, as a terminal's Ctrl-C does: ``when`` the session starts (its
    JVM runs: 'starting'), when it prints 'submitted', or once the job has processed an item
    ('running'). Its output goes to files, whose growth is the progress the waits watch."""
    script, output = tmp_path / "slow.py", str(tmp_path / "out")
    script.write_text(SCRIPT)
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with stdout.open("w") as out, stderr.open("w") as err:
        process = subprocess.Popen(
            [*runner, str(script), output, when], cwd=PROJECT, stdout=out, stderr=err, text=True, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(PROJECT), **(environment or {})},
        )
    progress = treeProgress(tmp_path)
    reached = {
        "starting": lambda: "starting" in stdout.read_text().split() and runsJava(process.pid),
        "submitted": lambda: "submitted" in stdout.read_text().split(),
        "running": lambda: os.path.exists(output + ".started"),
    }[when]
    eventually(lambda: reached() or process.poll() is not None, lambda: (progress(), runsJava(process.pid)))
    assert process.poll() is None, f"it ended before it was {when}:\n{stdout.read_text()}{stderr.read_text()}"
    os.killpg(process.pid, signal.SIGINT)
    finished(process, progress)
    ended = subprocess.CompletedProcess(process.args, process.returncode, stdout.read_text(), stderr.read_text())
    ended.pid = process.pid
    return ended, output


def processes() -> list[tuple[int, str, int]]:
    """Return the id, command and process group of each process now, as /proc has them."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as file:
                text = file.read()
        except OSError:
            continue  # it ended meanwhile
        fields = text[text.rindex(")") + 2 :].split()
        found.append((int(text.split(" ", 1)[0]), text[text.index("(") + 1 : text.rindex(")")], int(fields[2])))
    return found


def runsJava(group: int) -> bool:
    """Whether a process of ``group`` is a JVM: the one a Spark session starts runs from then
    until the session has started, seconds at the least."""
    return any(command == "java" and inGroup == group for _, command, inGroup in processes())


def pythonsInterruptedStatus() -> int:
    """Return how a Python script that an uncaught KeyboardInterrupt ends exits: killed by
    SIGINT, which a shell reports as status 130."""
    return subprocess.run([sys.executable, "-c", "raise KeyboardInterrupt"], capture_output=True).returncode


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
def test_ctrl_c_ends_a_python_script_with_one_line_and_pythons_status_too(tmp_path, when):
    ended, output = interruptedRun(tmp_path, when, runner=(sys.executable,))
    lines = sparkjetLines(ended.stderr)
    said = "sparkjet: Job 'job-1' was cancelled: interrupted (Ctrl-C)" if when == "running" else STARTING
    assert len(lines) == 1 and lines[0].startswith(said), ended.stderr
    assert ended.returncode == pythonsInterruptedStatus() == -signal.SIGINT
    assert not os.path.exists(output)


def test_ctrl_c_while_the_session_starts_ends_with_one_line_and_leaves_no_jvm(tmp_path):
    ended, output = interruptedRun(tmp_path, "starting")
    lines = sparkjetLines(ended.stderr)
    assert len(lines) == 1 and lines[0].startswith(STARTING), ended.stderr
    assert ended.returncode == 130
    assert not os.path.exists(output)
    assert groupEnds(ended.pid)  # the JVM goes with the process that started it


def test_ctrl_c_while_the_session_starts_is_acknowledged_before_it_has_started(tmp_path):
    ended, output = interruptedRun(tmp_path, "starting", environment={"SPARKJET_UI": "1"})
    lines = sparkjetLines(ended.stderr)
    assert lines[0] == f"{STARTING}s: stopping once it has started", ended.stderr
    assert [line for line in lines[1:] if not line.startswith("Spark UI: ")] == []  # said as it came, once
    assert ended.returncode == 130


def groupEnds(group: int, quiet: float = QUIET_SECONDS) -> bool:
    """Wait until no process of ``group`` is left; False if some are still there when none has
    ended for ``quiet`` seconds."""
    members = lastChange = None
    while True:
        now = {pid for pid, _, inGroup in processes() if inGroup == group}
        if not now:
            return True
        if now != members:
            members, lastChange = now, time.monotonic()
        if time.monotonic() - lastChange > quiet:
            return False
        time.sleep(0.1)


def test_ctrl_c_in_sparkjets_own_code_while_no_job_runs_is_one_line_not_a_traceback():
    handler = InterruptCancelsJobs()
    handler._previous = signal.default_int_handler
    inSparkjet = eval("sys._getframe()", {"__name__": "sparkjet.planner.jet", "sys": sys})
    assert repr(raisedBy(handler, inSparkjet)) == "Interrupted('interrupted (Ctrl-C)')"
    assert repr(raisedBy(handler, sys._getframe())) == "KeyboardInterrupt()"  # the user's own code: as Python does


def raisedBy(handler: InterruptCancelsJobs, frame) -> KeyboardInterrupt | None:
    """Return what ``handler`` raises for a SIGINT that came where ``frame`` runs (a
    KeyboardInterrupt let out of a test would end the whole test run)."""
    try:
        handler._handle(signal.SIGINT, frame)
    except KeyboardInterrupt as raised:
        return raised
    return None


def test_an_interrupt_said_when_ctrl_c_came_is_not_said_again(tmp_path, capsys):
    script = tmp_path / "said.py"
    script.write_text(
        "from sparkjet import Interrupted\n"
        "interrupted = Interrupted('interrupted (Ctrl-C) while the Spark session started')\n"
        "interrupted.acknowledged = True\n"
        "raise interrupted\n"
    )
    assert main(["run", str(script)]) == 130
    assert capsys.readouterr().err == ""
    handler = InterruptCancelsJobs()
    handler._printInterrupted(Interrupted, Interrupted("x"), None)
    assert capsys.readouterr().err == "sparkjet: x\n"
    error = Interrupted("x")
    error.acknowledged = True
    handler._printInterrupted(Interrupted, error, None)
    assert capsys.readouterr().err == ""


@pytest.mark.spark
def test_an_interrupted_join_cancels_the_job_and_raises_cancelled_error(jet, tmp_path):
    output = tmp_path / "out"
    def slowly(n: int) -> int:
        time.sleep(0.05)
        return n

    p = Pipeline.create()
    p.readFrom(Sources.items(range(2000))).map(slowly).writeTo(Sinks.files(str(output)))
    job = jet.newJob(p)
    interruptOnceJoining(threading.get_ident())  # what a notebook's interrupt does
    with pytest.raises(concurrent.futures.CancelledError) as raised:
        job.join()
    assert str(raised.value) == f"Job '{job.getName()}' was cancelled: interrupted (Ctrl-C)"
    assert not output.exists()


def interruptOnceJoining(thread: int) -> None:
    """Interrupt ``thread`` (the main one) once it waits in ``Job.join()``, from a thread of
    its own, which gives up once Spark's work stays still."""

    def joining() -> bool:
        frame = sys._current_frames().get(thread)
        while frame is not None and frame.f_code.co_qualname != "Job.join":
            frame = frame.f_back
        return frame is not None

    def interrupt():
        eventually(joining)
        _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()


def test_the_message_names_every_job_ctrl_c_cancelled():
    from sparkjet.planner.interrupts import cancelledMessage

    assert cancelledMessage(["job-1"]) == "Job 'job-1' was cancelled: interrupted (Ctrl-C)"
    assert cancelledMessage(["a", "b"]) == "Jobs 'a', 'b' were cancelled: interrupted (Ctrl-C)"
