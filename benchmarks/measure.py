"""Run a command in a fresh process session; time it and sample its processes from /proc.

Every process the command starts (the driver, Spark's JVM, Python workers, a Pool's children)
stays in the session the command leads, so summing the RSS of the session's processes covers
the whole tree, orphans included. The CPU time of the session's processes, against the
machine's busy time over the same window, tells how much other programs ran meanwhile.
"""

import os
import pathlib
import signal
import subprocess
import threading
import time

import attrs

PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.1
LINGER_SECONDS = 30


@attrs.frozen
class Finished:
    """How a process ended: wall time, exit code (None when killed at the timeout), peak RSS,
    the CPU time of its processes, and the CPUs other programs kept busy meanwhile."""

    wallSeconds: float
    returncode: int | None
    peakRss: int
    peakPythonRss: int
    cpuSeconds: float
    otherCpus: float


@attrs.frozen
class ProcessSample:
    """One process as /proc shows it."""

    pid: int
    name: str
    rss: int
    cpuSeconds: float


def machineBusySeconds() -> float:
    """Return the CPU seconds all CPUs spent busy since boot (/proc/stat)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
        int, open("/proc/stat").readline().split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / TICKS


def sessionProcesses(session: int) -> list[ProcessSample]:
    """Return the live (not zombie) processes of ``session``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = pathlib.Path(entry.path, "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            cpu = (int(fields[11]) + int(fields[12])) / TICKS
            found.append(ProcessSample(int(entry.name), name, int(fields[21]) * PAGE, cpu))
    return found


class Sampler(threading.Thread):
    """Samples the session until stopped: peak summed RSS (all, Python only), CPU per process."""

    def __init__(self, session: int) -> None:
        super().__init__(daemon=True)
        self.session = session
        self.peakRss = self.peakPythonRss = 0
        self.cpuSeconds: dict[int, float] = {}
        self._stopping = threading.Event()

    def run(self) -> None:
        """Sample at once, then every ``SAMPLE_SECONDS`` until stopped."""
        while True:
            processes = sessionProcesses(self.session)
            self.peakRss = max(self.peakRss, sum(p.rss for p in processes))
            python = sum(p.rss for p in processes if p.name.startswith("python"))
            self.peakPythonRss = max(self.peakPythonRss, python)
            self.cpuSeconds.update({p.pid: p.cpuSeconds for p in processes})
            if self._stopping.wait(SAMPLE_SECONDS):
                return

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stopping.set()
        self.join()


def runMeasured(
    argv: list[str], cwd: str, log: pathlib.Path, timeout: float, nice: int
) -> Finished:
    """Run ``argv``, its output in ``log``, at niceness ``nice``; kill it after ``timeout`` s."""
    with open(log, "wb") as output:
        busy, started = machineBusySeconds(), time.perf_counter()
        process = subprocess.Popen(
            argv, cwd=cwd, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        setSessionNice(process.pid, nice)
        sampler = Sampler(process.pid)
        sampler.start()
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            killSession(process.pid)
            process.wait()
            returncode = None
        wall = time.perf_counter() - started
    awaitSessionEnd(process.pid)
    sampler.stop()
    window, busy = time.perf_counter() - started, machineBusySeconds() - busy
    ours = sum(sampler.cpuSeconds.values())
    return Finished(
        wall,
        returncode,
        sampler.peakRss,
        sampler.peakPythonRss,
        ours,
        max(0.0, busy - ours) / window,
    )


def setSessionNice(session: int, nice: int) -> None:
    """Give the new session's scheduling group niceness ``nice``.

    With autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) every session is
    a group that shares the CPUs fairly with the others whatever its processes' own niceness,
    so the group's niceness is the one that counts against other programs.
    """
    autogroup = pathlib.Path(f"/proc/{session}/autogroup")
    if nice and autogroup.exists():
        autogroup.write_text(str(nice))


def killSession(session: int) -> None:
    """Kill every live process of ``session`` (all started by the measured command)."""
    for process in sessionProcesses(session):
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def awaitSessionEnd(session: int) -> None:
    """Let what the command left behind (a JVM shutting down) exit, so the next run starts quiet."""
    deadline = time.monotonic() + LINGER_SECONDS
    while sessionProcesses(session) and time.monotonic() < deadline:
        time.sleep(SAMPLE_SECONDS)
    killSession(session)
