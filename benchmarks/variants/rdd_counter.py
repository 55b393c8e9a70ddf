"""Hand-written RDD: each partition counted with collections.Counter, then reduceByKey(add)."""

import operator
from collections.abc import Iterable, Iterator

from benchmarks.session import measureJobs, startSession
from benchmarks.words import countWords


def countPartition(lines: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Count the words of one partition's lines."""
    return iter(countWords(lines).items())


def countByPartition(sc, directory: str) -> list[tuple[str, int]]:
    """Count the words of the files in ``directory``, a Counter per partition."""
    return (
        sc.textFile(directory).mapPartitions(countPartition).reduceByKey(operator.add).collect()
    )


def measure(directory: str, secondJob: bool = False) -> dict:
    """Start the session, then time the job alone (with ``secondJob``, twice)."""
    spark = startSession()
    result = measureJobs(spark, lambda: countByPartition(spark.sparkContext, directory), secondJob)
    spark.stop()
    return result
