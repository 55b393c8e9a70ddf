"""The running counts per key ``benchmarks.state`` compares, each in a fresh process of its own:
``python -m benchmarks.state_variants VARIANT CONTROL_DIR``.

CONTROL_DIR holds ``config.json``: the input files in order (the first puts every key into the
state, the others are the measured micro-batches), the watched directory, the checkpoint, the
micro-batches after which to take the driver's memory, the URL of the Spark Connect server a
variant of ``REMOTE_VARIANTS`` runs on. Each variant reads the watched directory
as a stream of words, one a line, counts per word with its state checkpointed, and delivers the
counts of the sampled words (those ending in ``SAMPLE_SUFFIX``) to the driver. The process links
one file at a time into the watched directory, when the harness says (``go-N``), and waits for
the micro-batch that reads it (then writes ``done-N``), so each micro-batch is one file; after
each it notes the query's progress report, the bytes of the new files under the state directory
and, where asked, the driver's memory. It writes
``result.json``: per micro-batch those figures, the highest count delivered per sampled word, the
memory samples, the session's settings.
"""

import json
import os
import pathlib
import sys
import threading
import time
import traceback

from benchmarks.session import MASTER, settings, startSession

SAMPLE_SUFFIX = "000"
"""The words whose counts reach the driver: one key in a thousand."""
TRIGGER = "1 second"
"""Structured Streaming's trigger, as sparkjet's (``TRIGGER_MILLIS``)."""
PROVIDERS = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}
BATCH_TIMEOUT_SECONDS = 3600
POLL_SECONDS = 0.02


def isSampled(entry: tuple[str, int]) -> bool:
    """Whether a ``(word, count)`` of sparkjet's rolling count reaches the driver."""
    return entry[0].endswith(SAMPLE_SUFFIX)


def countWithState(key, frames, state):
    """``applyInPandasWithState``'s function: the word's count so far, kept in Spark's state store."""
    import pandas

    total = state.get[0] if state.exists else 0
    for frame in frames:
        total += len(frame)
    state.update((total,))
    yield pandas.DataFrame({"value": [key[0]], "count": [total]})


class Progress:
    """The query's progress reports as they arrive, and the highest count seen per sampled word."""

    def __init__(self) -> None:
        self.reports: list[dict] = []
        self.counts: dict[str, int] = {}
        self.changed = threading.Condition()

    def addReport(self, report: dict) -> None:
        with self.changed:
            self.reports.append(report)
            self.changed.notify_all()

    def addCounts(self, pairs) -> None:
        with self.changed:
            for word, count in pairs:
                if count > self.counts.get(word, 0):
                    self.counts[word] = count

    def awaitBatch(self, after: int, failed) -> dict:
        """Wait for the report of a micro-batch after ``after`` that read input; return it."""
        deadline = time.monotonic() + BATCH_TIMEOUT_SECONDS
        with self.changed:
            while True:
                found = [r for r in self.reports if r["batchId"] > after and r["numInputRows"] > 0]
                if found:
                    return found[0]
                if failed():
                    raise RuntimeError(f"the query failed: {failed()}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no micro-batch read the file within {BATCH_TIMEOUT_SECONDS} s")
                self.changed.wait(1.0)


def progressListener(progress: Progress):
    """Return a StreamingQueryListener handing each micro-batch's progress report to ``progress``."""
    from pyspark.sql.streaming import StreamingQueryListener

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event) -> None:
            pass

        def onQueryProgress(self, event) -> None:
            report = event.progress
            progress.addReport({
                "batchId": report.batchId,
                "numInputRows": report.numInputRows,
                "durationMs": dict(report.durationMs),
                "stateRows": [operator.numRowsTotal for operator in report.stateOperators],
                "received": time.time(),
            })

        def onQueryIdle(self, event) -> None:
            pass

        def onQueryTerminated(self, event) -> None:
            pass

    return Listener()


