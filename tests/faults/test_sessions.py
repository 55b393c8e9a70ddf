"""Sessions and clients do what was asked: spark-submit's settings are kept, two Jet clients
are independent, a master that cannot be honoured is an error, shutdown() stops only what no
other client uses."""

import concurrent.futures
import json
import os
import pathlib
import sys
import textwrap
import time

import pytest

from sparkjet.coredag import UserFunctionError
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import Jet
from tests.conftest import PROJECT, eventually, run

SPARK_SUBMIT = os.path.join(os.path.dirname(sys.executable), "spark-submit")
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(PROJECT), "PYSPARK_PYTHON": sys.executable,
               "PYSPARK_DRIVER_PYTHON": sys.executable}

SUBMITTED = textwrap.dedent(
    """
    import json
    from sparkjet.pipeline import Pipeline, Sinks, Sources
    from sparkjet.planner import Jet
    from sparkjet.coredag import SessionError

    jet = Jet()
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(lambda n: n * n).writeTo(Sinks.list("squares"))
    jet.newJob(p).join()
    conf = jet.spark().sparkContext.getConf()
    try:
        Jet(master="local[2]").newJob(p).join()
        refused = None
    except SessionError as error:
        refused = str(error)
    print(json.dumps({
        "squares": sorted(jet.getList("squares")),
        "master": conf.get("spark.master"),
        "name": conf.get("spark.app.name"),
        "probe": conf.get("spark.sparkjet.probe", None),
        "ui": conf.get("spark.ui.enabled", None),
        "daemon": conf.get("spark.python.daemon.module", None),
        "refused": refused,
    }))
    jet.shutdown()
    """
)


def test_under_spark_submit_jet_runs_on_the_session_spark_submit_configured(tmp_path):
    script = tmp_path / "submitted.py"
    script.write_text(SUBMITTED)
    finished = run(
        [SPARK_SUBMIT, "--master", "local[3]", "--name", "from-spark-submit",
         "--conf", "spark.sparkjet.probe=kept", str(script)],
        env=ENVIRONMENT, cwd=tmp_path,
    )
    assert finished.returncode == 0, finished.stderr
    seen = json.loads(finished.stdout.strip().splitlines()[-1])
    assert seen["squares"] == [n * n for n in range(10)]
    assert seen["master"] == "local[3,4]"  # spark-submit's three threads, and sparkjet's task retries
    assert seen["name"] == "from-spark-submit"
    assert seen["probe"] == "kept"
    assert seen["ui"] is None  # Spark's own default (on) under spark-submit
    assert seen["daemon"] == "sparkjet.coredag.runtime.worker_daemon"
    assert seen["refused"] == (
        "Jet(master='local[2]'): a SparkSession already runs in this process on 'local[3,4]', and "
        "Spark runs one session per process; leave the master out to use that session (Jet(), or "
        "Jet(spark=session)), or run this job in another process"
    )


CLIENTS = textwrap.dedent(
    """
    import json
    from pyspark.sql import SparkSession
    from sparkjet.pipeline import Pipeline, Sinks, Sources
    from sparkjet.planner import Jet
    from sparkjet.coredag import SessionError

    def squares(jet, name):
        p = Pipeline.create()
        p.readFrom(Sources.items(range(10))).map(lambda n: n * n).writeTo(Sinks.list(name))
        jet.newJob(p).join()
        return sorted(jet.getList(name))

    seen = {}
    first, second = Jet(master="local[2]"), Jet()
    seen["first"], seen["second"] = squares(first, "a"), squares(second, "b")
    first.shutdown()
    seen["second after the first shut down"] = squares(second, "c")
    try:
        Jet(master="local[3]").spark()
    except SessionError as error:
        seen["another master"] = str(error)
    second.shutdown()
    seen["active after the last shut down"] = SparkSession.getActiveSession() is not None
    third = Jet()
    seen["a new client starts a new session"] = squares(third, "d")
    given = third.spark()
    user = Jet(spark=given)
    third.shutdown()
    try:
        squares(user, "e")
    except SessionError as error:
        seen["a given session stopped"] = str(error)
    print(json.dumps(seen))
    """
)


def test_clients_share_the_session_sparkjet_started_and_the_last_to_shut_down_stops_it(tmp_path):
    script = tmp_path / "clients.py"
    script.write_text(CLIENTS)
    finished = run([sys.executable, str(script)], env=ENVIRONMENT)
    assert finished.returncode == 0, finished.stderr
    seen = json.loads(finished.stdout.strip().splitlines()[-1])
    squares = [n * n for n in range(10)]
    assert seen["first"] == seen["second"] == seen["second after the first shut down"] == squares
    assert seen["another master"].startswith(
        "Jet(master='local[3]'): a SparkSession already runs in this process on 'local[2,4]'"
    )
    assert seen["active after the last shut down"] is False
    assert seen["a new client starts a new session"] == squares
    assert seen["a given session stopped"] == (
        "The SparkSession given to Jet(spark=...) was stopped: give a running one, or make Jet() "
        "without it to have one started"
    )


def markingStart(marker: pathlib.Path, seconds: float):
    """Return a map function that creates ``marker`` when it starts and takes ``seconds`` an item."""

    def slowly(item):
        marker.touch()
        time.sleep(seconds)
        return item

    return slowly


def awaitFile(marker: pathlib.Path) -> None:
    """Wait until ``marker`` exists: a job's Spark tasks run."""
    eventually(marker.exists)


@pytest.mark.spark
def test_two_clients_jobs_of_one_name_neither_cancel_nor_fail_each_other(spark, tmp_path):
    first, second = Jet(spark=spark), Jet(spark=spark)
    words = [f"w{n % 37}" for n in range(3000)]
    counting = Pipeline.create()
    counted = counting.readFrom(Sources.items(words)).map(markingStart(tmp_path / "counting", 0.003))
    counted.groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts"))
    failing = Pipeline.create()
    failing.readFrom(Sources.items(range(100))).map(lambda n: 1 // (n - 50)).writeTo(Sinks.noop())
    cancelled = Pipeline.create()
    cancelled.readFrom(Sources.items(range(1000))).map(markingStart(tmp_path / "cancelled", 0.01)).writeTo(Sinks.noop())
    try:
        counts = first.newJob(counting, name="etl")
        awaitFile(tmp_path / "counting")
        with pytest.raises(UserFunctionError):
            second.newJob(failing, name="etl").join()
        doomed = second.newJob(cancelled, name="etl")
        awaitFile(tmp_path / "cancelled")
        doomed.cancel()
        with pytest.raises(concurrent.futures.CancelledError):
            doomed.join()
        counts.join()
        assert dict(first.getList("counts")) == {f"w{k}": len(range(k, 3000, 37)) for k in range(37)}
    finally:
        first.shutdown()
        second.shutdown()
