"""Hand-written DataFrame: explode(split(lower(value), '\\W+')), word != '', groupBy().count()."""

from pyspark.sql import functions as F

from benchmarks.session import measureJobs, startSession


def countWords(spark, directory: str) -> list[tuple[str, int]]:
    """Count the words of the files in ``directory``; the rows become tuples."""
    words = spark.read.text(directory).select(
        F.explode(F.split(F.lower("value"), r"\W+")).alias("word")
    )
    rows = words.where(F.col("word") != "").groupBy("word").count().collect()
    return [(row["word"], row["count"]) for row in rows]


def measure(directory: str, secondJob: bool = False) -> dict:
    """Start the session, then time the job alone (with ``secondJob``, twice)."""
    spark = startSession()
    result = measureJobs(spark, lambda: countWords(spark, directory), secondJob)
    spark.stop()
    return result