class StateFiles:
    """The files under a state directory: each call of ``newBytes`` sums the sizes of the files
    that appeared or changed since the previous call."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.directory = directory
        self.seen: dict[str, tuple[int, int]] = {}

    def newBytes(self) -> tuple[int, int]:
        """Return the bytes and the count of the files new or changed since the last call."""
        current = {}
        for root, _, names in os.walk(self.directory):
            for name in names:
                path = os.path.join(root, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:  # compacted away meanwhile
                    continue
                current[path] = (stat.st_size, stat.st_mtime_ns)
        new = [size for path, (size, mtime) in current.items() if self.seen.get(path) != (size, mtime)]
        self.seen = current
        return sum(new), len(new)


def processRss(pid: int) -> int:
    """Return the resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def driverMemory(spark) -> dict:
    """Return the driver's memory: the Python process's RSS, the JVM's RSS, and the JVM's heap
    in use right after a full collection (its JMX memory bean, through py4j)."""
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.gc()
    heap = jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
    jvmPid = jvm.java.lang.ProcessHandle.current().pid()
    return {"pythonRss": processRss(os.getpid()), "jvmRss": processRss(jvmPid), "jvmHeapAfterGc": heap}


def awaitTurn(control: pathlib.Path, number: int) -> None:
    """Wait until the harness lets micro-batch ``number`` start (it runs the variants' micro-batches
    in turn, one at a time, so that each meets the machine's load alike)."""
    while not (control / f"go-{number}").exists():
        if (control / "stop").exists():
            raise RuntimeError(f"the harness stopped the run before micro-batch {number}")
        time.sleep(POLL_SECONDS)


def feed(spark, config: dict, control: pathlib.Path, progress: Progress, failed, afterBatch) -> dict:
    """Link the input files into the watched directory one at a time, each once the micro-batch
    before was reported; return each micro-batch's figures (with what ``afterBatch(batchId)``
    adds) and the memory samples."""
    from benchmarks.streaming_variants import awaitReady

    awaitReady(spark, control)
    watched = pathlib.Path(config["watched"])
    stateFiles = StateFiles(pathlib.Path(config["stateDirectory"]))
    batches, memory, last = [], [], -1
    for number, source in enumerate(config["files"]):
        awaitTurn(control, number)
        os.link(source, watched / os.path.basename(source))
        report = progress.awaitBatch(last, failed)
        last = report["batchId"]
        written, files = stateFiles.newBytes()
        batches.append({**report, "stateBytes": written, "stateFiles": files, **afterBatch(last)})
        if number in config["memoryAfter"]:
            memory.append({"batches": number, **driverMemory(spark)})
        print(f"micro-batch {number}: {report['durationMs'].get('triggerExecution')} ms, {written:,} state bytes", flush=True)
        (control / f"done-{number}").write_text(str(time.time()))
    return {"batches": batches, "memory": memory}


def sparkjet(config: dict, control: pathlib.Path, remote: str | None = None) -> dict:
    """``Sources.fileWatcher(dir).withoutTimestamps().groupingKey(wholeItem())
    .rollingAggregate(counting())`` under EXACTLY_ONCE, the sampled words into a list sink; on
    the Spark Connect server at ``remote`` where given (this process a client without a SparkContext)."""
    from pyspark import SparkContext

    from sparkjet import AggregateOperations, Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, wholeItem
    from sparkjet.planner import JobStatus

    jet = Jet(master=MASTER) if remote is None else Jet(remote=remote)
    spark = jet.spark()
    progress = Progress()
    spark.streams.addListener(progressListener(progress))
    p = Pipeline.create()
    (
        p.readFrom(Sources.fileWatcher(config["watched"]))
        .withoutTimestamps()
        .groupingKey(wholeItem())
        .rollingAggregate(AggregateOperations.counting())
        .filter(isSampled)
        .writeTo(Sinks.list("sampled"))
    )
    jobConfig = (
        JobConfig().setName("state-benchmark").setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
        .setCheckpointLocation(config["checkpoint"])
    )
    job = jet.newJob(p, jobConfig)
    sampled = jet.getList("sampled")
    driverStates = StateFiles(pathlib.Path(config["checkpoint"]) / "states")

    def drain() -> None:
        count = len(sampled)
        progress.addCounts(sampled[:count])
        del sampled[:count]  # the driver keeps the highest count per word, not every item

    def afterBatch(batchId: int) -> dict:
        drain()
        snapshot = job.metrics().lastSnapshot
        written, _ = driverStates.newBytes()
        return {
            "snapshotBytes": snapshot.bytes if snapshot is not None and snapshot.snapshotId == batchId else None,
            "driverStateBytes": written,
        }

    def failed() -> str | None:
        if job.getStatus() is not JobStatus.FAILED:
            return None
        try:
            job.join()
        except Exception as error:  # the job's failure, to report
            return f"{type(error).__name__}: {error}"
        return "the job failed"

    outcome = feed(spark, config, control, progress, failed, afterBatch)
    drain()
    outcome["microBatchSeconds"] = [[b.batchId, b.seconds, b.itemsRead] for b in job.metrics().microBatches]
    job.cancel()
    try:
        job.join()
    except Exception as error:  # cancelled, as asked; anything else is reported
        outcome["ended"] = f"{type(error).__name__}: {error}"
    if remote is not None and SparkContext._active_spark_context is not None:
        raise RuntimeError("a classic SparkContext started in the Spark Connect client")
    return finish(outcome, progress, spark, jet.shutdown)


