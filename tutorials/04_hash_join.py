"""Tutorial 04: enrich Shakespeare's speeches with hashJoin, then hand the result to Spark SQL."""

import argparse
import itertools
import operator
import pathlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from sparkjet import (
    AggregateOperations,
    BatchStage,
    Jet,
    JoinClause,
    Pipeline,
    Sinks,
    Sources,
    wholeItem,
)
from sparkjet.planner.render import writePlanSvg

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data"

# The lookup tables: small, so every joiner can hold them whole

PLAYS = {
    "Coriolanus": (
        "coriolanus", "marcius", "menenius", "cominius", "sicinius", "brutus", "volumnia",
        "virgilia", "aufidius",
    ),
    "Richard III": ("king richard iii", "lady anne", "buckingham", "catesby"),
    "Richard II": ("king richard ii", "john of gaunt", "henry bolingbroke", "duke of aumerle"),
    "Romeo and Juliet": (
        "romeo", "nurse", "mercutio", "benvolio", "capulet", "lady capulet", "friar laurence",
    ),
    "Henry VI, Part 3": ("king henry vi", "warwick", "clifford", "lady grey"),
    "The Winter's Tale": (
        "leontes", "polixenes", "hermione", "paulina", "camillo", "autolycus", "florizel",
        "perdita",
    ),
    "Measure for Measure": (
        "duke vincentio", "angelo", "isabella", "escalus", "lucio", "claudio", "mariana",
    ),
    "The Taming of the Shrew": (
        "petruchio", "katharina", "baptista", "tranio", "gremio", "hortensio", "lucentio",
        "bianca", "grumio",
    ),
    "The Tempest": ("prospero", "miranda", "gonzalo", "antonio"),
}
CHARACTERS = tuple((speaker, play) for play, speakers in PLAYS.items() for speaker in speakers)
CHARACTERS_SCHEMA = "speaker string, play string"

STOP_WORDS = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "for", "from", "he", "her",
    "him", "his", "i", "if", "in", "is", "it", "me", "my", "no", "not", "of", "on", "or", "our",
    "she", "so", "that", "the", "thee", "their", "them", "they", "this", "thou", "thy", "to",
    "us", "was", "we", "what", "will", "with", "you", "your",
)

SPOKEN_WORDS_SCHEMA = "speaker string, play string, word string, stopWord boolean"
WORDS_PER_PLAY = """
    SELECT play, count(*) AS words, sum(CASE WHEN stopWord THEN 1 ELSE 0 END) AS stopWords,
           count(DISTINCT speaker) AS speakers
    FROM spokenWords
    GROUP BY play
    ORDER BY words DESC, play
"""
NO_PLAY = "(not in the table)"


# Speeches: "ROMEO:" and the lines up to the next empty line, as in tutorial 03


def words(line: str) -> list[str]:
    """Split a line into lower-case words, dropping the empty strings ``re.split`` leaves."""
    return [word for word in re.split(r"\W+", line.lower()) if word]


def speechesIn(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Yield ``(speaker, text)`` per speech: a heading such as ``ROMEO:`` that starts a block
    of non-empty lines (first in the file or after an empty line), then the block's lines."""
    for nonEmpty, block in itertools.groupby(lines, key=bool):
        heading, *spoken = block
        if nonEmpty and heading.endswith(":"):
            yield heading[:-1].lower(), "\n".join(spoken)


def readSpeeches(directory: str, glob: str) -> list[tuple[str, str]]:
    """Return the speeches of the files in ``directory`` matching ``glob``, in name order."""
    paths = sorted(path for path in pathlib.Path(directory).glob(glob) if path.is_file())
    return [
        speech for path in paths for speech in speechesIn(path.read_text("utf-8").splitlines())
    ]


speakerOf = operator.itemgetter(0)  # the speaker of a speech or of a (speaker, word) entry
wordOf = operator.itemgetter(1)  # the word of a (speaker, word) entry
playOf = operator.itemgetter(1)  # the play of a (speaker, play, words) item


def speakerWords(speech: tuple[str, str]) -> list[tuple[str, str]]:
    """Return ``(speaker, word)`` for every word of a speech."""
    speaker, text = speech
    return [(speaker, word) for word in words(text)]


# The join clauses: how a primary item finds its match, and what of the match it gets

PLAY_OF_SPEAKER = JoinClause.onKeys(speakerOf, operator.itemgetter("speaker")).projecting(
    operator.itemgetter("play")
)
STOP_WORD = JoinClause.onKeys(wordOf, wholeItem())  # the key of a stop word is the word itself


def withPlay(speech: tuple[str, str], play: str | None) -> tuple[str, str | None, int]:
    """The joined item of a speech: ``(speaker, play, number of words)``; play None if unknown."""
    speaker, text = speech
    return speaker, play, len(words(text))


def spokenWord(entry: tuple[str, str], play: str | None, stopWord: str | None) -> dict:
    """A row of the ``spokenWords`` DataFrame: who said which word, in which play, and
    whether the word is a stop word (it is when the stop-word table matched it)."""
    speaker, word = entry
    return {"speaker": speaker, "play": play, "word": word, "stopWord": stopWord is not None}


# (1) hashJoin: every speech, with its play or None


def speechesWithPlayPipeline(speeches: list[tuple[str, str]], charactersFrame) -> Pipeline:
    """Return the pipeline enriching each speech with its speaker's play into 'speechesWithPlay'."""
    p = Pipeline.create()
    speechStage = p.readFrom(Sources.items(speeches)).setName("speeches")
    characters = p.readFrom(Sources.dataframe(charactersFrame)).setName("characters")
    (
        speechStage.hashJoin(characters, PLAY_OF_SPEAKER, withPlay)
        .writeTo(Sinks.list("speechesWithPlay"))
    )
    return p


# (2) innerHashJoin: only the speeches of known speakers, counted per play


def speechesPerPlayPipeline(speeches: list[tuple[str, str]], charactersFrame) -> Pipeline:
    """Return the pipeline counting the speeches of each play into 'speechesPerPlay'."""
    p = Pipeline.create()
    speechStage = p.readFrom(Sources.items(speeches)).setName("speeches")
    characters = p.readFrom(Sources.dataframe(charactersFrame)).setName("characters")
    (
        speechStage.innerHashJoin(characters, PLAY_OF_SPEAKER, withPlay)
        .groupingKey(playOf)
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("speechesPerPlay"))
    )
    return p


