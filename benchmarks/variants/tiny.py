"""Tiny jobs in one session: sparkjet's and the RDD word count of 10 lines, Spark's trivial job."""

import statistics
import time
from collections.abc import Callable

from benchmarks.session import MASTER, sparkResult, startSession
from benchmarks.variants import rdd as handWritten
from benchmarks.variants.sparkjet import countWords
from benchmarks.words import summarize
from sparkjet import Jet

WARM_JOBS = 10


def repeated(job: Callable[[], object], check: Callable[[object], dict], spark) -> dict:
    """Time the session's first job (cold), then ``WARM_JOBS`` more; check the last output."""
    started = time.perf_counter()
    output = job()
    cold = time.perf_counter() - started
    warm = []
    for _ in range(WARM_JOBS):
        started = time.perf_counter()
        output = job()
        warm.append(time.perf_counter() - started)
    return {
        **sparkResult(spark, statistics.median(warm), check(output)),
        "coldSeconds": cold,
        "warmSeconds": warm,
    }


def sparkjet(directory: str) -> dict:
    """Tutorial 01's pipeline, as the sparkjet word-count variant runs it."""
    jet = Jet(master=MASTER)
    spark = jet.spark()
    result = repeated(lambda: countWords(jet, directory), summarize, spark)
    jet.shutdown()
    return result


def rdd(directory: str) -> dict:
    """The hand-written RDD word count."""
    spark = startSession()
    result = repeated(
        lambda: handWritten.countWords(spark.sparkContext, directory), summarize, spark
    )
    spark.stop()
    return result


def trivial(directory: str) -> dict:
    """``sc.parallelize(range(10)).count()``: no input read, nothing to compare but the count."""
    spark = startSession()
    result = repeated(lambda: spark.sparkContext.parallelize(range(10)).count(), checkTen, spark)
    spark.stop()
    return result


def checkTen(count: int) -> dict:
    """Refuse a trivial job that did not count ten items; there is no word count to compare."""
    if count != 10:
        raise RuntimeError(f"sc.parallelize(range(10)).count() returned {count}, expected 10")
    return {}
