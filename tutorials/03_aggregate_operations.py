"""Tutorial 03: Jet's aggregate operations on Shakespeare: built-in, allOf, your own, aggregate2."""

import argparse
import itertools
import math
import operator
import pathlib
import re
from collections.abc import Iterable, Iterator

from sparkjet import (
    AggregateOperation,
    AggregateOperations,
    Jet,
    Pipeline,
    Sinks,
    Sources,
    wholeItem,
)
from sparkjet.planner.render import writePlanSvg

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data"

ops = AggregateOperations  # Jet code imports its factories statically: counting(), toSet()
countOf = operator.itemgetter(1)  # the count of a (word, count) entry


def words(line: str) -> list[str]:
    """Split a line into lower-case words, dropping the empty strings ``re.split`` leaves."""
    return [word for word in re.split(r"\W+", line.lower()) if word]


def firstLetter(word: str) -> str:
    """The first character of a word: the key of the by-letter results."""
    return word[0]


def lengthThenWord(word: str) -> tuple[int, str]:
    """The maxBy key of the longest word: its length, ties broken by the word itself."""
    return len(word), word


# (1) Built-in operations, one branch each, over the words of the files


def builtInsPipeline(directory: str, glob: str, top: int) -> Pipeline:
    """Return the pipeline aggregating the words five ways, each into its own list."""
    p = Pipeline.create()
    allWords = p.readFrom(Sources.files(directory, glob)).flatMap(words)
    allWords.aggregate(ops.counting()).writeTo(Sinks.list("wordCount"))
    allWords.aggregate(ops.averaging(len)).writeTo(Sinks.list("averageLength"))
    allWords.aggregate(ops.maxBy(lengthThenWord)).writeTo(Sinks.list("longestWord"))
    counted = allWords.groupingKey(wholeItem()).aggregate(ops.counting())
    counted.aggregate(ops.topN(top, countOf)).writeTo(Sinks.list("topWords"))
    allWords.groupingKey(firstLetter).aggregate(ops.toSet()).writeTo(Sinks.list("wordsByLetter"))
    return p


# (2) allOf: several results in one pass


def allOfPipeline(directory: str, glob: str) -> Pipeline:
    """Return the pipeline computing four results of section 1 with one aggregate operation."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.files(directory, glob))
        .flatMap(words)
        .aggregate(
            ops.allOf(
                ops.counting(),
                ops.averaging(len),
                ops.maxBy(lengthThenWord),
                ops.groupingBy(firstLetter, ops.toSet()),
            )
        )
        .writeTo(Sinks.list("allOf"))
    )
    return p


# Speeches: "ROMEO:" and the lines up to the next empty line


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


def speakerWords(speech: tuple[str, str]) -> list[tuple[str, str]]:
    """Return ``(speaker, word)`` for every word of a speech."""
    speaker, text = speech
    return [(speaker, word) for word in words(text)]


speakerOf = operator.itemgetter(0)


def speechWords(speech: tuple[str, str]) -> list[str]:
    """Return the words of a speech's text."""
    return words(speech[1])


def speaks(entry: tuple[str, tuple[int, int]]) -> bool:
    """Whether a ``(name, (timesNamed, speeches))`` entry is a speaker's."""
    return entry[1][1] > 0


# (3) Your own operation: vocabulary richness = distinct words / words, per speaker


def newVocabulary() -> tuple[set, int]:
    """create: no word seen, none counted."""
    return set(), 0


def addWord(acc: tuple[set, int], entry: tuple[str, str]) -> tuple[set, int]:
    """accumulate: add the word of a ``(speaker, word)`` entry; return the accumulator."""
    seen, total = acc
    seen.add(entry[1])
    return seen, total + 1


def mergeVocabularies(left: tuple[set, int], right: tuple[set, int]) -> tuple[set, int]:
    """combine: fold ``right`` into ``left``'s set, leaving ``right`` as it was."""
    seen, total = left
    seen |= right[0]
    return seen, total + right[1]


def richness(acc: tuple[set, int]) -> float:
    """export and finish: distinct words per word, a new float; NaN for no words."""
    seen, total = acc
    return len(seen) / total if total else math.nan


