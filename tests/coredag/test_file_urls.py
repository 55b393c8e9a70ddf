"""A local directory's URL as Spark's file source logs it: the pure function a Connect client
uses (it has no JVM to ask) names every path as Hadoop does on a classic session."""

import pytest

from sparkjet.coredag.runtime.classic_engine import ClassicEngine
from sparkjet.coredag.runtime.files import hadoopFileUrl

PATHS = [
    "/tmp/a%b", "/tmp/a b", "/tmp/ü x", "/tmp/a#b?c", "/tmp/[x]{y}", "/tmp/a'b(c)*!~", "/tmp/a,b;c:d$e&f+g=h@i",
    "/tmp/tab\there", "/tmp/日本", '/tmp/a"<>|^`\\', "/tmp/a/./b/../c", "/tmp/x/", "/tmp/\u00a0nb", "/tmp/\u2028ls",
    "/tmp/e\u0301",
]


@pytest.mark.spark
def test_a_local_directorys_url_is_the_one_hadoop_qualifies(spark):
    """Each path's URL is the driver's JVM's (``Path.makeQualified``), quoted characters and all."""
    engine = ClassicEngine(spark)
    assert [hadoopFileUrl(path) for path in PATHS] == [engine.fileSourceUrl(path) for path in PATHS]
    assert hadoopFileUrl("/tmp/a%b") == "file:///tmp/a%25b"
