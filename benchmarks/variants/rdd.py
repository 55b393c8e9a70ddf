"""Hand-written RDD: textFile -> flatMap -> filter -> map((w, 1)) -> reduceByKey(add)."""

import operator

from benchmarks.session import measureJobs, startSession
from benchmarks.words import split


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


def measure(directory: str, secondJob: bool = False) -> dict:
    """Start the session, then time the job alone (with ``secondJob``, twice)."""
    spark = startSession()
    result = measureJobs(spark, lambda: countWords(spark.sparkContext, directory), secondJob)
    spark.stop()
    return result
