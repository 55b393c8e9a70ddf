"""The engine seam: what runs a Core DAG's physical plan on a Spark session and hands back its
outputs and figures. The planner and the stream logic (``coredag/runtime/stream/``) ask an
``Engine`` only; the engine's own modules alone touch the classic API of Spark (SparkContext,
RDDs, accumulators, the JVM), so a session of Spark Connect, which has none of those, can get an
engine of its own (docs/internals/modules.md)."""

from collections.abc import Callable, Mapping
from typing import Protocol

from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.runtime import connect_progress
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.classic_engine import ClassicEngine
from sparkjet.coredag.runtime.execution import JobOutcome
from sparkjet.coredag.runtime.job_control import JobControl, StageInfo
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.output_directory import OutputDirectoryClaim
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.session import isConnect

__all__ = [
    "ClassicEngine", "Engine", "JobControl", "JobOutcome", "MicroBatch", "StageInfo", "StreamCaches", "StreamQuery", "engineOf",
    "runningStages",
]


class StreamQuery(Protocol):
    """What a stream job's run asks of its running query (Spark's ``StreamingQuery`` is one)."""

    @property
    def isActive(self) -> bool: ...

    def awaitTermination(self, timeout: float) -> bool | None: ...

    def stop(self) -> None: ...


class Engine(Protocol):
    """What a job asks of the Spark session it runs on: its physical plan, its runs (a batch
    job's one, a stream job's micro-batches), its files sinks' directories, its cancellation and
    its progress."""

    spark: SparkSession
    """The session the engine runs jobs on (a stream job's query reads its sources through it)."""

    def physicalPlan(self, dag: DAG) -> PhysicalPlan:
        """Return the physical plan of ``dag`` on the session: its default parallelism, and the
        sizes of the job's inputs, measured now (which may list files)."""

    def jobControl(self, jobName: str) -> JobControl:
        """Return a new hold on the runs of job ``jobName``: ``cancel()`` stops them."""

    def runBatch(self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl) -> JobOutcome:
        """Run a batch job's validated, preflighted ``dag`` as ``plan`` says; return its list
        sinks' items, its DataFrames and its figures. A failure or a cancellation leaves no output."""

    def runMicroBatch(
        self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl, microBatch: MicroBatch,
        caches: StreamCaches,
    ) -> JobOutcome:
        """Run a stream job's ``dag`` over ``microBatch``; return also the state each vertex's
        processors end it with. What it keeps for the next micro-batches goes into ``caches``,
        each value with the function that releases it when its owner closes the cache."""

    def startQuery(
        self, rows: DataFrame, onMicroBatch: Callable[[DataFrame, int], None], location: str, queryName: str,
        trigger: dict,
    ) -> StreamQuery:
        """Start the Structured Streaming query reading ``rows``, its checkpoint at ``location``,
        under ``trigger``; each micro-batch is run by ``onMicroBatch(rows, batchId)`` in this
        process, and Spark commits it once that returned."""

    def outputDirectories(self, dag: DAG) -> Mapping[str, OutputDirectoryClaim]:
        """Return, per files sink of ``dag``, the directory its job will claim, write and commit."""

    def cancelRunning(self, control: JobControl) -> None:
        """Cancel the Spark jobs ``control``'s job runs now (its run in progress fails)."""

    def awaitTasksEnded(self, control: JobControl) -> None:
        """Wait until the tasks of ``control``'s failed run have ended (they may still be writing)."""

    def runningStages(self, jobGroup: str) -> tuple[list[int], list[StageInfo]]:
        """Return the ids of the Spark stages the job of ``jobGroup`` (its control's ``group``)
        has so far and the infos of those running."""


def engineOf(spark: SparkSession) -> Engine:
    """Return the engine that runs jobs on ``spark``: for a Spark Connect session the Connect
    engine, which uses the DataFrame API alone; else the classic one, which drives Spark's
    SparkContext and RDDs."""
    if isConnect(spark):
        from sparkjet.coredag.runtime.connect_engine import ConnectEngine  # imports the Connect client

        return ConnectEngine(spark)
    return ClassicEngine(spark)



def runningStages(jobGroup: str) -> tuple[list[int], list[StageInfo]]:
    """Return the Spark stages of the job of ``jobGroup`` (``Engine.runningStages``): as a Spark
    Connect server reported them, for a job on a Connect session, else as the classic engine's
    status tracker says (nothing when no SparkContext runs)."""
    reported = connect_progress.runningStages(jobGroup)
    return reported if reported[0] else ClassicEngine.runningStages(jobGroup)
