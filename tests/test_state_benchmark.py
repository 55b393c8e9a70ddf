"""The state benchmark's smoke tests: ``python -m benchmarks.state --quick`` runs sparkjet and
Structured Streaming's HDFS store over the same micro-batches, checks their counts and reports
every table; ``--connect``, on small data, sparkjet on a classic session and on a Spark Connect
server the harness starts. Opt-in (SPARKJET_SCALE=1): its two Spark processes took 85 s on the 2-core machine at
load average 9 and 8 minutes at 30, over the half minute a test of the suite may take."""

import contextlib
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
    """The sizes of every file under ``directory``: the run's progress (its processes' logs grow);
    a file or directory the run removes meanwhile is left out."""
    sizes = []
    for root, _, names in os.walk(directory):  # skips a directory gone before it is listed
        for path in (os.path.join(root, name) for name in names):
            with contextlib.suppress(FileNotFoundError):
                sizes.append((path, os.stat(path).st_size))
    return tuple(sorted(sizes))


def completeReport(tmp_path: pathlib.Path, name: str, *options: str) -> str:
    """Run ``python -m benchmarks.state OPTIONS`` into ``tmp_path``; return its report ``name``, checked complete with 2 processes."""
    done = run(
        [sys.executable, "-m", "benchmarks.state", *options, "--workdir", str(tmp_path)],
        progress=lambda: writtenFiles(tmp_path), cwd=PROJECT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / name).read_text()
    assert "\nComplete: 2 processes.\n" in report
    return report


def test_quick_run_reports_times_bytes_and_memory_of_both_variants(tmp_path):
    report = completeReport(tmp_path, "STATE-quick.md", "--quick")
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


CONNECT = "sparkjet on Spark Connect"


def test_connect_run_reports_the_ratio_to_the_classic_engine_and_the_client_times(tmp_path):
    options = ("--connect", "--keys", "2000", "--words", "2000", "--warm-up", "1", "--measured", "2")
    report = completeReport(tmp_path, "STATE-connect.md", *options)
    assert sorted((row[0], row[1], row[3]) for row in tableRows(report, "Each run")) == [
        ("uniform 2,000", SPARKJET, "ok"), ("uniform 2,000", CONNECT, "ok"),
    ]
    [(keys, jet, connect, ratio)] = tableRows(report, "Micro-batch time: uniform input (median of the measured micro-batches)")
    assert keys == "2,000" and re.fullmatch(SECONDS, jet) and re.fullmatch(SECONDS, connect)
    assert float(ratio) == pytest.approx(float(connect[:-2]) / float(jet[:-2]), rel=0.02)  # of times rounded to 0.01 s
    [target] = [row for row in tableRows(report, "Targets") if "Spark Connect" in row[0]]
    assert target[1] == f"{connect} vs {jet} (× {ratio})" and target[2] in ("met", "missed")
    client = tableRows(report, "Micro-batch time: the query's and the client's")
    assert [row[1] for row in client] == [SPARKJET, CONNECT]
    assert all(re.fullmatch(SECONDS, cell) for row in client for cell in row[2:4])
    assert {row[1] for row in tableRows(report, "The driver's memory")} == {SPARKJET}
