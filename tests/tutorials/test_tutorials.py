"""Every tutorial runs on small data and tells the truth about its results."""

import re
import runpy

import pytest

from tests.conftest import PROJECT

pytestmark = pytest.mark.spark

TUTORIALS = PROJECT / "tutorials"


def test_every_tutorial_has_a_page_and_a_script():
    scripts = sorted(path.stem for path in TUTORIALS.glob("[0-9][0-9]_*.py"))
    pages = sorted(path.stem for path in TUTORIALS.glob("[0-9][0-9]_*.md"))
    assert scripts and scripts == pages


def test_word_count_tutorial_prints_the_top_words_and_draws_the_plan(
    spark, smallCorpus, tmp_path, capsys
):
    directory, expected = smallCorpus
    svg = tmp_path / "plan.svg"
    module = runpy.run_path(str(TUTORIALS / "01_word_count.py"))
    top = module["main"](["--input", str(directory), "--top", "5", "--svg", str(svg)])
    assert [count for _, count in top] == [count for _, count in expected.most_common(5)]
    assert all(expected[word] == count for word, count in top)
    printed = capsys.readouterr().out
    assert re.search(rf"^\s+{top[0][1]}  {top[0][0]}$", printed, re.MULTILINE)
    assert f"The plan is drawn in {svg}" in printed
    assert svg.read_text().startswith("<?xml") and "listSink(counts)" in svg.read_text()
