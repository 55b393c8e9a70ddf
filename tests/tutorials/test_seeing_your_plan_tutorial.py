"""Tutorial 05 explains its plan, and its figures equal counts made with collections.Counter."""

import html
import re
import runpy

import pytest

from tests.conftest import PROJECT

pytestmark = pytest.mark.spark


@pytest.fixture
def figures(smallCorpus):
    """Independent figures of the small corpus: lines, strings split, words, long words."""
    directory, counts = smallCorpus
    lines = [line for path in sorted(directory.iterdir()) for line in path.read_text().splitlines()]
    strings = [text for line in lines for text in re.split(r"\W+", line.lower())]
    long = [word for word in strings if len(word) >= 7]
    return {
        "lines": len(lines), "strings": len(strings), "words": sum(counts.values()),
        "long": len(long), "distinctLong": len(set(long)),
    }


def test_seeing_your_plan_explains_runs_and_counts_what_each_stage_did(smallCorpus, figures, tmp_path, capsys):
    directory, _ = smallCorpus
    module = runpy.run_path(str(PROJECT / "tutorials" / "05_seeing_your_plan.py"))
    result = module["main"](["--input", str(directory), "--output", str(tmp_path)])
    explanation = result["explanation"]
    assert "not fused: `drop empty` has 2 downstream stages (`long words`, `count all words`)" in explanation
    assert "`count each long word`: two-stage: prepare per task, combine after the shuffle" in explanation
    assert "runs the stages `split into words`, `drop empty`, fused into one loop" in explanation

    metrics = result["metrics"]
    fused = metrics.vertex("fused(split into words, drop empty)")
    assert [(s.name, s.itemsIn, s.itemsOut) for s in fused.stages] == [
        ("split into words", figures["lines"], figures["strings"]),
        ("drop empty", figures["strings"], figures["words"]),
    ]
    longWords = metrics.vertex("long words")
    assert (longWords.itemsIn, longWords.itemsOut) == (figures["words"], figures["long"])
    assert metrics.edge("long words", "count each long word-prepare").items == figures["long"]
    assert metrics.vertex("listSink(long words)").itemsIn == figures["distinctLong"]
    assert (result["allWords"], result["longWords"]) == (figures["words"], figures["distinctLong"])

    printed = capsys.readouterr().out
    assert f"    drop empty: {figures['strings']:,} in, {figures['words']:,} out" in printed
    dropped = (figures["words"] - figures["long"]) * 100 // figures["words"]
    drawn = html.unescape((tmp_path / "plan-with-figures.svg").read_text())
    assert f"{figures['words']:,} in -> {figures['long']:,} out (-{dropped}%)" in drawn
    assert "long words" in (tmp_path / "plan.svg").read_text()
    report = (tmp_path / "report.html").read_text()
    assert 'id="vertices"' in report and "not fused: `drop empty` has 2 downstream stages" in report
