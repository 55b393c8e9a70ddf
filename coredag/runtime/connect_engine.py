"""The Spark Connect engine: a Core DAG's physical plan run through the DataFrame API alone
(no SparkContext, no RDDs, no accumulators, no JVM), so that it runs on a Spark Connect
session. Vertices run in ``mapInArrow`` over Arrow batches of pickled items, edges route as
the classic engine's, figures travel beside the data (see ``engine.Engine``)."""

import contextlib
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.coredag.processors.output_paths import localPathOf
from sparkjet.coredag.processors.sinks import SaveAsTextFiles
from sparkjet.coredag.runtime.arrow_batches import Figures
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.connect_progress import runningFor, runningStages, stageProgress
from sparkjet.coredag.runtime.connect_queries import RelayedQuery
from sparkjet.coredag.runtime.dataframe_building import DataFrameBuilder
from sparkjet.coredag.runtime.dataframe_outputs import runTerminalFlows
from sparkjet.coredag.runtime.execution import JobOutcome
from sparkjet.coredag.runtime.job_control import JobControl, StageInfo
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.output_directory import LocalOutputDirectory, UrlOutputDirectory
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan, measureInputBytes, physicalPlan, terminalOutputOf
from sparkjet.coredag.runtime.processor_state import statesByVertex
from sparkjet.coredag.runtime.server_directories import ServerOutputDirectory
from sparkjet.coredag.runtime.session import localThreads
from sparkjet.coredag.runtime.terminal_outputs import abortOutputs

_parallelisms: "weakref.WeakKeyDictionary[SparkSession, int]" = weakref.WeakKeyDictionary()


def configuredParallelism(setting: Callable[[str], str | None]) -> int | None:
    """Return how many partitions a server splits a range into, as its settings (``setting(key)``,
    None where unset) say it, as Spark decides it: ``spark.sql.leafNodeDefaultParallelism``, else
    ``spark.default.parallelism``, else a local master's threads; None where only a job can tell
    (a cluster, ``local[*]``)."""
    for key in ("spark.sql.leafNodeDefaultParallelism", "spark.default.parallelism"):
        if (value := setting(key)) is not None:
            return int(value)
    threads = localThreads(setting("spark.master") or "")
    return None if threads in (None, "*") else int(threads)


class ConnectJobControl(JobControl):
    """The client's hold on a job running on a Connect session: its Spark jobs carry the
    control's ``group`` as their tag, and ``cancel()`` interrupts them."""

    @contextlib.contextmanager
    def watching(self, spark: SparkSession) -> Iterator[None]:
        """Interrupt the job's Spark jobs when ``cancel()`` is called while the block runs them."""
        stopped = threading.Event()

        def watch() -> None:
            while not stopped.is_set():
                self._woken.wait()
                self._woken.clear()
                if self.cancelled and not stopped.is_set():
                    spark.interruptTag(self.group)

        watcher = threading.Thread(target=watch, name=f"sparkjet-watch-{self.jobName}", daemon=True)
        spark.addTag(self.group)
        watcher.start()
        try:
            if self.cancelled:
                raise self.cancellation()
            with runningFor(self.group):
                yield
        finally:
            spark.removeTag(self.group)
            stopped.set()
            self._woken.set()
            watcher.join()


