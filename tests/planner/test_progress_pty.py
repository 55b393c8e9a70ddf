"""``python script.py`` on a terminal: the script's job shows its progress while join() waits,
the elapsed time ticking on while its one task runs, and the line is erased before the
script's own output, which it never glues onto. Run under a pseudo-terminal."""

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from sparkjet.planner.progress import CLEAR_LINE
from tests.conftest import QUIET_SECONDS
from tests.planner.test_progress import screen

pytestmark = pytest.mark.spark

SCRIPT = """
import pathlib
import threading
import time

from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import Jet

started = pathlib.Path({started!r})


def slow(item):
    started.touch()
    time.sleep(4)
    return item


def printMeanwhile():
    while not started.exists():
        time.sleep(0.05)
    time.sleep(1.5)
    print("while it runs")


p = Pipeline.create()
p.readFrom(Sources.items([1])).map(slow).writeTo(Sinks.list("out"))
jet = Jet(master="local[1]")
job = jet.newJob(p, name="pty-job")
threading.Thread(target=printMeanwhile).start()
job.join()
print("after it ran:", jet.getList("out"))
jet.shutdown()
"""


def runOnTerminal(script) -> str:
    """Run ``script`` with its stdout and stderr on a new pseudo-terminal; return what it wrote
    there (the terminal's ``\\r\\n`` line ends made ``\\n``). Fail once it wrote nothing for
    ``QUIET_SECONDS``."""
    control, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, close_fds=True
    )
    os.close(terminal)
    written, still = bytearray(), time.monotonic()
    try:
        while time.monotonic() - still < QUIET_SECONDS:
            if select.select([control], [], [], 0.5)[0]:
                try:
                    chunk = os.read(control, 65536)
                except OSError:  # the script ended: the terminal has no other end any more
                    break
                if not chunk:
                    break
                written, still = written + chunk, time.monotonic()
            elif process.poll() is not None:
                break
    finally:
        os.close(control)
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == 0, written.decode(errors="replace")
    return written.decode().replace("\r\n", "\n")


def test_a_script_on_a_terminal_shows_progress_that_ticks_and_never_glues(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(started=str(tmp_path / "started")))
    written = runOnTerminal(script)
    waiting = re.findall(r"pty-job: stage 1/1 · tasks 0/1 · waiting for 1 task · (\d+) s", written)
    assert len(set(waiting)) >= 2, written
    assert written.index("pty-job: stage") < written.index("while it runs") < written.rindex("pty-job: stage")
    assert CLEAR_LINE + "while it runs" in written
    fromProgressOn = written[written.index(CLEAR_LINE):]  # before: the JVM's start-up warning
    assert [line for line in screen(fromProgressOn) if line] == ["while it runs", "after it ran: [1]"]
