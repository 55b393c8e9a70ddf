"""Hand-written RDD: textFile -> flatMap -> filter -> map((w, 1)) -> reduceByKey(add)."""

import operator
import time

from benchmarks.session import sparkResult, startSession
from benchmarks.words import split, summarize


def countWords(sc, directory: str) -> list[tuple[str, int]]:
    """Count the words of the files in ``directory``."""
    return (
        sc.textFile(directory)
        .flatMap(split)
        .filter(lambda word: word != "")
        .map(lambda word: (word, 1))
        .reduceByKey(operator.add)
        .collect()
    )


def measure(directory: str) -> dict:
    """Start the session, then time the job alone."""
    spark = startSession()
    started = time.perf_counter()
    counts = countWords(spark.sparkContext, directory)
    result = sparkResult(spark, time.perf_counter() - started, summarize(counts))
    spark.stop()
    return result
