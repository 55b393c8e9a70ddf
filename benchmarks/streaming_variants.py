"""The windowed stream word counts ``benchmarks.streaming`` compares, each run alone in a fresh
process: ``python -m benchmarks.streaming_variants VARIANT CONTROL_DIR``.

CONTROL_DIR holds ``config.json`` (the watched directory, the windows to wait for); the process
writes ``ready`` once its query waits for data and appends each micro-batch's progress report to
``progress.jsonl`` as it arrives, with the lines the micro-batch read (the harness paces its drops
by them), collects every window
result the query delivers with the time it reached the sink, until every expected window has
arrived (or the harness writes ``stop``), and writes ``result.json``: the results with their
arrival times, the progress reports, the session's settings.

Every variant parses ``"<ts> <text>"`` lines, takes ``ts`` (ms) as the event time with a
watermark 2 s behind the highest one seen, counts the words of ``text`` (``benchmarks.words``'
tokenization: lower case, split on ``\\W+``, empty strings dropped) per word and tumbling window
of 10 s, and emits each window once the watermark passed its end.
"""

import json
import pathlib
import sys
import tempfile
import threading
import time
from collections.abc import Callable

from benchmarks.session import MASTER, settings, startSession
from benchmarks.words import split

WINDOW_MILLIS = 10_000
LAG_MILLIS = 2_000
TRIGGER = "1 second"
POLL_SECONDS = 0.005
"""How often the sparkjet variant looks at its list sink for new results."""
SETTLE_SECONDS = 2.0
"""How long a variant keeps its query running after the last expected window arrived, so that a
window emitted twice, or a result arriving late, is seen too."""


def eventTime(line: str) -> int:
    """The event time of a ``"<ts> <text>"`` line."""
    return int(line.partition(" ")[0])


def lineWords(line: str) -> list[str]:
    """The words of a line's text (after its timestamp); empty strings remain, as in ``split``."""
    return split(line.partition(" ")[2])


def nonEmpty(word: str) -> bool:
    return word != ""


class Collector:
    """The window results a query delivered, each with the time (epoch seconds) it reached the
    sink, and the query's progress reports."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, int, int, str, int]] = []
        self.progress: list[dict] = []
        self.lock = threading.Lock()

    def add(self, arrived: float, rows) -> None:
        with self.lock:
            self.rows.extend((arrived, start, end, word, count) for start, end, word, count in rows)

    def windows(self) -> set[tuple[int, int]]:
        with self.lock:
            return {(start, end) for _, start, end, _, _ in self.rows}


def progressListener(collector: Collector, control: pathlib.Path, linesRead: Callable[[int, int], int]):
    """Return a StreamingQueryListener keeping each micro-batch's progress report, also appended
    to ``progress.jsonl`` in ``control``, with the ``lines`` the micro-batch read:
    ``linesRead(batchId, numInputRows)``."""
    from pyspark.sql.streaming import StreamingQueryListener

    class Listener(StreamingQueryListener):
        def onQueryStarted(self, event) -> None:
            pass

        def onQueryProgress(self, event) -> None:
            progress = event.progress
            entry = {
                "batchId": progress.batchId,
                "timestamp": progress.timestamp,
                "numInputRows": progress.numInputRows,
                "lines": linesRead(progress.batchId, progress.numInputRows),
                "durationMs": dict(progress.durationMs),
                "eventTime": dict(progress.eventTime),
                "received": time.time(),
            }
            with collector.lock:
                collector.progress.append(entry)
                with open(control / "progress.jsonl", "a") as file:
                    file.write(json.dumps(entry) + "\n")

        def onQueryIdle(self, event) -> None:
            pass

        def onQueryTerminated(self, event) -> None:
            pass

    return Listener()


def awaitReady(spark, control: pathlib.Path) -> None:
    """Wait until the session's one query waits for data; then write ``ready``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        active = spark.streams.active
        if active and active[0].status["message"].startswith("Waiting for"):
            (control / "ready").write_text(str(time.time()))
            return
        time.sleep(0.05)
    raise TimeoutError("the streaming query did not start waiting for data within 120 s")


def awaitWindows(collector: Collector, config: dict, control: pathlib.Path, failed) -> str:
    """Wait until every expected window arrived (then ``SETTLE_SECONDS`` more), the harness
    says stop, or the query failed; return why the wait ended."""
    expected = {tuple(window) for window in config["expectedWindows"]}
    while True:
        if failed():
            return "query failed"
        if (control / "stop").exists():
            return f"stopped by the harness: {(control / 'stop').read_text()}"
        if expected <= collector.windows():
            time.sleep(SETTLE_SECONDS)
            return "all windows arrived"
        time.sleep(0.05)


