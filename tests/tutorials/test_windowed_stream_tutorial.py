"""Tutorial 07 counts the words of a stream of files per ten seconds of event time: every
window equals a count made per window with collections.Counter, each is reported once, the
last file's own window stays open, and each window closes when the first file whose last
event time less the allowed lag reaches the window's end is read."""

import contextlib
import html
import io
import re
import runpy
from collections import Counter

import pytest

from sparkjet.coredag.model.window_result import KeyedWindowResult
from tests.conftest import PROJECT, tokenize

pytestmark = pytest.mark.spark

LINES, LINES_PER_FILE, STEP, WINDOW, LAG, LAST_AHEAD = 220, 75, 100, 10_000, 2_000, 60_000


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    """The tutorial's ``main`` run once on the first 220 lines, 75 to a file: what it returned,
    printed and drew."""
    module = runpy.run_path(str(PROJECT / "tutorials" / "07_windowed_word_count_over_a_stream.py"))
    output = tmp_path_factory.mktemp("tutorial-07")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = module["main"](
            ["--lines", str(LINES), "--lines-per-file", str(LINES_PER_FILE), "--top", "3", "--output", str(output)]
        )
    return result, printed.getvalue(), html.unescape((output / "windowed-word-count-plan.svg").read_text())


@pytest.fixture(scope="module")
def expectedCounts(corpusLines) -> Counter:
    """``(start, end, word) -> count``: line i happens at i * STEP ms, in the window starting at
    its time less the time modulo the window's size."""
    counts = Counter()
    for number, line in enumerate(corpusLines[:LINES]):
        time = number * STEP
        start = time - time % WINDOW
        counts.update((start, start + WINDOW, word) for word in tokenize(line))
    return counts


def lastTimes() -> dict[str, int]:
    """The files in the order they are dropped, each with its last event time."""
    times = {
        f"lines-{number:04d}.txt": (min(first + LINES_PER_FILE, LINES) - 1) * STEP
        for number, first in enumerate(range(0, LINES, LINES_PER_FILE))
    }
    times["last.txt"] = (LINES - 1) * STEP + LAST_AHEAD
    return times


def expectedClosings() -> dict[int, str]:
    """``start -> file``: the first file whose last event time less the lag reaches the end of
    the window (each file is read by a micro-batch of its own)."""
    return {
        start: next(name for name, time in lastTimes().items() if time - LAG >= start + WINDOW)
        for start in range(0, LINES * STEP, WINDOW)
    }


def test_every_window_equals_a_count_per_window_made_with_a_counter(run, expectedCounts):
    result, _, _ = run
    assert all(isinstance(item, KeyedWindowResult) and not item.isEarly for item in result["results"])
    reported = Counter({(item.start, item.end, item.key): item.result for item in result["results"]})
    assert reported == expectedCounts


def test_no_window_is_reported_twice_and_the_last_files_window_stays_open(run):
    result, _, _ = run
    keys = [(item.start, item.end, item.key) for item in result["results"]]
    assert len(keys) == len(set(keys))
    lastStart = lastTimes()["last.txt"] // WINDOW * WINDOW
    assert lastStart not in {start for start, _, _ in keys}
    assert sorted(result["windows"]) == [(start, start + WINDOW) for start in range(0, LINES * STEP, WINDOW)]


def test_a_window_closes_when_a_file_takes_the_watermark_past_its_end(run):
    result, _, _ = run
    # lines-0002.txt ends at 21,900 ms, past the second window's end, but at 19,900 ms less the lag
    assert result["closedBy"] == expectedClosings() == {0: "lines-0001.txt", 10_000: "last.txt", 20_000: "last.txt"}


def test_it_prints_the_top_words_of_each_window_and_draws_the_plan(run, expectedCounts):
    _, printed, svg = run
    first = Counter({word: count for (start, _, word), count in expectedCounts.items() if start == 0})
    top = sorted(first.items(), key=lambda entry: (-entry[1], entry[0]))[:3]
    line = re.search(r"^  \[     0 ms, 10,000 ms\) .*$", printed, re.MULTILINE).group(0)
    assert line.endswith(f"{first.total()} words, closed by lines-0001.txt:  " + ", ".join(f"{w} {c}" for w, c in top))
    assert re.search(r"^  at +[\d.]+ s  last\.txt +1 line, event time 81,900 ms$", printed, re.MULTILINE)
    assert "after cancel() the job is FAILED" in printed
    assert re.search(r"^  sliding-window: .*, watermark 79,000$", printed, re.MULTILINE), "the last time less the lag, to the stride"
    assert re.search(r"^\d+ micro-batches, 221 items read", printed, re.MULTILINE)
    assert "incoming files-add-timestamps" in svg and "inserts watermarks" in svg and "windows by event time" in svg
