"""Running a Core DAG on PySpark, as the classic engine does (``classic_engine``): its physical
plan executed as RDDs, narrow links and shuffles.

The steps live in modules of one concept each: ``physical_plan`` (what will run, pure),
``rdd_building`` (the plan as RDDs), ``terminal_outputs`` (lists, files, DataFrames),
``job_control`` (cancelling and watching a job), ``shuffling`` and ``model.routing`` (where
items go). Only the modules of sparkjet.coredag.runtime import pyspark (the workers' side runs
sparkjet.coredag.runtime.worker_daemon).
"""

import time
from collections import Counter

import attrs
from pyspark.accumulators import _accumulatorRegistry
from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.errors import NoSpaceError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import CountsAccumulatorParam, JobMetrics
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.job_control import JobControl, StageInfo, runningStages
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.physical_plan import SMALL_JOB_BYTES, PhysicalPlan, measureInputBytes, physicalPlan
from sparkjet.coredag.runtime.processor_state import ProcessorState, StatesAccumulatorParam, statesByVertex
from sparkjet.coredag.runtime.rdd_building import RddBuilder
from sparkjet.coredag.runtime.terminal_outputs import (
    abortOutputs,
    closeLeftWriters,
    outputDirectories,
    runTerminalVertices,
)

__all__ = [
    "SMALL_JOB_BYTES", "JobControl", "JobOutcome", "MicroBatch", "ProcessorState", "StageInfo", "executeDag",
    "physicalPlanOn", "runningStages", "sparkJobDescription",
]


@attrs.frozen(kw_only=True)
class JobOutcome:
    """What a finished job (or micro-batch) hands back to its driver: the items of its list
    sinks, the DataFrames of its DataFrame sinks, its raw figures and, for a batch job, their
    summary (``metrics``); after a stream's micro-batch, the state of each vertex's processors by index."""

    lists: dict[str, list]
    dataFrames: dict[str, DataFrame]
    counts: Counter = attrs.field(factory=Counter)
    """The raw figures of what the job did (a stream job adds up its micro-batches')."""
    metrics: JobMetrics | None = None
    """A batch job's figures (None after a micro-batch: its stream job summarizes its added-up counts)."""
    states: dict[str, dict[int, ProcessorState]] = attrs.field(factory=dict)


def physicalPlanOn(spark: SparkSession, dag: DAG) -> PhysicalPlan:
    """Return the physical plan of ``dag`` on ``spark``: its default parallelism, and the sizes
    of the job's inputs, measured now (which may list files)."""
    return physicalPlan(dag, spark.sparkContext.defaultParallelism, measureInputBytes(dag))


def executeDag(
    spark: SparkSession,
    dag: DAG,
    jobName: str,
    control: JobControl | None = None,
    plan: PhysicalPlan | None = None,
    microBatch: MicroBatch | None = None,
    caches: StreamCaches | None = None,
) -> JobOutcome:
    """Run a validated, preflighted ``dag`` as its physical ``plan`` says (by default, the one
    ``physicalPlanOn`` makes); return its list sinks' items, its DataFrames and its figures.

    ``control`` cancels the run when asked; a task failed by the job's own error (a user
    function's, say) fails the run at once, without its retries. A failure or a cancellation
    leaves no output: part files already written by this job are removed. A stream job runs
    it once per ``microBatch``, with the ``caches`` its loop and itself own.
    """
    control = control or JobControl(jobName)
    sc = spark.sparkContext
    plan = plan or physicalPlanOn(spark, dag)
    counts = control.counts = sc.accumulator(Counter(), CountsAccumulatorParam())
    states = sc.accumulator({}, StatesAccumulatorParam()) if microBatch is not None else None
    builder = RddBuilder(spark, dag, plan, jobName, counts, states, microBatch, caches)
    outputs = microBatch.outputs if microBatch is not None else outputDirectories(sc, dag)
    started = time.perf_counter()
    if control.cancelled:
        raise control.cancellation()
    sc.setJobGroup(control.group, f"sparkjet job '{jobName}'", interruptOnCancel=False)

    def describedVertexRdd(name: str):
        sc.setJobDescription(sparkJobDescription(jobName, name, microBatch))
        return builder.vertexRdd(name)

    try:
        with control.watching(sc):
            lists, dataFrames = runTerminalVertices(spark, dag, describedVertexRdd, outputs)
        for output in outputs.values():
            output.commit()
    except Exception as error:
        abortOutputs(lambda: control.awaitTasksEnded(sc), outputs)
        failure = control.failureOf(error, builder)
        if isinstance(failure, NoSpaceError):
            closeLeftWriters(sc)
        raise failure from failure.__cause__
    finally:
        builder.unpersist()
        forgetAccumulators(counts, states)
    if microBatch is not None:
        return JobOutcome(lists=lists, dataFrames=dataFrames, counts=counts.value, states=statesByVertex(states.value))
    metrics = JobMetrics.of(jobName, time.perf_counter() - started, dag, counts.value, plan.shuffledEdges())
    return JobOutcome(lists=lists, dataFrames=dataFrames, counts=counts.value, metrics=metrics)


def forgetAccumulators(*accumulators) -> None:
    """Drop a finished job's accumulators from PySpark's registry, which keeps every accumulator
    a process made (a stream's micro-batch makes two, the states one holding every processor's
    state): their values stay readable, and no task of the job updates them any more."""
    for accumulator in accumulators:
        if accumulator is not None:
            _accumulatorRegistry.pop(accumulator.aid, None)


def sparkJobDescription(jobName: str, vertexName: str, microBatch: MicroBatch | None = None) -> str:
    """Return the description of the Spark jobs that compute vertex ``vertexName`` (those Spark
    runs to build its RDD too), as Spark's UI lists them: in Jet's terms, job and vertex."""
    batch = f", micro-batch {microBatch.batchId}" if microBatch is not None else ""
    return f"sparkjet job '{jobName}'{batch}: vertex '{vertexName}'"
