"""Narrow coalescing by Jet's isolated rule: Spark's ``coalesce`` gives each downstream
partition a run of neighbouring upstream partitions, Jet's isolated edge gives downstream
processor j the upstream processors i with ``i mod D == j``."""

from pyspark import RDD, SparkContext


def coalescedByJetsRule(sc: SparkContext, rdd: RDD, count: int) -> RDD:
    """Return ``rdd`` in ``count`` partitions, partition j holding upstream partitions
    j, j + count, j + 2 * count... (no shuffle: each group is a pruned view of ``rdd``,
    coalesced into one partition, and the groups are joined in order)."""
    jvm, upstream = sc._jvm, rdd.getNumPartitions()
    javaRdd = rdd._jrdd
    groups = []
    for target in range(count):
        kept = jvm.java.util.HashSet()
        for index in range(target, upstream, count):
            kept.add(index)
        keptFn = jvm.scala.collection.JavaConverters.asScalaSetConverter(kept).asScala()
        pruned = jvm.org.apache.spark.rdd.PartitionPruningRDD.create(javaRdd.rdd(), keptFn)
        group = jvm.org.apache.spark.api.java.JavaRDD(pruned, javaRdd.classTag()).coalesce(1)
        groups.append(RDD(group, sc, rdd._jrdd_deserializer))
    return sc.union(groups)
