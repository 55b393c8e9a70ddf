"""Tutorial 03 aggregates words and speeches: every result against a plain-Python computation."""

import copy
import math
import re
import runpy
import statistics
from collections import Counter, defaultdict

import pytest

from sparkjet.planner import plan
from tests.conftest import PROJECT, tokenize
from tests.tutorials.conftest import speechBlocks

TUTORIALS = PROJECT / "tutorials"
SCRIPT = TUTORIALS / "03_aggregate_operations.py"
PAGE = TUTORIALS / "03_aggregate_operations.md"


@pytest.fixture(scope="module")
def tutorial() -> dict:
    """The tutorial script's globals; running it this way starts nothing."""
    return runpy.run_path(str(SCRIPT))


def independentResults(directory, counts: Counter) -> dict:
    """What the tutorial's pipelines must find, computed with Counter, statistics and sets."""
    longest = max(len(word) for word in counts)
    byLetter = defaultdict(set)
    for word in counts:
        byLetter[word[0]].add(word)
    spoken, mentions, speeches = defaultdict(list), Counter(), Counter()
    for speaker, lines in speechBlocks(sorted(directory.glob("*.txt"))):
        speeches[speaker] += 1
        for line in lines:
            spoken[speaker] += tokenize(line)
            mentions.update(tokenize(line))
    return {
        "wordCount": sum(counts.values()),
        "averageLength": statistics.fmean(len(word) for word in counts.elements()),
        "longestWord": max(word for word in counts if len(word) == longest),
        "wordsByLetter": dict(byLetter),
        "richness": {s: len(set(ws)) / len(ws) for s, ws in spoken.items() if ws},
        "namedAndSpeaking": {s: (mentions[s], n) for s, n in speeches.items()},
    }


# The speeches (no Spark)


def test_a_speech_is_a_heading_that_starts_a_block_and_the_blocks_lines(tutorial):
    lines = [
        "the end of a speech begun in another file",
        "",
        "ROMEO:",
        "But, soft! what light",
        "through yonder window breaks?",
        "",
        "Ghost of GREY:",
        "",
        "",
        "JULIET:",
        "Ay me!",
    ]
    assert list(tutorial["speechesIn"](lines)) == [
        ("romeo", "But, soft! what light\nthrough yonder window breaks?"),
        ("ghost of grey", ""),
        ("juliet", "Ay me!"),
    ]


def test_read_speeches_cuts_each_file_at_empty_lines(tutorial, smallCorpus):
    directory, _ = smallCorpus
    speeches = tutorial["readSpeeches"](str(directory), "*.txt")
    blocks = speechBlocks(sorted(directory.glob("*.txt")))
    assert speeches == [(speaker, "\n".join(lines)) for speaker, lines in blocks]
    assert (directory / "b.txt").read_text().startswith("Let him alone;")
    assert all("Let him alone;" not in text for _, text in speeches)


# The vocabulary-richness operation, called by hand as the processors call it (no Spark)


def test_richness_primitives_keep_jets_rules(tutorial):
    op = tutorial["VOCABULARY_RICHNESS"]
    left, right = op.createFn(), op.createFn()
    for word in ["to", "be", "or", "not", "to", "be"]:
        left = op.accumulateFn(left, ("hamlet", word))
    for word in ["to", "die", "to", "sleep"]:
        right = op.accumulateFn(right, ("hamlet", word))
    assert left == ({"to", "be", "or", "not"}, 6) and right == ({"to", "die", "sleep"}, 4)
    rightBefore = copy.deepcopy(right)
    merged = op.combineFn(left, right)
    assert merged[0] is left[0], "combine folds into the left accumulator's set"
    assert right == rightBefore, "combine must leave the right accumulator as it was"
    assert merged == ({"to", "be", "or", "not", "die", "sleep"}, 10)
    assert op.exportFn(merged) == op.finishFn(merged) == 0.6
    assert math.isnan(op.finishFn(op.createFn()))


def test_richness_without_combine_differs_only_in_combine(tutorial):
    twoStage, oneStage = tutorial["VOCABULARY_RICHNESS"], tutorial["VOCABULARY_RICHNESS_ONE_STAGE"]
    assert oneStage.combineFn is None and twoStage.combineFn is tutorial["mergeVocabularies"]
    parts = ("createFn", "accumulateFn", "deductFn", "exportFn", "finishFn")
    assert all(getattr(oneStage, part) is getattr(twoStage, part) for part in parts)


def test_page_shows_the_dot_text_the_planner_prints(tutorial):
    blocks = re.findall(r"```dot\n(.*?)```", PAGE.read_text(), re.DOTALL)
    plans = [
        plan(tutorial["richnessPipeline"]([], tutorial[op])).toDotString() + "\n"
        for op in ("VOCABULARY_RICHNESS", "VOCABULARY_RICHNESS_ONE_STAGE")
    ]
    assert blocks == plans


# Running the tutorial on Spark


@pytest.mark.spark
def test_aggregate_tutorial_results_equal_plain_python(
    spark, tutorial, smallCorpus, tmp_path, capsys
):
    directory, counts = smallCorpus
    svg = tmp_path / "richness.svg"
    results = tutorial["main"](["--input", str(directory), "--top", "5", "--svg", str(svg)])
    expected = independentResults(directory, counts)

    assert results["wordCount"] == expected["wordCount"]
    assert results["averageLength"] == pytest.approx(expected["averageLength"])
    assert results["longestWord"] == expected["longestWord"]
    assert [n for _, n in results["topWords"]] == [n for _, n in counts.most_common(5)]
    assert all(counts[word] == n for word, n in results["topWords"])
    assert results["wordsByLetter"] == expected["wordsByLetter"]
    assert results["allOf"] == (
        expected["wordCount"],
        pytest.approx(expected["averageLength"]),
        expected["longestWord"],
        expected["wordsByLetter"],
    )
    assert results["richness"] == pytest.approx(expected["richness"])
    assert results["namedAndSpeaking"] == expected["namedAndSpeaking"]

    printed = capsys.readouterr().out
    assert f"{expected['wordCount']} words" in printed
    assert ", ".join(f"{w} {n}" for w, n in results["topWords"]) in printed
    speakers = expected["namedAndSpeaking"].items()
    speaker, (_, speeches) = min(speakers, key=lambda e: (-e[1][1], e[0]))  # the report's first
    firstSpeakerLine = rf"^\s+{speeches} speeches .*  {re.escape(speaker)}$"
    assert re.search(firstSpeakerLine, printed, re.MULTILINE)
    assert f"The richness plan is drawn in {svg}" in printed
    drawing = svg.read_text()
    assert drawing.startswith("<?xml") and "listSink(richness)" in drawing
    assert "local partitioned" in drawing and "distributed partitioned" in drawing


@pytest.mark.spark
def test_richness_in_one_stage_equals_richness_in_two(tutorial, jet, smallCorpus):
    directory, counts = smallCorpus
    speeches = tutorial["readSpeeches"](str(directory), "*.txt")
    oneStage = tutorial["VOCABULARY_RICHNESS_ONE_STAGE"]
    jet.newJob(tutorial["richnessPipeline"](speeches, oneStage)).join()
    expected = independentResults(directory, counts)["richness"]
    assert dict(jet.getList("richness")) == pytest.approx(expected)
