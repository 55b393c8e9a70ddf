"""Hand-written RDD: each partition counted with collections.Counter, then reduceByKey(add)."""

import operator
import time
from collections.abc import Iterable, Iterator

from benchmarks.session import sparkResult, startSession
from benchmarks.words import countWords, summarize


def countPartition(lines: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Count the words of one partition's lines."""
    return iter(countWords(lines).items())


def measure(directory: str) -> dict:
    """Start the session, then time the job alone."""
    spark = startSession()
    started = time.perf_counter()
    counts = (
        spark.sparkContext.textFile(directory)
        .mapPartitions(countPartition)
        .reduceByKey(operator.add)
        .collect()
    )
    result = sparkResult(spark, time.perf_counter() - started, summarize(counts))
    spark.stop()
    return result
