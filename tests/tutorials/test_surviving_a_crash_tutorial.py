"""Tutorial 08 kills a windowed word count mid-stream and runs it again: the output then holds
every window's count exactly once, equal to a count made offline per window, and the
checkpoint is gone."""

import contextlib
import io
import runpy
from collections import Counter

import pytest

from tests.conftest import PROJECT, tokenize

pytestmark = pytest.mark.spark

LINES, STEP, WINDOW = 200, 100, 2_000


def test_the_killed_and_restarted_job_writes_every_window_exactly_once(corpusLines, tmp_path, childSessions):
    module = runpy.run_path(str(PROJECT / "tutorials" / "08_surviving_a_crash.py"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = module["main"](["--lines", str(LINES), "--kill-after", "2", "--output", str(tmp_path)])
    counts = Counter(
        (number * STEP - number * STEP % WINDOW, word)
        for number, line in enumerate(corpusLines[:LINES]) for word in tokenize(line)
    )
    expected = Counter(f"{start} {word} {count}" for (start, word), count in counts.items())
    assert result["after"] == expected
    assert 0 < sum(result["before"].values()) < sum(expected.values()), "killed with part of the output written"
    assert not result["checkpoint"].exists()
    assert "Every window exactly once: yes (0 repeated, 0 lost); the checkpoint is gone" in printed.getvalue()
