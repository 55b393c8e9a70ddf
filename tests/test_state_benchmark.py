"""The state benchmark's smoke test: ``python -m benchmarks.state --quick`` runs sparkjet and
Structured Streaming's HDFS store over the same micro-batches, checks their counts and reports
every table. Opt-in (SPARKJET_SCALE=1): its two Spark processes took 85 s on the 2-core machine at
load average 9 and 8 minutes at 30, over the half minute a test of the suite may take."""

import os
import pathlib
import re
import sys

import pytest

from tests.conftest import PROJECT, run

pytestmark = pytest.mark.skipif(
    os.environ.get("SPARKJET_SCALE") != "1", reason="opt-in: SPARKJET_SCALE=1 (two Spark processes, minutes)"
)
SPARKJET, HDFS = "sparkjet", "SS `groupBy().count()`, HDFS store"
SECONDS = r"\d+\.\d\d s"


def tableRows(report: str, heading: str) -> list[list[str]]:
    """The cells of each row of the table under ``## heading``, its header and rule left out."""
    section = report.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in rows[2:]]


def writtenFiles(directory: pathlib.Path) -> tuple:
    """The sizes of every file under ``directory``: the run's progress (its processes' logs grow)."""
    return tuple(sorted((str(p), p.stat().st_size) for p in directory.rglob("*") if p.is_file()))


def test_quick_run_reports_times_bytes_and_memory_of_both_variants(tmp_path):
    done = run(
        [sys.executable, "-m", "benchmarks.state", "--quick", "--workdir", str(tmp_path)],
        progress=lambda: writtenFiles(tmp_path), cwd=PROJECT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "STATE-quick.md").read_text()
    assert "\nComplete: 2 processes.\n" in report
    assert sorted((row[0], row[1], row[3]) for row in tableRows(report, "Each run")) == [
        ("uniform 2,000", HDFS, "ok"), ("uniform 2,000", SPARKJET, "ok"),
    ]
    [times] = tableRows(report, "Micro-batch time: uniform input (median of the measured micro-batches)")
    keys, jet, hdfs, ratio = times
    assert keys == "2,000" and re.fullmatch(SECONDS, jet) and re.fullmatch(SECONDS, hdfs)
    assert float(ratio) == pytest.approx(float(hdfs[:-2]) / float(jet[:-2]), abs=0.01)
    written = {row[1]: row for row in tableRows(report, "State written per micro-batch")}
    assert int(written[SPARKJET][3].replace(",", "")) > 0 and int(written[HDFS][3].replace(",", "")) > 0
    assert int(written[SPARKJET][5].replace(",", "")) > 0 and written[HDFS][5] == "—"
    memory = tableRows(report, "The driver's memory")
    assert sorted((row[1], row[2]) for row in memory) == [(HDFS, "1"), (HDFS, "3"), (SPARKJET, "1"), (SPARKJET, "3")]
    assert all(re.fullmatch(r"[\d,]+ MiB", cell) for row in memory for cell in row[3:])
