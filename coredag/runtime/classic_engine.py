"""The classic engine: a Core DAG's physical plan run on Spark's SparkContext as RDDs, its
figures counted by accumulators, its Spark jobs in a job group (see ``engine.Engine``)."""

from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.execution import JobOutcome, executeDag, physicalPlanOn
from sparkjet.coredag.runtime.job_control import JobControl, StageInfo, runningStages
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.terminal_outputs import OutputDirectory, outputDirectories


class ClassicEngine:
    """Runs jobs on ``spark``'s SparkContext: each vertex an RDD, each edge a narrow link or a shuffle."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def physicalPlan(self, dag: DAG) -> PhysicalPlan:
        """Return the physical plan of ``dag`` at the SparkContext's default parallelism."""
        return physicalPlanOn(self.spark, dag)

    def jobControl(self, jobName: str) -> JobControl:
        """Return a new hold on job ``jobName``'s Spark jobs, in a job group of their own."""
        return JobControl(jobName)

    def runBatch(self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl) -> JobOutcome:
        """Run a batch job's ``dag`` as ``plan`` says (see ``executeDag``)."""
        return executeDag(self.spark, dag, jobName, control, plan)

    def runMicroBatch(
        self, dag: DAG, plan: PhysicalPlan, jobName: str, control: JobControl, microBatch: MicroBatch,
        caches: StreamCaches,
    ) -> JobOutcome:
        """Run a stream job's ``dag`` over ``microBatch``, its RDDs kept for the next ones in
        ``caches`` (see ``executeDag``)."""
        return executeDag(self.spark, dag, jobName, control, plan, microBatch, caches)

    def startQuery(self, rows: DataFrame, onMicroBatch: Callable, location: str, queryName: str, trigger: dict):
        """Start the query reading ``rows``: Spark calls ``onMicroBatch`` in this driver, a micro-batch at a time."""
        writer = rows.writeStream.foreachBatch(onMicroBatch).option("checkpointLocation", location)
        return writer.queryName(queryName).trigger(**trigger).start()

    def outputDirectories(self, dag: DAG) -> dict[str, OutputDirectory]:
        """Return, per files sink, its directory: local, or of a Hadoop file system through the JVM."""
        return outputDirectories(self.spark.sparkContext, dag)

    def cancelRunning(self, control: JobControl) -> None:
        """Cancel the Spark jobs of ``control``'s job group."""
        self.spark.sparkContext.cancelJobGroup(control.group)

    def awaitTasksEnded(self, control: JobControl) -> None:
        """Wait until the tasks of ``control``'s job group have ended, as the status tracker says."""
        control.awaitTasksEnded(self.spark.sparkContext)

    @staticmethod
    def runningStages(jobGroup: str) -> tuple[list[int], list[StageInfo]]:
        """Return the Spark stages of ``jobGroup`` as the active SparkContext's status tracker says."""
        return runningStages(jobGroup)
