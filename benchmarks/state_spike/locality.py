"""State-store spike: can the next micro-batch's task of partition i be sent, from PySpark
alone, to the executor that ran partition i before? On local-cluster[2,1,1024] (2 executors,
same host), 4 partitions, 10 micro-batches per shape; prints, per shape, the share of tasks
that ran on the same executor as the previous micro-batch's task of their partition.

    python -m benchmarks.state_spike.locality

Shapes: 'plain' (the shuffled input alone); 'union' (sc.union with a persisted, co-partitioned
'home' RDD: a PartitionerAwareUnionRDD, whose preferred locations are hosts only); 'zip' (the
home RDD zipped with the input collapsed to one record per partition: a ZippedPartitionsRDD2
has no preferred locations of its own, so the scheduler walks its first narrow dependency and
finds the home RDD's cached block: executor-level)."""

import json
import os

from pyspark import SparkConf, SparkContext, StorageLevel

P, BATCHES = 4, 10


def part(target):
    return target


def where(index, it):
    items = sum(1 for _ in it)
    yield (index, os.getppid(), items)  # ppid: the executor's Python daemon


def main():
    conf = (SparkConf().setMaster("local-cluster[2,1,1024]").setAppName("locality-spike")
            .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false"))
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    home = sc.parallelize(range(P), P).map(lambda i: (i, None)).partitionBy(P, part).persist(StorageLevel.MEMORY_ONLY)
    home.count()  # each home partition cached where it first ran; recomputed elsewhere only if lost
    homeZip = sc.parallelize(range(P), P).persist(StorageLevel.MEMORY_ONLY)
    homeZip.count()
    result = {}
    for shape in ("plain", "union", "zip"):
        last, same, total = {}, 0, 0
        for batch in range(BATCHES):
            gen = sc.parallelize(range(8), 8).flatMap(lambda i, b=batch: [(x % P, x) for x in range(i, 40_000, 8)])
            shuffled = gen.partitionBy(P, part)
            if shape == "plain":
                source = shuffled
            elif shape == "union":
                source = sc.union([home, shuffled])
                kind = source._jrdd.rdd().getClass().getSimpleName()
            else:
                source = homeZip.zip(shuffled.glom())
                kind = source._jrdd.rdd().getClass().getSimpleName() if batch == 0 else kind
            for index, executor, _items in source.mapPartitionsWithIndex(where).collect():
                if batch:
                    total += 1
                    same += last.get(index) == executor
                last[index] = executor
        result[shape] = dict(same_executor=f"{same}/{total}", rdd=None if shape == "plain" else kind)
    print(json.dumps(result))
    sc.stop()


if __name__ == "__main__":
    main()
