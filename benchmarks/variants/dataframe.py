"""Hand-written DataFrame: explode(split(lower(value), '\\W+')), word != '', groupBy().count()."""

import time

from pyspark.sql import functions as F

from benchmarks.session import sparkResult, startSession
from benchmarks.words import summarize


def measure(directory: str) -> dict:
    """Start the session, then time the job alone (rows become tuples inside the timing)."""
    spark = startSession()
    started = time.perf_counter()
    words = spark.read.text(directory).select(
        F.explode(F.split(F.lower("value"), r"\W+")).alias("word")
    )
    rows = words.where(F.col("word") != "").groupBy("word").count().collect()
    counts = [(row["word"], row["count"]) for row in rows]
    result = sparkResult(spark, time.perf_counter() - started, summarize(counts))
    spark.stop()
    return result
