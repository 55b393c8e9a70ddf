"""The one Spark session every Spark variant runs on, the settings it reports, its jobs timed."""

import time
from collections.abc import Callable

from benchmarks.words import summarize
from sparkjet import Jet
from sparkjet.coredag.runtime.session import isConnect

MASTER = "local[2]"
RUN_SPECIFIC = (
    "spark.app.id",
    "spark.app.startTime",
    "spark.app.submitTime",
    "spark.driver.port",
    "spark.driver.host",
    "spark.executor.id",
    "spark.sql.warehouse.dir",
    "spark.connect.grpc.binding.port",
    "spark.connect.authenticate.token",
)


def startSession():
    """Start the session sparkjet's ``Jet(master="local[2]")`` starts: same code, same settings."""
    return Jet(master=MASTER).spark()


def settings(spark) -> dict[str, str]:
    """Return the session's Spark settings (a Spark Connect session's: those the server reports),
    without the ones that differ in every process."""
    conf = spark.conf.getAll if isConnect(spark) else dict(spark.sparkContext.getConf().getAll())
    return {key: value for key, value in sorted(conf.items()) if key not in RUN_SPECIFIC}


def sparkResult(spark, seconds: float, summary: dict) -> dict:
    """Return what a Spark variant reports: its job time, its counts' summary, its settings."""
    return {"jobSeconds": seconds, **summary, "settings": settings(spark)}


def timed(job: Callable[[], list[tuple[str, int]]]) -> tuple[float, list[tuple[str, int]]]:
    """Run ``job``; return its time and its counts."""
    started = time.perf_counter()
    counts = job()
    return time.perf_counter() - started, counts


def measureJobs(spark, job: Callable[[], list[tuple[str, int]]], secondJob: bool) -> dict:
    """Time ``job`` on the started session; with ``secondJob``, again, refusing other counts."""
    seconds, counts = timed(job)
    summary = summarize(counts)
    result = sparkResult(spark, seconds, summary)
    if not secondJob:
        return result
    secondSeconds, secondCounts = timed(job)
    secondSummary = summarize(secondCounts)
    if secondSummary != summary:
        raise RuntimeError(
            f"the second job's counts {secondSummary} differ from the first job's {summary}"
        )
    return {**result, "secondJobSeconds": secondSeconds}
