"""A local directory's URL as Spark's file source logs it: the pure function a stream job's
checkpoint uses (on Spark Connect there is no JVM to ask) names every path as Hadoop does."""

import pytest

from sparkjet.coredag.runtime.files import hadoopFileUrl

PATHS = [
    "/tmp/a%b", "/tmp/a b", "/tmp/ü x", "/tmp/a#b?c", "/tmp/[x]{y}", "/tmp/a'b(c)*!~", "/tmp/a,b;c:d$e&f+g=h@i",
    "/tmp/tab\there", "/tmp/日本", '/tmp/a"<>|^`\\', "/tmp/a/./b/../c", "/tmp/x/", "/tmp/\u00a0nb", "/tmp/\u2028ls",
    "/tmp/e\u0301",
]


def qualifiedByHadoop(spark, directory: str) -> str:
    """Return Hadoop's qualified URL of ``directory``, asked of the driver's JVM (as Spark's file source names it)."""
    context = spark.sparkContext
    path = context._jvm.org.apache.hadoop.fs.Path(directory)
    return path.getFileSystem(context._jsc.hadoopConfiguration()).makeQualified(path).toUri().toString()


@pytest.mark.spark
def test_a_local_directorys_url_is_the_one_hadoop_qualifies(spark):
    """Each path's URL is the driver's JVM's (``Path.makeQualified``), quoted characters and all."""
    assert [hadoopFileUrl(path) for path in PATHS] == [qualifiedByHadoop(spark, path) for path in PATHS]
    assert hadoopFileUrl("/tmp/a%b") == "file:///tmp/a%25b"
