"""A class-data archive of the classes a script's Spark session loads, so the JVMs the tests'
scripts start map them from the archive instead of reading and verifying them again.

``python -m tests.class_archive FILE`` starts a session as a test's script does, runs a batch job
and a checkpointed stream job, stops, and has its JVM write the classes it loaded to ``FILE`` as
it exits (Java's dynamic CDS, ``-XX:ArchiveClassesAtExit``). ``classArchive()`` makes it once per
Java and PySpark and returns its path. A JVM given the archive (``-XX:SharedArchiveFile``)
started a session in 10-13 s where it took 22 s without, at a load of 6-11 on 2 cores (three
runs each, by turns), and tests/faults/test_interrupts.py's six scripts took 113 s where they
took 189 s; a JVM of another Java or class path ignores it. Making it (a session, two small jobs
and the JVM writing about 170 MB as it exits) took 154 s at a load of 11, once per virtual
environment: a fresh clone's first run pays it, and its script JVMs then save about 10 s each.
"""

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

ARCHIVE_OPTION = "-XX:ArchiveClassesAtExit"
USE_OPTIONS = "-XX:SharedArchiveFile={} -Xlog:cds*=off"
"""Map the archive, and say nothing of it on the JVM's stdout, which scripts print their results to."""


def java() -> str:
    """Return the java command spark-submit runs."""
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else "java"


def archivePath() -> pathlib.Path:
    """Return where the archive of this Java and this PySpark lives: beside this Python's packages."""
    import pyspark

    version = subprocess.run([java(), "-version"], capture_output=True, text=True).stderr
    key = hashlib.sha256(f"{version}\n{pyspark.__file__}\n{pyspark.__version__}".encode()).hexdigest()[:16]
    return pathlib.Path(sys.prefix) / f"sparkjet-test-classes-{key}.jsa"


def classArchive(options: str, run) -> pathlib.Path:
    """Return the archive of the classes a session started with JVM ``options`` loads, made
    first with ``run`` (tests.conftest.run) if this Java and PySpark have none yet."""
    path = archivePath()
    if path.exists():
        return path
    made = path.with_name(f"{path.stem}-{os.getpid()}.jsa")
    env = dict(os.environ, SPARK_SUBMIT_OPTS=f"{options} {ARCHIVE_OPTION}={made} -Xlog:cds*=off")
    env.pop("PYTHONHASHSEED", None)
    done = run([sys.executable, "-m", "tests.class_archive"], env=env, cwd=pathlib.Path(__file__).parent.parent)
    assert done.returncode == 0 and made.exists(), f"the class archive was not made:\n{done.stderr[-3000:]}"
    os.replace(made, path)
    return path


def workload(directory: str) -> None:
    """Start a session, run a batch job with a shuffle and a sort, and a stream job exactly once."""
    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources
    from sparkjet import TestSources, WindowDefinition, wholeItem

    jet = Jet(master="local[2]")
    batch = Pipeline.create()
    counts = batch.readFrom(Sources.items(range(100))).groupingKey(lambda n: n % 7).aggregate(AggregateOperations.counting())
    counts.sort().writeTo(Sinks.files(os.path.join(directory, "batch")))
    jet.newJob(batch).join()
    stream = Pipeline.create()
    events = stream.readFrom(TestSources.finiteStream([(n, n % 5) for n in range(60)], 20)).withNativeTimestamps(0)
    windows = events.groupingKey(wholeItem()).window(WindowDefinition.tumbling(10))
    windows.aggregate(AggregateOperations.counting()).writeTo(Sinks.files(os.path.join(directory, "stream")))
    config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
    jet.newJob(stream, config.setCheckpointLocation(os.path.join(directory, "checkpoint"))).join()


def main() -> None:
    """Run the workload, stop the session and wait for its JVM, which writes the archive as it exits."""
    from pyspark import SparkContext

    with tempfile.TemporaryDirectory(prefix="sparkjet-class-archive-") as directory:
        workload(directory)
        process = SparkContext._gateway.proc
        SparkContext._active_spark_context.stop()
    process.stdin.close()  # the JVM ends once its stdin does
    process.wait()


if __name__ == "__main__":
    main()
