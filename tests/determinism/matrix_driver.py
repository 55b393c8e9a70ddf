"""Run the determinism matrix's pipelines in this process; print one digest per result.

``python -m tests.determinism.matrix_driver DIRECTORY...`` starts its own embedded session and,
for each directory of ``*.txt`` files and each parallelism, runs one job holding every pipeline
of ``DIGESTS``. It prints ``{"workerHash"}``, ``hash("word")`` in a Python worker, then one line
``{"pipeline", "parallelism", "input", "digest"}`` per result, all JSON.
"""

import argparse
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable
from operator import itemgetter

from sparkjet.pipeline import AggregateOperations, JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import Jet
from tests.conftest import tokenize

PARALLELISMS = (1, 2, 3, 8)
LETTER_TABLE = tuple(
    [(letter, position) for position, letter in enumerate("abcdefghijklmnopqrstuvwxyz")]
    + [(vowel, "vowel") for vowel in "aeiou"]
)
"""The hash join's other side: each letter's position, and a second match for the vowels."""


def orderedDigest(items: Iterable) -> str:
    """Return the SHA-256 of the items' reprs in their order."""
    return hashlib.sha256("\n".join(map(repr, items)).encode()).hexdigest()


def unorderedDigest(items: Iterable) -> str:
    """Return the digest of the items' reprs sorted: the same whatever order the items came in."""
    return orderedDigest(sorted(map(repr, items)))


def listsDigest(groups: Iterable[tuple[object, list]]) -> str:
    """Return the unordered digest of ``(key, list)`` items, each list sorted."""
    return unorderedDigest((key, sorted(values)) for key, values in groups)


def tieGroupsDigest(entries: Iterable[tuple[str, int]]) -> str:
    """Return the ordered digest of the runs of equal counts, each run's entries sorted: what a
    sort by count promises (the order of the counts, not of the words that tie)."""
    runs = itertools.groupby(entries, itemgetter(1))
    return orderedDigest((count, sorted(run)) for count, run in runs)


DIGESTS: dict[str, Callable[[Iterable], str]] = {
    "wordCount": unorderedDigest,
    "hashJoin": unorderedDigest,
    "wordsByLength": listsDigest,
    "sort": orderedDigest,
    "mostFrequentFirst": orderedDigest,
    "sortByCount": tieGroupsDigest,
}
"""Each pipeline's list sink and how its result is digested."""


def firstLetter(word: str) -> str:
    """Return the join key of a word."""
    return word[0]


def frequencyThenWord(entry: tuple[str, int]) -> tuple[int, str]:
    """Return a key without ties for ``(word, count)``: the most frequent first, then by word."""
    return -entry[1], entry[0]


def matrixPipeline(directory: str, parallelism: int) -> Pipeline:
    """Return one pipeline writing every list of ``DIGESTS``, each stage at ``parallelism``."""
    p = Pipeline.create()
    lines = p.readFrom(Sources.files(directory, "*.txt")).setLocalParallelism(parallelism)
    words = lines.flatMap(tokenize).setLocalParallelism(parallelism)
    counts = words.groupingKey(wholeItem()).aggregate(AggregateOperations.counting())
    counts.setLocalParallelism(parallelism).writeTo(Sinks.list("wordCount"))
    table = p.readFrom(Sources.items(LETTER_TABLE)).setLocalParallelism(parallelism)
    clause = JoinClause.onKeys(firstLetter, itemgetter(0)).projecting(itemgetter(1))
    joined = words.hashJoin(table, clause, lambda word, match: (word, match))
    joined.setLocalParallelism(parallelism).writeTo(Sinks.list("hashJoin"))
    byLength = words.groupingKey(len).aggregate(AggregateOperations.toList())
    byLength.setLocalParallelism(parallelism).writeTo(Sinks.list("wordsByLength"))
    swapped = counts.map(lambda entry: (entry[1], entry[0])).setLocalParallelism(parallelism)
    swapped.sort().setLocalParallelism(parallelism).writeTo(Sinks.list("sort"))
    byFrequency = counts.sort(frequencyThenWord).setLocalParallelism(parallelism)
    byFrequency.writeTo(Sinks.list("mostFrequentFirst"))
    byCount = counts.sort(itemgetter(1), reverse=True).setLocalParallelism(parallelism)
    byCount.writeTo(Sinks.list("sortByCount"))
    return p


def runCell(spark, directory: str, parallelism: int) -> list[dict]:
    """Run the matrix pipeline once; return a record with the digest of each result."""
    jet = Jet(spark=spark)
    try:
        jet.newJob(matrixPipeline(directory, parallelism)).join()
        return [
            dict(pipeline=name, parallelism=parallelism, input=directory, digest=digestOf(jet.getList(name)))
            for name, digestOf in DIGESTS.items()
        ]
    finally:
        jet.shutdown()


def workerHash(spark) -> int:
    """Return ``hash("word")`` computed in a Python worker of ``spark``."""
    return spark.sparkContext.parallelize([0], 1).map(lambda _: hash("word")).collect()[0]


def main(argv: list[str] | None = None) -> None:
    """Run every cell of the matrix for the given directories and print the records."""
    from sparkjet.coredag.runtime.session import embeddedSession

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directories", nargs="+", help="directories of *.txt files")
    args = parser.parse_args(argv)
    spark = embeddedSession("local[2]", appName="sparkjet-determinism")
    try:
        print(json.dumps({"workerHash": workerHash(spark)}), flush=True)
        for directory, parallelism in itertools.product(args.directories, PARALLELISMS):
            for record in runCell(spark, directory, parallelism):
                print(json.dumps(record), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