class ConnectEngine:
    """Runs jobs on a Spark Connect session: each chain of vertices one ``mapInArrow``, each
    shuffle a ``repartition`` by partition keys."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        spark.registerProgressHandler(stageProgress)  # once per session: the same handler is kept once

    def physicalPlan(self, dag: DAG) -> PhysicalPlan:
        """Return the physical plan of ``dag`` at the session's default parallelism."""
        return physicalPlan(dag, self._defaultParallelism(), measureInputBytes(dag))

    def _defaultParallelism(self) -> int:
        """Return the server's default parallelism: the partitions of a range it splits as it
        likes, as its settings say it (``configuredParallelism``), else as a one-task job finds
        (asked once per session)."""
        if self.spark not in _parallelisms:
            configured = configuredParallelism(lambda key: self.spark.conf.get(key, None))
            if configured is None:
                partitions = self.spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p"))
                configured = int(partitions.agg(F.countDistinct("p")).collect()[0][0])
            _parallelisms[self.spark] = configured
        return _parallelisms[self.spark]

    def jobControl(self, jobName: str) -> ConnectJobControl:
        """Return a new hold on job ``jobName``'s Spark jobs, tagged with a tag of their own."""
        return ConnectJobControl(jobName)

    def runBatch(self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl) -> JobOutcome:
        """Run a batch job's ``dag`` as ``plan`` says; return its list sinks' items, its
        DataFrames and its figures. A failure or a cancellation leaves no output: what the
        job wrote is removed on the server."""
        started = time.perf_counter()
        lists, dataFrames, figures = self._run(
            DataFrameBuilder(self.spark, dag, plan, jobName), self.outputDirectories(dag), control
        )
        metrics = JobMetrics.of(jobName, time.perf_counter() - started, dag, figures, plan.shuffledEdges())
        return JobOutcome(lists=lists, dataFrames=dataFrames, metrics=metrics, counts=Counter(figures))

    def runMicroBatch(
        self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl, microBatch: MicroBatch,
        caches: StreamCaches,
    ) -> JobOutcome:
        """Run a stream job's ``dag`` over ``microBatch`` as the classic engine does; return also
        the state each vertex's processors end it with, gathered from the figures rows. Its files
        sinks write into the directories the job claimed (``microBatch.outputs``); the outputs
        of the vertices no stream reaches are kept in ``caches``."""
        builder = DataFrameBuilder(self.spark, dag, plan, jobName, microBatch, caches)
        lists, dataFrames, figures = self._run(builder, microBatch.outputs, control)
        return JobOutcome(
            lists=lists, dataFrames=dataFrames, counts=Counter(figures), states=statesByVertex(figures.states)
        )

    def _run(
        self, builder: DataFrameBuilder, outputs: Mapping[str, ServerOutputDirectory], control: JobControl,
    ) -> tuple[dict, dict, Figures]:
        """Run the job ``builder`` builds, its files sinks' ``outputs`` committed at the end;
        a failure or a cancellation removes what the run wrote on the server and is the job's error."""
        try:
            with control.watching(self.spark):
                outcome = runTerminalFlows(self.spark, builder.dag, builder, outputs)
            for output in outputs.values():
                output.commit()
        except Exception as error:
            abortOutputs(lambda: None, outputs)
            failure = control.failureOf(error)
            raise failure from failure.__cause__
        finally:
            builder.release()
        return outcome

    def startQuery(self, rows: DataFrame, onMicroBatch: Callable, location: str, queryName: str, trigger: dict):
        """Start the query reading ``rows`` on the server; its function hands each micro-batch
        to this client, which runs it with ``onMicroBatch`` (see ``connect_queries``)."""
        return RelayedQuery.start(rows, onMicroBatch, location, queryName, trigger)

    def outputDirectories(self, dag: DAG) -> dict[str, ServerOutputDirectory]:
        """Return, per files sink, its directory on the server's file system, or at a URL of
        another file system, which the server and its tasks reach through fsspec (the classic
        engine reaches it through the JVM's Hadoop, which a Connect client has not)."""
        outputs = {}
        for vertex in dag:
            output = terminalOutputOf(vertex.processorSupplier)
            if isinstance(output, SaveAsTextFiles):
                directory = (
                    LocalOutputDirectory(output.directory, output.origin, output.resumes)
                    if localPathOf(output.directory) is not None
                    else UrlOutputDirectory(output.directory, output.origin, output.resumes)
                )
                outputs[vertex.name] = ServerOutputDirectory(self.spark, directory)
        return outputs

    def cancelRunning(self, control: JobControl) -> None:
        """Interrupt the Spark jobs tagged with ``control``'s group."""
        self.spark.interruptTag(control.group)

    def awaitTasksEnded(self, control: JobControl) -> None:
        """Return at once: a job's tasks never create its staging directory, so one still
        running after an abort writes nothing."""

    @staticmethod
    def runningStages(jobGroup: str) -> tuple[list[int], list[StageInfo]]:
        """Return the Spark stages of ``jobGroup`` as the server reported them (see ``connect_progress``)."""
        return runningStages(jobGroup)

