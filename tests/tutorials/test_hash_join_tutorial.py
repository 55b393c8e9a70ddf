"""Tutorial 04 enriches speeches with hash joins: every result against a plain-Python join."""

import html
import re
import runpy
from collections import Counter, defaultdict

import pytest

from sparkjet.planner import plan
from tests.conftest import CORPUS, PROJECT, tokenize
from tests.tutorials.conftest import speechBlocks

TUTORIALS = PROJECT / "tutorials"
SCRIPT = TUTORIALS / "04_hash_join.py"
PAGE = TUTORIALS / "04_hash_join.md"


class StandInDataFrame:
    """Enough of a DataFrame for planning, which never reads it."""

    rdd = None


@pytest.fixture(scope="module")
def tutorial() -> dict:
    """The tutorial script's globals; running it this way starts nothing."""
    return runpy.run_path(str(SCRIPT))


def lookupTable(pairs) -> dict[str, list]:
    """A dict from each key to the list of its values: what a hash join's table holds."""
    table = defaultdict(list)
    for key, value in pairs:
        table[key].append(value)
    return dict(table)


def independentResults(directory, characters, stopWords) -> dict:
    """What the tutorial must find, joined with dicts and counted with Counter and sets."""
    plays, stops = lookupTable(characters), set(stopWords)
    speechesWithPlay, speechesPerPlay, spokenWords = Counter(), Counter(), Counter()
    for speaker, lines in speechBlocks(sorted(directory.glob("*.txt"))):
        spoken = [word for line in lines for word in tokenize(line)]
        for play in plays.get(speaker, [None]):  # left outer: None when nothing matches
            speechesWithPlay[(speaker, play, len(spoken))] += 1
            speechesPerPlay[play] += 1
            spokenWords.update((speaker, play, word, word in stops) for word in spoken)
    return {
        "speechesWithPlay": speechesWithPlay,
        "speechesPerPlay": {p: n for p, n in speechesPerPlay.items() if p is not None},  # inner
        "spokenWords": spokenWords,
        "wordsPerPlay": wordsPerPlay(spokenWords),
    }


def wordsPerPlay(spokenWords: Counter) -> list[tuple]:
    """The SQL query's rows: ``(play, words, stopWords, speakers)``, most words first, ties by
    play, None (Spark's NULL) first."""
    totals, stops, speakers = Counter(), Counter(), defaultdict(set)
    for (speaker, play, _, stopWord), n in spokenWords.items():
        totals[play] += n
        stops[play] += n if stopWord else 0
        speakers[play].add(speaker)
    rows = [(play, totals[play], stops[play], len(speakers[play])) for play in totals]
    return sorted(rows, key=lambda row: (-row[1], row[0] is not None, row[0] or ""))


# The tables and clauses (no Spark)


def test_the_characters_table_has_one_play_per_speaker_and_each_speaks_in_the_corpus(tutorial):
    characters = tutorial["CHARACTERS"]
    speakers = [speaker for speaker, _ in characters]
    assert len(speakers) == len(set(speakers))
    assert set(speakers) <= {speaker for speaker, _ in speechBlocks([CORPUS])}
    assert {play for _, play in characters} == set(tutorial["PLAYS"])


def test_join_clauses_key_the_primary_item_and_the_table_row_alike(tutorial):
    playOfSpeaker, stopWord = tutorial["PLAY_OF_SPEAKER"], tutorial["STOP_WORD"]
    row = {"speaker": "romeo", "play": "Romeo and Juliet"}
    assert playOfSpeaker.leftKeyFn(("romeo", "But, soft!")) == playOfSpeaker.rightKeyFn(row)
    assert playOfSpeaker.rightProjectFn(row) == "Romeo and Juliet"
    assert stopWord.leftKeyFn(("romeo", "the")) == stopWord.rightKeyFn("the") == "the"
    assert stopWord.rightProjectFn is None
    assert tutorial["spokenWord"](("romeo", "soft"), None, None) == {
        "speaker": "romeo", "play": None, "word": "soft", "stopWord": False
    }