def sparkjet(config: dict, control: pathlib.Path) -> dict:
    """``Sources.fileWatcher(dir).withTimestamps(ts, 2000).flatMap(tokenize).filter(nonempty)
    .groupingKey(wholeItem()).window(tumbling(10_000)).aggregate(counting())`` into a list sink."""
    import concurrent.futures

    from sparkjet import AggregateOperations, Jet, Pipeline, Sinks, Sources, WindowDefinition, wholeItem
    from sparkjet.planner import JobStatus

    jet = Jet(master=MASTER)
    spark = jet.spark()
    collector = Collector()
    started: list = []  # the job, once newJob returned: no file is dropped before ``ready``

    def linesRead(batchId: int, numInputRows: int) -> int:
        """The lines the job's sources read in micro-batch ``batchId``: its query's rows are the
        watched directory's new files, listed (each read by a Python worker), not their lines."""
        batches = started[0].metrics().microBatches if started else ()
        return sum(batch.itemsRead for batch in batches if batch.batchId == batchId)

    spark.streams.addListener(progressListener(collector, control, linesRead))
    p = Pipeline.create()
    (
        p.readFrom(Sources.fileWatcher(config["watched"]))
        .withTimestamps(eventTime, LAG_MILLIS)
        .flatMap(lineWords)
        .filter(nonEmpty)
        .groupingKey(wholeItem())
        .window(WindowDefinition.tumbling(WINDOW_MILLIS))
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("windows"))
    )
    results = jet.getList("windows")
    stopPolling = threading.Event()

    def poll() -> None:
        seen = 0
        while not stopPolling.is_set():
            count = len(results)
            if count > seen:
                arrived = time.time()
                collector.add(arrived, ((r.start, r.end, r.key, r.result) for r in results[seen:count]))
                seen = count
            time.sleep(POLL_SECONDS)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    job = jet.newJob(p, name="streaming-word-count")
    started.append(job)
    awaitReady(spark, control)
    ended = awaitWindows(collector, config, control, lambda: job.getStatus() is JobStatus.FAILED)
    job.cancel()
    failure = None
    try:
        job.join()
    except concurrent.futures.CancelledError:
        pass
    except Exception as error:  # the job failed: report it
        failure = f"{type(error).__name__}: {error}"
    time.sleep(3 * POLL_SECONDS)
    stopPolling.set()
    poller.join()
    outcome = report(collector, spark, ended, failure)
    jet.shutdown()
    return outcome


def structuredStreaming(
    config: dict, control: pathlib.Path, pythonTokenizer: bool, useArrow: bool | None = None
) -> dict:
    """``spark.readStream.text(dir)``, the timestamp split off in the JVM, ``withWatermark`` on the
    lines, the words by a Python ``udf`` (``pythonTokenizer``; ``useArrow`` None: as the session's
    ``spark.sql.execution.pythonUDF.arrow.enabled`` says) or by ``explode(split(lower))``,
    ``groupBy(window, word).count()`` in append mode into ``foreachBatch``, which collects each
    micro-batch's windows to the driver."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StringType

    spark = startSession()
    collector = Collector()
    spark.streams.addListener(progressListener(collector, control, lambda batchId, numInputRows: numInputRows))
    parts = F.split(F.col("value"), " ", 2)
    lines = spark.readStream.text(config["watched"]).select(
        F.timestamp_millis(parts.getItem(0).cast("long")).alias("eventTime"),
        F.coalesce(parts.getItem(1), F.lit("")).alias("text"),
    )
    lines = lines.withWatermark("eventTime", f"{LAG_MILLIS // 1000} seconds")
    if pythonTokenizer:
        tokenize = F.udf(split, ArrayType(StringType()), useArrow=useArrow)
        words = F.explode(tokenize("text"))
    else:
        words = F.explode(F.split(F.lower("text"), r"\W+"))
    counts = (
        lines.select("eventTime", words.alias("word"))
        .where(F.col("word") != "")
        .groupBy(F.window("eventTime", f"{WINDOW_MILLIS // 1000} seconds"), "word")
        .count()
        .select(
            F.unix_millis(F.col("window.start")).alias("start"),
            F.unix_millis(F.col("window.end")).alias("end"),
            "word",
            "count",
        )
    )

    def deliver(frame, batchId: int) -> None:
        rows = frame.collect()
        collector.add(time.time(), ((r["start"], r["end"], r["word"], r["count"]) for r in rows))

    checkpoint = tempfile.mkdtemp(prefix="ss-checkpoint-")
    query = (
        counts.writeStream.outputMode("append")
        .foreachBatch(deliver)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=TRIGGER)
        .queryName("streaming-word-count")
        .start()
    )
    awaitReady(spark, control)
    ended = awaitWindows(collector, config, control, lambda: query.exception() is not None)
    failure = None if query.exception() is None else str(query.exception())
    query.stop()
    outcome = report(collector, spark, ended, failure)
    spark.stop()
    return outcome


def report(collector: Collector, spark, ended: str, failure: str | None) -> dict:
    with collector.lock:
        return {
            "rows": collector.rows,
            "progress": collector.progress,
            "ended": ended,
            "failure": failure,
            "settings": settings(spark),
            "pythonUdfArrow": pythonUdfArrow(spark),
        }


def pythonUdfArrow(spark) -> str | None:
    """Whether plain Python UDFs run Arrow-batched (the setting, default included)."""
    try:
        return spark.conf.get("spark.sql.execution.pythonUDF.arrow.enabled")
    except Exception:
        return None


VARIANTS = {
    "sparkjet": sparkjet,
    "ss-python-udf": lambda config, control: structuredStreaming(config, control, pythonTokenizer=True),
    "ss-jvm": lambda config, control: structuredStreaming(config, control, pythonTokenizer=False),
    # not run by default: the Python UDF without Arrow, rows pickled in batches (the default before Spark 4.2)
    "ss-python-udf-pickled": lambda config, control: structuredStreaming(
        config, control, pythonTokenizer=True, useArrow=False
    ),
}
DEFAULT_VARIANTS = ("sparkjet", "ss-python-udf", "ss-jvm")


def main(argv: list[str] | None = None) -> None:
    name, controlDirectory = argv or sys.argv[1:]
    control = pathlib.Path(controlDirectory)
    config = json.loads((control / "config.json").read_text())
    started = time.time()
    outcome = VARIANTS[name](config, control)
    outcome["processSeconds"] = time.time() - started
    (control / "result.json").write_text(json.dumps(outcome))


if __name__ == "__main__":
    main()
