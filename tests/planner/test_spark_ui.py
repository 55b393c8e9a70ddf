"""Spark's web UI in the sessions sparkjet starts: on unless turned off, its address said once on
stderr, its Spark jobs named after the sparkjet job and vertex; reachable on 127.0.0.1 while a
job runs, and on no other address: a local session's JVM listens on 127.0.0.1 alone (issue 25,
point 11). Spark runs one session per process, so the session with a UI runs in a script."""

import contextlib
import glob
import ipaddress
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from sparkjet.coredag.runtime import session
from sparkjet.coredag.runtime.execution import sparkJobDescription
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.state_store import StateStore
from sparkjet.planner import Jet
from tests.conftest import PROJECT, QUIET_SECONDS, eventually, finished, stop

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from sparkjet.pipeline import Pipeline, Sinks, Sources
    from sparkjet.planner import Jet

    released = sys.argv[1]

    def waiting(n):
        while not os.path.exists(released):
            time.sleep(0.05)
        return n

    p = Pipeline.create()
    p.readFrom(Sources.items(range(4))).map(waiting).writeTo(Sinks.list("out"))
    jet = Jet(master="local[2]")
    jet.newJob(p, name="ui-check").join()
    jet.newJob(p, name="second-job").join()
    print("items", sorted(jet.getList("out")), flush=True)
    jet.shutdown()
    os.environ["SPARKJET_UI"] = "off"
    quiet = Jet(master="local[2]")
    print("second session's UI:", quiet.spark().sparkContext.uiWebUrl, flush=True)
    quiet.shutdown()
    """
)

UI_LINE = re.compile(r"Spark UI: (http://[^:/\s]+:(\d+))$")


def test_a_started_session_shows_the_ui_says_where_once_and_names_spark_jobs_in_jets_terms(tmp_path):
    script, released = tmp_path / "ui.py", tmp_path / "released"
    script.write_text(SCRIPT)
    environment = {k: v for k, v in os.environ.items() if k != session.UI_VARIABLE}
    written = tmp_path / "stderr.txt"
    with open(written, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(script), str(released)],
            cwd=PROJECT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**environment, "PYTHONPATH": str(PROJECT)},
            start_new_session=True,
        )
    try:
        eventually(lambda: uiLines(written) or process.poll() is not None, progress=lambda: written.stat().st_size)
        assert uiLines(written), "no 'Spark UI:' line on stderr:\n" + written.read_text()
        said = uiLines(written)[0]
        port = UI_LINE.fullmatch(said).group(2)
        jobsPageNaming(f"http://127.0.0.1:{port}/jobs/", "sparkjet job 'ui-check': vertex 'listSink(out)'")
        listening = listeningSockets(javaProcess(process.pid))
        assert int(port) in {port for _, port in listening}, listening
        assert all(isLoopback(address) for address, _ in listening), f"the JVM listens beyond 127.0.0.1: {listening}"
        released.touch()
        stdout = finished(process, progress=lambda: written.stat().st_size).stdout
    finally:
        released.touch()
        if process.poll() is None:
            stop(process)
    assert process.returncode == 0, written.read_text()
    assert "items [0, 0, 1, 1, 2, 2, 3, 3]" in stdout
    assert "second session's UI: None" in stdout, "SPARKJET_UI=off starts a session without the UI"
    assert [line for line in written.read_text().splitlines() if "Spark UI" in line] == [said], "said once"


def uiLines(stderr) -> list[str]:
    """Return the 'Spark UI: ...' lines written so far into the file ``stderr``."""
    return [line for line in stderr.read_text().splitlines() if UI_LINE.fullmatch(line)]


def javaProcess(pid: int) -> int:
    """Return the id of the JVM that process ``pid`` started (its descendant running java)."""
    children = [int(child) for path in glob.glob(f"/proc/{pid}/task/*/children") for child in open(path).read().split()]
    for child in children:
        with open(f"/proc/{child}/comm") as comm:
            if comm.read().strip() == "java":
                return child
    for child in children:
        with contextlib.suppress(LookupError):
            return javaProcess(child)
    raise LookupError(f"process {pid} runs no java")


def listeningSockets(pid: int) -> set[tuple[str, int]]:
    """Return the (address, port) of each TCP socket process ``pid`` listens on, read from /proc."""
    inodes = set()
    for descriptor in glob.glob(f"/proc/{pid}/fd/*"):
        with contextlib.suppress(OSError):
            target = os.readlink(descriptor)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    listening = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        if not os.path.exists(table):
            continue
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A: LISTEN
                    address, port = local.split(":")
                    words = [bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8)]
                    listening.add((socket.inet_ntop(family, b"".join(words)), int(port, 16)))
    return listening


def isLoopback(address: str) -> bool:
    """Whether ``address`` (IPv4, IPv6 or IPv4 mapped into IPv6) is a loopback address."""
    parsed = ipaddress.ip_address(address)
    mapped = getattr(parsed, "ipv4_mapped", None)
    return (mapped or parsed).is_loopback


def jobsPageNaming(url: str, description: str) -> None:
    """Wait until the UI's jobs page lists a Spark job of ``description`` (each answer 200 OK),
    failing once the page has stayed the same for ``QUIET_SECONDS``."""
    page = {"text": ""}

    def listed() -> bool:
        with urllib.request.urlopen(url, timeout=QUIET_SECONDS) as answer:
            assert answer.status == 200
            page["text"] = answer.read().decode("utf-8", "replace")
        if f'<span class="description-input">{description}</span>' in page["text"]:
            return True
        time.sleep(0.5)  # the next look, not a limit
        return False

    eventually(listed, progress=lambda: page["text"])


@pytest.mark.parametrize("ui, setting", [(True, None), (False, "false")])
def test_a_session_turns_the_ui_off_only_when_asked(ui, setting):
    settings = session._sparkjetSettings(started=True, master="local[2]", ui=ui)
    assert settings.get("spark.ui.enabled") == setting  # on: Spark's default, or the user's spark.ui.enabled


@pytest.mark.parametrize("value, wanted", [(None, True), ("1", True), ("0", False), ("off", False), (" False ", False)])
def test_sparkjet_ui_in_the_environment_turns_the_ui_off(monkeypatch, value, wanted):
    monkeypatch.delenv(session.UI_VARIABLE, raising=False)
    if value is not None:
        monkeypatch.setenv(session.UI_VARIABLE, value)
    assert session.uiWanted() is wanted
    assert session.uiWanted(True) is True and session.uiWanted(False) is False, "Jet(ui=...) wins"


def test_jet_passes_ui_to_the_session_it_takes(monkeypatch):
    taken = []
    monkeypatch.setattr(session.sharedSessions, "take", lambda master, ui, remote: taken.append(ui) or "a session")
    monkeypatch.setattr(session, "readyForSparkjet", lambda spark: spark)
    assert Jet(master="local[1]", ui=False).spark() == "a session"
    assert taken == [False]


def test_a_given_session_keeps_its_own_ui():
    with pytest.raises(ValueError) as raised:
        Jet(spark=object(), ui=False)
    assert str(raised.value) == (
        "Jet: pass either spark (a SparkSession) or ui, not both: ui is for a session Jet starts, "
        "a given one keeps its own UI (spark.ui.enabled)"
    )


def test_spark_jobs_are_described_by_sparkjet_job_and_vertex():
    assert (
        sparkJobDescription("word-count", "listSink(counts)") == "sparkjet job 'word-count': vertex 'listSink(counts)'"
    )
    batch = MicroBatch(batchId=3, rows=None, restored={}, stateStore=StateStore("/unused", 3))
    assert sparkJobDescription("clicks", "map", batch) == "sparkjet job 'clicks', micro-batch 3: vertex 'map'"
