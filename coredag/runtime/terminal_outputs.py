"""A job's terminal outputs: its list sinks' items collected to the driver, its files sinks'
committed directories and its DataFrames, each from the RDD of its sink vertex."""

import itertools
import urllib.parse
from collections.abc import Callable, Mapping

from pyspark import RDD, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.errors import DagError, JobError, NoSpaceError, OutputError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.processors.full_disk import isFull, noSpaceError
from sparkjet.coredag.processors.output_paths import localPathOf
from sparkjet.coredag.processors.sinks import (
    CollectForAssertion,
    CollectToList,
    CreateDataFrame,
    SaveAsTextFiles,
)
from sparkjet.coredag.runtime.output_directory import HadoopOutputDirectory, LocalOutputDirectory
from sparkjet.coredag.runtime.physical_plan import terminalOutputOf
from sparkjet.coredag.runtime.transport import TRANSPORTED, restoreError, summarizeFailure

OutputDirectory = LocalOutputDirectory | HadoopOutputDirectory
"""A job's claim on a new output directory, local or of a Hadoop file system."""


def outputDirectories(sc: SparkContext, dag: DAG) -> dict[str, OutputDirectory]:
    """Return, per files sink, the directory its job will claim, write and commit."""
    outputs = {}
    for vertex in dag:
        output = terminalOutputOf(vertex.processorSupplier)
        if isinstance(output, SaveAsTextFiles):
            outputs[vertex.name] = (
                LocalOutputDirectory(output.directory, output.origin, output.resumes)
                if localPathOf(output.directory) is not None
                else HadoopOutputDirectory(output.directory, output.origin, sc, output.resumes)
            )
    return outputs


def abortOutputs(awaitTasksEnded: Callable[[], None], outputs: Mapping[str, OutputDirectory]) -> None:
    """Remove what a failed job wrote, once its last tasks ended (``awaitTasksEnded``: one
    still running could write again), and nothing else."""
    if outputs:
        awaitTasksEnded()
    for output in outputs.values():
        output.abort()


def runTerminalVertices(
    spark: SparkSession, dag: DAG, vertexRdd: Callable[[str], RDD], outputs: Mapping[str, OutputDirectory]
) -> tuple[dict[object, list], dict[str, DataFrame]]:
    """Run the job: compute each vertex without outbound edges into its terminal output; the
    items collected to the driver come back by list name (an assertion sink's: by its check)."""
    lists: dict[object, list] = {}
    dataFrames: dict[str, DataFrame] = {}
    for vertex in dag:
        rdd = vertexRdd(vertex.name)  # topological order: no deep recursion
        if dag.getOutboundEdges(vertex.name):
            continue
        output = terminalOutputOf(vertex.processorSupplier)
        if isinstance(output, CollectToList | CollectForAssertion):
            batches = rdd.collect()
            collectedAs = output.listName if isinstance(output, CollectToList) else output.check
            lists.setdefault(collectedAs, []).extend(itertools.chain.from_iterable(batches))
        elif isinstance(output, SaveAsTextFiles):
            saveAsTextFiles(rdd, outputs[vertex.name])
        elif isinstance(output, CreateDataFrame):
            if output.name in dataFrames:
                raise DagError(f"Two sinks of one job write the DataFrame '{output.name}'; name them apart")
            dataFrames[output.name] = _materializedDataFrame(spark, rdd, output)
        else:
            rdd.count()
    return lists, dataFrames


def saveAsTextFiles(batches: RDD, output: OutputDirectory) -> None:
    """Claim the new directory, then have Spark write the lines into its staging directory; a
    failure of the write itself (one naming where it writes) names the directory and the cause."""
    output.claimOnce()
    free = output.freeSpace()
    try:
        batches.mapPartitions(itertools.chain.from_iterable).saveAsTextFile(output.sparkPath)
    except Exception as error:
        if isinstance(error, TRANSPORTED) or restoreError(str(error)) is not None:
            raise
        if isFull(error):
            raise noSpaceIn(output, free) from error
        if urllib.parse.urlsplit(output.sparkPath).path not in str(error):
            raise
        raise OutputError(
            f"{output.origin}: writing the output directory '{output.directory}' failed: "
            f"{summarizeFailure(str(error))}"
        ) from error


def noSpaceIn(output: OutputDirectory, free: int | None) -> NoSpaceError:
    """Return the error of a files sink whose write Spark failed on a full disk, ``free`` bytes
    free there when the write began."""
    began = f"it needed more than the {free:,} bytes free there when it began" if free is not None else "it did not fit"
    return noSpaceError(
        output.origin, output.directory, f"{began} (or Spark's scratch directory spark.local.dir filled)",
        output.freeSpace(),
    )


def closeLeftWriters(sc: SparkContext) -> None:
    """Have the driver's JVM close the files its tasks that failed on a full disk left open:
    Hadoop's writer of such a task does not close its part file, which the task's abort removes
    but whose space stays taken until the writer is collected (local executors run in the
    driver's JVM; a cluster's executors collect theirs in their own time)."""
    sc._jvm.System.gc()


def _materializedDataFrame(spark: SparkSession, batches: RDD, output: CreateDataFrame) -> DataFrame:
    """Return the items as a DataFrame computed now; the items Spark reads to infer a schema
    are cached, so they are not computed twice. Spark's refusal of the items names the sink."""
    items = batches.mapPartitions(itertools.chain.from_iterable)
    if output.schema is None:
        items = items.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return spark.createDataFrame(items, output.schema).localCheckpoint()
    except Exception as error:
        if isinstance(error, TRANSPORTED) or restoreError(str(error)) is not None:
            raise
        raise dataFrameRefused(output, error) from error
    finally:
        if output.schema is None:
            items.unpersist()


def dataFrameRefused(output: CreateDataFrame, error: Exception) -> JobError:
    """Return the error of DataFrame sink ``output`` whose items Spark refused with ``error``."""
    fix = "match the items and the schema" if output.schema is not None else (
        "make each item a dict, tuple or Row, or pass a schema"
    )
    return JobError(
        f"Sinks.dataframe('{output.name}'): Spark cannot make a DataFrame of the items "
        f"({summarizeFailure(str(error))}); {fix}"
    )
