"""The one Spark session every Spark variant runs on, and the settings it reports."""

from planner import Jet

MASTER = "local[2]"
RUN_SPECIFIC = (
    "spark.app.id",
    "spark.app.startTime",
    "spark.app.submitTime",
    "spark.driver.port",
    "spark.driver.host",
    "spark.executor.id",
    "spark.sql.warehouse.dir",
)


def startSession():
    """Start the session sparkjet's ``Jet(master="local[2]")`` starts: same code, same settings."""
    return Jet(master=MASTER).spark()


def settings(spark) -> dict[str, str]:
    """Return the session's Spark settings, without the ones that differ in every process."""
    conf = dict(spark.sparkContext.getConf().getAll())
    return {key: value for key, value in sorted(conf.items()) if key not in RUN_SPECIFIC}


def sparkResult(spark, seconds: float, summary: dict) -> dict:
    """Return what a Spark variant reports: its job time, its counts' summary, its settings."""
    return {"jobSeconds": seconds, **summary, "settings": settings(spark)}