VOCABULARY_RICHNESS = (
    AggregateOperation.withCreate(newVocabulary)
    .andAccumulate(addWord)
    .andCombine(mergeVocabularies)
    .andExportFinish(richness)
)

VOCABULARY_RICHNESS_ONE_STAGE = (
    AggregateOperation.withCreate(newVocabulary)
    .andAccumulate(addWord)
    .andExportFinish(richness)
)


def richnessPipeline(speeches: list[tuple[str, str]], op: AggregateOperation) -> Pipeline:
    """Return the pipeline aggregating each speaker's words with ``op`` into list 'richness'."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(speeches))
        .flatMap(speakerWords)
        .groupingKey(speakerOf)
        .aggregate(op)
        .writeTo(Sinks.list("richness"))
    )
    return p


# (4) aggregate2: how often a speaker is named in speeches, and how often they speak


def namedAndSpeakingPipeline(speeches: list[tuple[str, str]]) -> Pipeline:
    """Return the pipeline co-grouping spoken words and speaker names by the same key."""
    p = Pipeline.create()
    speechStage = p.readFrom(Sources.items(speeches))
    spokenWords = speechStage.flatMap(speechWords).groupingKey(wholeItem())
    speakers = speechStage.map(speakerOf).groupingKey(wholeItem())
    (
        spokenWords.aggregate2(ops.counting(), speakers, ops.counting())
        .filter(speaks)
        .writeTo(Sinks.list("namedAndSpeaking"))
    )
    return p


def runAll(jet: Jet, pipelines: Iterable[Pipeline]) -> None:
    """Run the pipelines one job after another."""
    for p in pipelines:
        jet.newJob(p).join()


def printReport(results: dict, top: int) -> None:
    """Print a short report of the results."""
    longest = results["longestWord"]
    print(
        f"{results['wordCount']} words, {results['averageLength']:.2f} characters on average; "
        f"the longest: {longest} ({len(longest)})"
    )
    topWords = ", ".join(f"{word} {n}" for word, n in results["topWords"])
    print(f"The {top} most frequent words: {topWords}")
    byLetter = sorted(results["wordsByLetter"].items(), key=lambda e: (-len(e[1]), e[0]))[:top]
    print("Distinct words by first letter: " + ", ".join(f"{k} {len(s)}" for k, s in byLetter))
    wordCount, averageLength, allOfLongest, byLetterDict = results["allOf"]
    print(
        f"allOf, in one pass: {wordCount} words, {averageLength:.2f} on average, "
        f"the longest: {allOfLongest}, {len(byLetterDict)} first letters"
    )
    print(f"The {top} speakers with the most speeches:")
    speakers = sorted(results["namedAndSpeaking"].items(), key=lambda e: (-e[1][1], e[0]))[:top]
    for speaker, (named, speeches) in speakers:
        print(
            f"{speeches:>8} speeches  named {named:>4} times  "
            f"vocabulary richness {results['richness'].get(speaker, math.nan):.3f}  {speaker}"
        )


def main(argv: list[str] | None = None) -> dict:
    """Run the sections' pipelines, print a report, draw the richness plan; return the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--glob", default="*.txt", help="which files of the directory to read")
    parser.add_argument("--top", type=int, default=5, help="how many words and speakers to print")
    parser.add_argument("--svg", default="richness-plan.svg", help="where to draw section 3's plan")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)

    speeches = readSpeeches(args.input, args.glob)
    richnessPlan = richnessPipeline(speeches, VOCABULARY_RICHNESS)
    jet = Jet(master=args.master)
    try:
        runAll(
            jet,
            [
                builtInsPipeline(args.input, args.glob, args.top),
                allOfPipeline(args.input, args.glob),
                richnessPlan,
                namedAndSpeakingPipeline(speeches),
            ],
        )
        single = ["wordCount", "averageLength", "longestWord", "topWords", "allOf"]
        results = {name: jet.getList(name)[0] for name in single}
        for name in ["wordsByLetter", "richness", "namedAndSpeaking"]:
            results[name] = dict(jet.getList(name))
    finally:
        jet.shutdown()
    printReport(results, args.top)
    written, note = writePlanSvg(richnessPlan, args.svg)
    print(note or f"The richness plan is drawn in {written}")
    return results


if __name__ == "__main__":
    main()
