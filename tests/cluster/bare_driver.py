"""The driver of the tests of workers with nothing installed: ``python bare_driver.py MASTER
CORPUS_DIRECTORY``, with PYSPARK_PYTHON the workers' bare Python. It prints one JSON object of
what it saw. Run as a script, so that its functions travel by value (the workers cannot import
``tests``).

1. A plain PySpark session (as a user makes one) asks its workers to import sparkjet, attrs and
   mmh3: none can.
2. ``readyForSparkjet`` (what ``Jet(spark=session)`` does with a session it is given) ships
   sparkjet; the workers import it, and a word count runs on ``Jet(spark=session)``.
3. That session stopped, ``Jet(master=MASTER)`` starts its own, which ships sparkjet at start and
   names sparkjet's worker daemon; a word count, a keyed aggregation and a hash join run on it.
"""

import importlib
import json
import os
import re
import sys
import time

from pyspark.sql import SparkSession

from sparkjet.coredag.runtime.session import readyForSparkjet
from sparkjet.pipeline import AggregateOperations, JoinClause, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import Jet

WORKERS = 2
PROBED = ("sparkjet", "attrs", "toolz", "cloudpickle", "graphviz", "mmh3")
LEFT = [(n, f"left-{n}") for n in range(40)]
RIGHT = [(n % 30, f"right-{n}") for n in range(60)]


def probe(partition):
    """Yield, from a Python worker, its interpreter and where each module of PROBED comes from
    (or the ImportError), and whether sparkjet's partitioner runs mmh3's C code."""
    places = {}
    for name in PROBED:
        try:
            places[name] = getattr(importlib.import_module(name), "__file__", None) or "namespace"
        except ImportError as error:
            places[name] = f"ImportError: {error}"
    if not places["sparkjet"].startswith("ImportError"):
        from sparkjet.coredag.model import murmur3

        places["C murmur3"] = murmur3.murmur3 is not murmur3.pythonMurmur3
    yield {"python": sys.executable, "pid": os.getpid(), "modules": places}


def probeWorkers(spark) -> list[dict]:
    """Run ``probe`` in two tasks at once (one on each worker)."""
    return spark.sparkContext.parallelize(range(WORKERS), WORKERS).barrier().mapPartitions(probe).collect()


def awaitExecutors(spark, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 < WORKERS:
        if time.monotonic() > deadline:
            raise RuntimeError("the executors did not join")
        time.sleep(0.2)


def wordCount(jet, corpus: str) -> dict:
    p = Pipeline.create()
    words = p.readFrom(Sources.files(corpus, "*.txt")).flatMap(lambda line: re.split(r"\W+", line.lower()))
    counts = words.filter(lambda word: word != "").groupingKey(wholeItem()).aggregate(AggregateOperations.counting())
    counts.writeTo(Sinks.list("counts"))
    jet.newJob(p).join()
    return dict(jet.getList("counts"))


def keyedSums(jet) -> list:
    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(range(1000))).setLocalParallelism(2)
    numbers.groupingKey(lambda n: f"key-{n % 7}").aggregate(AggregateOperations.summing(lambda n: n)).writeTo(
        Sinks.list("sums")
    )
    jet.newJob(p).join()
    return sorted(jet.getList("sums"))


def hashJoin(jet) -> list:
    p = Pipeline.create()
    left, right = p.readFrom(Sources.items(LEFT)), p.readFrom(Sources.items(RIGHT))
    clause = JoinClause.onKeys(lambda item: item[0], lambda item: item[0])
    left.innerHashJoin(right, clause, lambda l, r: [l[1], r[1]]).writeTo(Sinks.list("joined"))
    jet.newJob(p).join()
    return sorted(jet.getList("joined"))


def main(master: str, corpus: str) -> dict:
    seen: dict = {"seconds": {}}
    clock = time.monotonic()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.monotonic()
        seen["seconds"][name] = round(now - clock, 2)
        clock = now

    plain = SparkSession.builder.master(master).appName("plain-pyspark").config("spark.ui.enabled", "false").getOrCreate()
    awaitExecutors(plain)
    lap("plain session")
    seen["plain"] = probeWorkers(plain)
    lap("plain probe")
    readyForSparkjet(plain)
    lap("ship to the given session")
    seen["given"] = probeWorkers(plain)
    lap("given probe")
    given = Jet(spark=plain)
    seen["given word count"] = wordCount(given, corpus)
    lap("given word count")
    given.shutdown()
    plain.stop()

    jet = Jet(master=master)
    spark = jet.spark()
    awaitExecutors(spark)
    lap("sparkjet's session")
    conf = spark.sparkContext.getConf()
    seen["conf"] = {key: conf.get(key, None) for key in ("spark.python.daemon.module", "spark.executorEnv.PYTHONPATH")}
    seen["word count"] = wordCount(jet, corpus)
    lap("word count")
    seen["keyed sums"] = keyedSums(jet)
    seen["joined"] = hashJoin(jet)
    lap("aggregation and join")
    seen["started"] = probeWorkers(spark)
    jet.shutdown()
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