def test_page_shows_the_dot_text_and_explanation_the_planner_prints(tutorial):
    page = PAGE.read_text()
    frame = StandInDataFrame()
    enrich = plan(tutorial["speechesWithPlayPipeline"]([], frame))
    spokenWords = plan(tutorial["spokenWordsPipeline"]([], frame))
    dotBlocks = re.findall(r"```dot\n(.*?)```", page, re.DOTALL)
    assert dotBlocks == [enrich.toDotString() + "\n", spokenWords.toDotString() + "\n"]
    textBlocks = re.findall(r"```text\n(.*?)```", page, re.DOTALL)
    assert [block for block in textBlocks if block.startswith("Core DAG")] == [
        enrich.explain(defaultParallelism=2) + "\n"
    ]


def test_the_builder_plans_to_the_same_dag_as_hash_join2(tutorial):
    frame = StandInDataFrame()
    hashJoin2 = tutorial["spokenWordsPipeline"]([], frame)
    builder = tutorial["spokenWordsPipeline"]([], frame, tutorial["joinWithBuilder"])
    assert plan(builder).toDotString() == plan(hashJoin2).toDotString()


# Running the tutorial on Spark


@pytest.mark.spark
def test_hash_join_tutorial_results_equal_plain_python(
    spark, tutorial, smallCorpus, tmp_path, capsys
):
    directory, _ = smallCorpus
    svg = tmp_path / "hash-join.svg"
    results = tutorial["main"](["--input", str(directory), "--top", "3", "--svg", str(svg)])
    expected = independentResults(directory, tutorial["CHARACTERS"], tutorial["STOP_WORDS"])

    assert Counter(results["speechesWithPlay"]) == expected["speechesWithPlay"]
    assert results["speechesPerPlay"] == expected["speechesPerPlay"]
    assert results["wordsPerPlay"] == expected["wordsPerPlay"]
    assert any(play is None for play, *_ in results["wordsPerPlay"]), "the small corpus has both"
    assert any(play is not None for play, *_ in results["wordsPerPlay"])

    printed = capsys.readouterr().out
    speeches = expected["speechesWithPlay"]
    unmatched = Counter()
    for (speaker, play, _), n in speeches.items():
        unmatched[speaker] += n if play is None else 0
    total, others = speeches.total(), +unmatched
    assert (
        f"{total} speeches: {total - others.total()} by a speaker of the table, "
        f"{others.total()} by {len(others)} others (play None)"
    ) in printed
    first, n = min(others.items(), key=lambda e: (-e[1], e[0]))
    assert f"The 3 others with the most speeches: {first} {n}, " in printed
    for play, words, stopWords, speakers in expected["wordsPerPlay"]:
        shown = re.escape(play or tutorial["NO_PLAY"])
        share = f"{stopWords / words:.1%}"
        assert re.search(rf"^\s+{words}\s+{share}\s+{speakers}  {shown}$", printed, re.MULTILINE)
    assert f"The hashJoin2 plan is drawn in {svg}" in printed
    drawing = html.unescape(svg.read_text())  # graphviz writes '-' as &#45;
    assert drawing.startswith("<?xml") and "3-way hash-join-collector1" in drawing
    assert "distributed broadcast" in drawing and "local broadcast priority -1" in drawing


@pytest.mark.spark
def test_the_builder_joins_as_hash_join2_does(tutorial, jet, spark, smallCorpus):
    directory, _ = smallCorpus
    speeches = tutorial["readSpeeches"](str(directory), "*.txt")
    frame = spark.createDataFrame(tutorial["CHARACTERS"], tutorial["CHARACTERS_SCHEMA"])
    p = tutorial["spokenWordsPipeline"](speeches, frame, tutorial["joinWithBuilder"])
    jet.newJob(p).join()
    rows = jet.getDataFrame("spokenWords").collect()
    expected = independentResults(directory, tutorial["CHARACTERS"], tutorial["STOP_WORDS"])
    assert Counter(tuple(row) for row in rows) == expected["spokenWords"]


@pytest.mark.spark
def test_a_table_with_two_rows_for_a_key_joins_once_per_row(tutorial, jet, spark, smallCorpus):
    directory, _ = smallCorpus
    speeches = tutorial["readSpeeches"](str(directory), "*.txt")
    characters = (*tutorial["CHARACTERS"], ("menenius", "A Play Not Written"))
    frame = spark.createDataFrame(characters, tutorial["CHARACTERS_SCHEMA"])
    jet.newJob(tutorial["speechesWithPlayPipeline"](speeches, frame)).join()
    expected = independentResults(directory, characters, ())["speechesWithPlay"]
    assert Counter(jet.getList("speechesWithPlay")) == expected
    assert any(play == "A Play Not Written" for _, play, _ in expected)