# (3) Two lookup tables: hashJoin2, or the builder, into a Spark DataFrame


def joinWithHashJoin2(spoken: BatchStage, plays: BatchStage, stops: BatchStage) -> BatchStage:
    """Enrich each ``(speaker, word)`` with its play and its stop-word match using hashJoin2."""
    return spoken.hashJoin2(plays, PLAY_OF_SPEAKER, stops, STOP_WORD, spokenWord)


def joinWithBuilder(spoken: BatchStage, plays: BatchStage, stops: BatchStage) -> BatchStage:
    """The same join with hashJoinBuilder: each table gets a tag, matches arrive by tag."""
    builder = spoken.hashJoinBuilder()
    playTag = builder.add(plays, PLAY_OF_SPEAKER)
    stopTag = builder.add(stops, STOP_WORD)
    return builder.build(
        lambda entry, matches: spokenWord(entry, matches[playTag], matches[stopTag])
    )


def spokenWordsPipeline(
    speeches: list[tuple[str, str]],
    charactersFrame,
    join: Callable[[BatchStage, BatchStage, BatchStage], BatchStage] = joinWithHashJoin2,
) -> Pipeline:
    """Return the pipeline writing every spoken word, enriched by ``join``, to the DataFrame
    'spokenWords'."""
    p = Pipeline.create()
    spoken = p.readFrom(Sources.items(speeches)).setName("speeches").flatMap(speakerWords)
    characters = p.readFrom(Sources.dataframe(charactersFrame)).setName("characters")
    stopWords = p.readFrom(Sources.items(STOP_WORDS)).setName("stop words")
    join(spoken, characters, stopWords).writeTo(Sinks.dataframe("spokenWords", SPOKEN_WORDS_SCHEMA))
    return p


def wordsPerPlay(jet: Jet) -> list[tuple[str | None, int, int, int]]:
    """Query the 'spokenWords' DataFrame with Spark SQL; return ``(play, words, stopWords,
    speakers)`` rows, most words first."""
    jet.getDataFrame("spokenWords").createOrReplaceTempView("spokenWords")
    return [tuple(row) for row in jet.spark().sql(WORDS_PER_PLAY).collect()]


def printReport(results: dict, top: int) -> None:
    """Print a short report of the results."""
    speeches = results["speechesWithPlay"]
    unmatched = Counter(speaker for speaker, play, _ in speeches if play is None)
    print(
        f"{len(speeches)} speeches: {len(speeches) - unmatched.total()} by a speaker of the table, "
        f"{unmatched.total()} by {len(unmatched)} others (play None)"
    )
    mostSpeeches = sorted(unmatched.items(), key=lambda e: (-e[1], e[0]))[:top]
    others = ", ".join(f"{speaker} {n}" for speaker, n in mostSpeeches)
    print(f"The {top} others with the most speeches: {others}")
    perPlay = sorted(results["speechesPerPlay"].items(), key=lambda e: (-e[1], e[0]))
    print("Speeches per play (innerHashJoin): " + ", ".join(f"{play} {n}" for play, n in perPlay))
    print("Words per play (hashJoin2, then Spark SQL):")
    print(f"{'words':>8} {'% stop words':>13} {'speakers':>9}  play")
    for play, count, stopWords, speakers in results["wordsPerPlay"]:
        print(f"{count:>8} {stopWords / count:>13.1%} {speakers:>9}  {play or NO_PLAY}")


def main(argv: list[str] | None = None) -> dict:
    """Run the three joins and the SQL query, print a report, draw the hashJoin2 plan; return
    the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--glob", default="*.txt", help="which files of the directory to read")
    parser.add_argument("--top", type=int, default=5, help="how many unmatched speakers to print")
    parser.add_argument(
        "--svg", default="hash-join-plan.svg", help="where to draw section 3's plan"
    )
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)

    speeches = readSpeeches(args.input, args.glob)
    jet = Jet(master=args.master)
    try:
        charactersFrame = jet.spark().createDataFrame(CHARACTERS, CHARACTERS_SCHEMA)
        spokenWordsPlan = spokenWordsPipeline(speeches, charactersFrame)
        for p in (
            speechesWithPlayPipeline(speeches, charactersFrame),
            speechesPerPlayPipeline(speeches, charactersFrame),
            spokenWordsPlan,
        ):
            jet.newJob(p).join()
        results = {
            "speechesWithPlay": jet.getList("speechesWithPlay"),
            "speechesPerPlay": dict(jet.getList("speechesPerPlay")),
            "wordsPerPlay": wordsPerPlay(jet),
        }
    finally:
        jet.shutdown()
    printReport(results, args.top)
    written, note = writePlanSvg(spokenWordsPlan, args.svg)
    print(note or f"The hashJoin2 plan is drawn in {written}")
    return results


if __name__ == "__main__":
    main()