def structuredStreaming(config: dict, control: pathlib.Path, provider: str, pandasState: bool) -> dict:
    """``spark.readStream.text(dir)``, ``groupBy("value").count()`` (or ``applyInPandasWithState``
    counting in Python) on the ``provider`` state store, update mode, the sampled words' rows
    collected by ``foreachBatch``."""
    from pyspark.sql import functions as F

    spark = startSession()
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", PROVIDERS[provider])
    progress = Progress()
    spark.streams.addListener(progressListener(progress))
    words = spark.readStream.option("maxFilesPerTrigger", 1).text(config["watched"])
    if pandasState:
        from pyspark.sql.streaming.state import GroupStateTimeout

        counts = words.groupBy("value").applyInPandasWithState(
            countWithState, "value string, count long", "count long", "Update", GroupStateTimeout.NoTimeout
        )
    else:
        counts = words.groupBy("value").count()

    def deliver(frame, batchId: int) -> None:
        progress.addCounts((row["value"], row["count"]) for row in frame.collect())

    # the filter reads the count, so that Spark cannot push it below the aggregation (a filter of the key
    # alone it does push down: the state store would hold the sampled keys only)
    sampled = F.when(F.col("count") > 0, F.col("value")).endswith(SAMPLE_SUFFIX)
    query = (
        counts.where(sampled).writeStream.outputMode("update")
        .foreachBatch(deliver)
        .option("checkpointLocation", config["checkpoint"])
        .trigger(processingTime=TRIGGER)
        .queryName("state-benchmark")
        .start()
    )

    def failed() -> str | None:
        return None if query.exception() is None else str(query.exception())

    outcome = feed(spark, config, control, progress, failed, lambda batchId: {})
    query.stop()
    return finish(outcome, progress, spark, spark.stop)


def finish(outcome: dict, progress: Progress, spark, stop) -> dict:
    """Add what the driver received and the session's settings to ``outcome``; stop the session."""
    with progress.changed:
        outcome["sampledCounts"] = dict(progress.counts)
        outcome["reports"] = list(progress.reports)
    outcome["settings"] = settings(spark)
    stop()
    return outcome


VARIANTS = {
    "sparkjet": sparkjet,
    "sparkjet-connect": lambda config, control: sparkjet(config, control, config["remote"]),
    "ss-hdfs": lambda config, control: structuredStreaming(config, control, "hdfs", pandasState=False),
    "ss-rocksdb": lambda config, control: structuredStreaming(config, control, "rocksdb", pandasState=False),
    "ss-pandas-state": lambda config, control: structuredStreaming(config, control, "hdfs", pandasState=True),
}

REMOTE_VARIANTS = frozenset({"sparkjet-connect"})
"""The variants that run as clients of a Spark Connect server (``config["remote"]``), whose driver's memory is not sampled."""


def main(argv: list[str] | None = None) -> None:
    name, controlDirectory = argv or sys.argv[1:]
    control = pathlib.Path(controlDirectory)
    config = json.loads((control / "config.json").read_text())
    if config.get("pythonPath"):
        # pandas and pyarrow, installed apart for this benchmark: the JVM and its Python workers inherit it
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [config["pythonPath"], os.environ.get("PYTHONPATH")]))
        sys.path.insert(0, config["pythonPath"])
    try:
        outcome = VARIANTS[name](config, control)
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)  # a failed run's threads (a Connect client's whose query never started) keep a process alive
    (control / "result.json").write_text(json.dumps(outcome))


if __name__ == "__main__":
    main()
