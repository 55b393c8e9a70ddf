"""What the numbers were measured on: the machine, the versions, and the sparkjet source."""

import hashlib
import importlib.metadata
import os
import datetime
import platform
import shlex
import subprocess
import sys

from benchmarks.inputs import PROJECT

PACKAGES = ("pipeline", "planner", "coredag")


def describe() -> dict[str, str]:
    """Return the machine's and the software's description, in the order RESULTS.md shows it."""
    return {
        "CPU": f"{cpuModel()}, {os.cpu_count()} CPUs, nproc {len(os.sched_getaffinity(0))}",
        "RAM": f"{memTotalGiB():.1f} GiB",
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "Java": javaVersion(),
        "PySpark": importlib.metadata.version("pyspark"),
        "sparkjet commit": gitDescription(),
    }


def cpuModel() -> str:
    """Return the CPU model name from /proc/cpuinfo."""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def memTotalGiB() -> float:
    """Return the RAM /proc/meminfo reports, in GiB."""
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024 / 1024
    return 0.0


def javaVersion() -> str:
    """Return the first line ``java -version`` prints."""
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (done.stderr or done.stdout).splitlines()[0]


def gitDescription() -> str:
    """Return HEAD's commit and the sparkjet files that differ from it (benchmarks/ aside)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True
    )
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=PROJECT, capture_output=True, text=True
    )
    changed = [
        line[3:] for line in status.stdout.splitlines() if not line[3:].startswith("benchmarks/")
    ]
    commit = head.stdout.strip() or "unknown"
    return (
        f"{commit}, uncommitted changes in: {', '.join(changed)}"
        if changed
        else f"{commit}, no uncommitted changes"
    )


def sourceFingerprint() -> str:
    """Return a short hash of sparkjet's Python sources, to tell whether they changed mid-run."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((PROJECT / package).rglob("*.py")):
            digest.update(str(path.relative_to(PROJECT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def runHeader(module: str, argv: list[str] | None, began: datetime.datetime) -> dict[str, str]:
    """Return a report's header: the command typed (``python -m module`` with ``argv``, else this
    process's arguments), when it began, the machine and the load average at the start."""
    typed = shlex.join(["python", "-m", module, *(argv if argv is not None else sys.argv[1:])])
    return {
        "Command": f"`{typed}` (from the project directory)",
        "Date": f"{began:%Y-%m-%d %H:%M %Z}",
        **describe(),
        "Load average (1, 5, 15 min) at start": loadAverage(),
    }


def loadAverage() -> str:
    """Return the 1-, 5- and 15-minute load averages."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())
