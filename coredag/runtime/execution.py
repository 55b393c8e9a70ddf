"""Running a Core DAG on PySpark: vertices become partitions, edges narrow links or shuffles.

Only the modules of sparkjet.coredag.runtime import pyspark (the workers' side runs
sparkjet.coredag.runtime.worker_daemon).
"""

import concurrent.futures
import contextlib
import functools
import itertools
import pickle
import random
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Callable, Iterator

import attrs
from py4j.protocol import Py4JError
from pyspark import RDD, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.status import SparkStageInfo, StatusTracker

from sparkjet.coredag.api.standard import StandardProcessorSupplier, batched
from sparkjet.coredag.errors import (
    DagError,
    JobError,
    OutputError,
    UserFunctionError,
    describeStages,
    shorten,
)
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.metrics import CountsAccumulatorParam, JobMetrics, TaskMetrics
from sparkjet.coredag.model.partitioner import DefaultPartitioner
from sparkjet.coredag.model.vertex import Vertex
from sparkjet.coredag.processors.output_paths import localPathOf
from sparkjet.coredag.processors.sinks import (
    CollectToList,
    CreateDataFrame,
    ListSinkP,
    SaveAsTextFiles,
    SinkSupplier,
)
from sparkjet.coredag.runtime.crossing import Crossing, OutputBatch, namedBatches, pickledPacket
from sparkjet.coredag.runtime.output_directory import HadoopOutputDirectory, LocalOutputDirectory
from sparkjet.coredag.runtime.tasklet import TaskletSpec, runPartitionBatches
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError, restoreError, summarizeFailure
from sparkjet.coredag.runtime.worker_failure import CrashedTask

OutputDirectory = LocalOutputDirectory | HadoopOutputDirectory
"""A job's claim on a new output directory, local or of a Hadoop file system."""

StageInfo = SparkStageInfo
"""What Spark's status tracker says of a stage: its id, its tasks, how many are done, failed."""


def runningStages(jobGroup: str) -> tuple[list[int], list[StageInfo]]:
    """Return the ids of the Spark stages the sparkjet job of Spark job group ``jobGroup`` has
    so far and the infos of those running; nothing when no SparkContext is active (or it stops
    meanwhile)."""
    # PySpark's own SparkSession.getActiveSession reads the same class attribute; a context still
    # starting has no _jsc yet, one stopped has None.
    javaContext = getattr(SparkContext._active_spark_context, "_jsc", None)
    if javaContext is None:
        return [], []
    tracker = StatusTracker(javaContext.statusTracker())
    try:
        stageIds = sorted(_stageIdsOf(tracker, jobGroup))
        active = set(tracker.getActiveStageIds()).intersection(stageIds)
        return stageIds, [info for info in map(tracker.getStageInfo, active) if info is not None]
    except Py4JError:
        return [], []


@attrs.frozen
class JobOutcome:
    """What a finished job hands back to its driver: the items of its list sinks, the
    DataFrames of its DataFrame sinks and the figures of what it did."""

    lists: dict[str, list]
    dataFrames: dict[str, DataFrame]
    metrics: JobMetrics


def executeDag(
    spark: SparkSession, dag: DAG, jobName: str, control: "JobControl | None" = None
) -> JobOutcome:
    """Run a validated, preflighted ``dag``; return its list sinks' items and its DataFrames.

    ``control`` cancels the run when asked; a task failed by the job's own error (a user
    function's, say) fails the run at once, without its retries. A failure or a cancellation
    leaves no output: part files already written by this job are removed.
    """
    control = control or JobControl(jobName)
    sc = spark.sparkContext
    default = 1 if _isSmallJob(dag) else sc.defaultParallelism
    parallelism = {v.name: v.determineLocalParallelism(default) for v in dag}
    _checkIsolatedEdges(dag, parallelism)
    parallelism = _listSinksBesideTheirUpstream(dag, parallelism)
    suppliers = {v.name: v.processorSupplier for v in dag}
    counts = sc.accumulator(Counter(), CountsAccumulatorParam())
    builder = _RddBuilder(spark, dag, parallelism, suppliers, jobName, counts)
    outputs = _outputDirectories(sc, suppliers)
    started = time.perf_counter()
    if control.cancelled:
        raise control.cancellation()
    sc.setJobGroup(control.group, f"sparkjet job '{jobName}'", interruptOnCancel=False)
    try:
        with control.watching(sc):
            lists, dataFrames = _runTerminalVertices(builder, suppliers, outputs)
        for output in outputs.values():
            output.commit()
    except Exception as error:
        _abortOutputs(sc, control, outputs)
        failure = control.failureOf(error, builder)
        raise failure from failure.__cause__
    finally:
        builder.unpersist()
    seconds = time.perf_counter() - started
    metrics = JobMetrics.of(jobName, seconds, dag, counts.value, builder.shuffledEdges)
    return JobOutcome(lists, dataFrames, metrics)


def _outputDirectories(sc: SparkContext, suppliers: dict) -> dict[str, OutputDirectory]:
    """Return, per files sink, the directory its job will claim, write and commit."""
    outputs = {}
    for name, supplier in suppliers.items():
        output = supplier.terminalOutput if isinstance(supplier, SinkSupplier) else None
        if isinstance(output, SaveAsTextFiles):
            outputs[name] = (
                LocalOutputDirectory(output.directory, output.origin)
                if localPathOf(output.directory) is not None
                else HadoopOutputDirectory(output.directory, output.origin, sc)
            )
    return outputs


def _abortOutputs(sc: SparkContext, control: "JobControl", outputs: dict[str, OutputDirectory]) -> None:
    """Remove what a failed job wrote, once its last tasks ended (one still running could
    write again), and nothing else."""
    if outputs:
        control.awaitTasksEnded(sc)
    for output in outputs.values():
        output.abort()


POLL_SECONDS = 0.1
"""How often a failed job looks whether its last tasks ended."""

WATCH_PAUSES = (0.1, 0.2, 0.4, 0.8, 1.0)
"""The pauses between the driver's looks at a running job's Spark jobs, for a task failed
with the job's own error; the last repeats. Each look is a few calls into the JVM, which
competes with the Python workers for the CPUs, so a long job is looked at once a second."""

ENDING_SECONDS = 10.0
"""How long a failed job waits for its last tasks to end before it removes their output."""


class JobControl:
    """The driver's hold on a running job: ``cancel()`` stops its Spark jobs, and so does a
    task failed by the job's own error (a user function's, say), which no retry can mend."""

    def __init__(self, jobName: str) -> None:
        self.jobName = jobName
        self.group = f"sparkjet-{jobName}-{uuid.uuid4().hex[:12]}"
        """The Spark job group of this job's Spark jobs: its own, whatever other jobs are named."""
        self.cancelled = False
        self.failure: Exception | None = None
        self._woken = threading.Event()

    def cancel(self) -> None:
        """Ask the job to stop: the watcher cancels its Spark jobs at once."""
        self.cancelled = True
        self._woken.set()

    @contextlib.contextmanager
    def watching(self, sc: SparkContext) -> Iterator[None]:
        """Look at the job's Spark jobs after each of ``WATCH_PAUSES``, and when ``cancel()``
        is called, while the block runs them."""
        stopped = threading.Event()
        watcher = threading.Thread(
            target=self._watch, args=(sc, stopped), name=f"sparkjet-watch-{self.jobName}", daemon=True
        )
        watcher.start()
        try:
            yield
        finally:
            stopped.set()
            self._woken.set()
            watcher.join()

    def awaitTasksEnded(self, sc: SparkContext) -> None:
        """Wait, ``ENDING_SECONDS`` at most, until no task of the job runs: a task being
        cancelled could otherwise write output after the job removed it."""
        deadline = time.monotonic() + ENDING_SECONDS
        tracker = sc.statusTracker()
        stages = _stageIdsOf(tracker, self.group)
        while any(info.numActiveTasks for info in map(tracker.getStageInfo, stages) if info is not None):
            if time.monotonic() > deadline:
                return
            time.sleep(POLL_SECONDS)

    def cancellation(self) -> concurrent.futures.CancelledError:
        """Return what ``join()`` raises for the cancelled job, as Jet's raises a
        CancellationException."""
        return concurrent.futures.CancelledError(f"Job '{self.jobName}' was cancelled")

    def failureOf(self, error: Exception, builder: "_RddBuilder | None" = None) -> Exception:
        """Return what the job's ``error`` means to its user: a cancellation, the job error a
        task failed with, or ``error`` made readable."""
        if self.cancelled:
            return self.cancellation()
        return _driverError(error, self.jobName, builder) if self.failure is None else self.failure

    def _watch(self, sc: SparkContext, stopped: threading.Event) -> None:
        tracker = sc.statusTracker()
        pauses = itertools.chain(WATCH_PAUSES, itertools.repeat(WATCH_PAUSES[-1]))
        stopping = False
        while True:
            self._woken.wait(POLL_SECONDS if stopping else next(pauses))
            self._woken.clear()
            if stopped.is_set():
                return
            if self.failure is None:
                self.failure = _jobErrorOfFailedTask(sc, tracker, self.group)
            stopping = self.cancelled or self.failure is not None
            if stopping and _runsSparkJobs(tracker, self.group):
                sc.cancelJobGroup(self.group)


def _runsSparkJobs(tracker: StatusTracker, jobGroup: str) -> bool:
    """Whether a Spark job of ``jobGroup`` runs (cancelling an idle group logs a warning)."""
    return not set(tracker.getJobIdsForGroup(jobGroup)).isdisjoint(tracker.getActiveJobsIds())


def _stageIdsOf(tracker: StatusTracker, jobGroup: str) -> set[int]:
    """Return the stages of the Spark jobs of ``jobGroup`` the status tracker knows."""
    jobs = [tracker.getJobInfo(sparkJob) for sparkJob in tracker.getJobIdsForGroup(jobGroup)]
    return {stageId for job in jobs if job is not None for stageId in job.stageIds}


def _jobErrorOfFailedTask(sc: SparkContext, tracker: StatusTracker, jobGroup: str) -> Exception | None:
    """Return the job error a worker raised in a failed task of ``jobGroup``'s running stages,
    if any; a task that failed otherwise (its Python worker died, say) is left to its retries."""
    active = set(tracker.getActiveStageIds())
    running = active & _stageIdsOf(tracker, jobGroup) if active else set()
    failing = [info for info in map(tracker.getStageInfo, running) if info and info.numFailedTasks]
    errors = (restoreError(message) for stage in failing for message in _failedTaskMessages(sc, stage))
    return next((error for error in errors if error is not None), None)


def _failedTaskMessages(sc: SparkContext, stage: SparkStageInfo) -> list[str]:
    """Return the error messages of the failed tasks of ``stage``'s current attempt, from the
    status store of Spark's own UI (PySpark's status tracker only counts them)."""
    v1 = sc._jvm.org.apache.spark.status.api.v1
    tasks = sc._jsc.sc().statusStore().taskList(
        stage.stageId, stage.currentAttemptId, 0, stage.numFailedTasks,
        v1.TaskSorting.ID, [v1.TaskStatus.FAILED],
    )
    messages = (tasks.apply(index).errorMessage() for index in range(tasks.size()))
    return [message.get() for message in messages if message.isDefined()]


SMALL_JOB_BYTES = 4 << 20
"""A job whose sources all read less than this runs its default-parallelism vertices as
one processor each: one Spark task, no shuffle, instead of a fixed cost per task and stage."""


def _isSmallJob(dag: DAG) -> bool:
    sizes = [
        v.processorSupplier.inputBytes() if isinstance(v.processorSupplier, StandardProcessorSupplier) else None
        for v in dag.vertices()
        if not dag.getInboundEdges(v.name)
    ]
    return None not in sizes and sum(sizes) < SMALL_JOB_BYTES


def _checkIsolatedEdges(dag: DAG, parallelism: dict[str, int]) -> None:
    for edge in dag.edges():
        upstream, downstream = parallelism[edge.sourceName], parallelism[edge.destName]
        if edge.routing is RoutingPolicy.ISOLATED and downstream < upstream:
            raise DagError(
                f"The edge {edge!r} specifies the ISOLATED routing policy, but the downstream "
                f"vertex parallelism ({downstream}) is less than the upstream vertex "
                f"parallelism ({upstream})"
            )


def _listSinksBesideTheirUpstream(dag: DAG, parallelism: dict[str, int]) -> dict[str, int]:
    """Return ``parallelism`` with each list sink fed by one local unicast or isolated edge
    running at its upstream's parallelism. Its items go to the driver in partition order either
    way, so this gives the same list, and the upstream's processors keep their own tasks
    instead of being coalesced into the sink's one."""
    beside = {}
    for vertex in dag:
        inbound = dag.getInboundEdges(vertex.name)
        if (
            isinstance(vertex.processorSupplier, ListSinkP)
            and len(inbound) == 1
            and not inbound[0].isDistributed
            and inbound[0].routing in (RoutingPolicy.UNICAST, RoutingPolicy.ISOLATED)
        ):
            beside[vertex.name] = parallelism[inbound[0].sourceName]
    return {**parallelism, **beside}


def _runTerminalVertices(
    builder: "_RddBuilder", suppliers: dict, outputs: dict[str, OutputDirectory]
) -> tuple[dict[str, list], dict[str, DataFrame]]:
    lists: dict[str, list] = {}
    dataFrames: dict[str, DataFrame] = {}
    for vertex in builder.dag:
        rdd = builder.vertexRdd(vertex.name)  # topological order: no deep recursion
        if builder.dag.getOutboundEdges(vertex.name):
            continue
        output = suppliers[vertex.name].terminalOutput if isinstance(suppliers[vertex.name], SinkSupplier) else None
        if isinstance(output, CollectToList):
            batches = rdd.collect()
            lists.setdefault(output.listName, []).extend(itertools.chain.from_iterable(batches))
        elif isinstance(output, SaveAsTextFiles):
            _saveAsTextFiles(rdd, outputs[vertex.name])
        elif isinstance(output, CreateDataFrame):
            if output.name in dataFrames:
                raise DagError(f"Two sinks of one job write the DataFrame '{output.name}'; name them apart")
            dataFrames[output.name] = _materializedDataFrame(builder.spark, rdd, output)
        else:
            rdd.count()
    return lists, dataFrames


def _saveAsTextFiles(batches: RDD, output: OutputDirectory) -> None:
    """Claim the new directory, then have Spark write the lines into its staging directory; a
    failure of the write itself (one naming where it writes) names the directory and the cause."""
    output.claim()
    try:
        batches.mapPartitions(itertools.chain.from_iterable).saveAsTextFile(output.sparkPath)
    except Exception as error:
        if isinstance(error, TRANSPORTED) or restoreError(str(error)) is not None:
            raise
        if urllib.parse.urlsplit(output.sparkPath).path not in str(error):
            raise
        raise OutputError(
            f"{output.origin}: writing the output directory '{output.directory}' failed: "
            f"{summarizeFailure(str(error))}"
        ) from error


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
        fix = "match the items and the schema" if output.schema is not None else (
            "make each item a dict, tuple or Row, or pass a schema"
        )
        raise JobError(
            f"Sinks.dataframe('{output.name}'): Spark cannot make a DataFrame of the items "
            f"({summarizeFailure(str(error))}); {fix}"
        ) from error
    finally:
        if output.schema is None:
            items.unpersist()


def _driverError(error: Exception, jobName: str, builder: "_RddBuilder | None" = None) -> Exception:
    if isinstance(error, TRANSPORTED):
        return error
    restored = restoreError(str(error)) or _workerCrashError(str(error), jobName, builder)
    if restored is not None:
        return restored
    return JobError(f"Job '{jobName}' failed: {summarizeFailure(str(error))}")


MAX_CHAIN_LENGTH = 50
"""How many vertices of a chain of narrow edges run as one nested Python function: PySpark
pickles it recursively, and a chain of about 150 is too deep to pickle."""


class _RddBuilder:
    """Builds, once per vertex, the RDD of the vertex's output partitions."""

    def __init__(
        self, spark: SparkSession, dag: DAG, parallelism: dict, suppliers: dict, jobName: str, counts
    ):
        self.spark, self.sc = spark, spark.sparkContext
        self.dag, self.parallelism = dag, parallelism
        self.suppliers, self.jobName = suppliers, jobName
        self.counts = counts
        self.shuffledEdges: set[tuple[str, str]] = set()
        self._rdds: dict[str, RDD] = {}
        self._persisted: list[RDD] = []
        self._chainLengths: dict[str, int] = {}

    def vertexRdd(self, name: str) -> RDD:
        """Return the RDD whose partition i is the output of processor i of vertex ``name``."""
        if name not in self._rdds:
            self._rdds[name] = self._buildVertexRdd(name)
        return self._rdds[name]

    def unpersist(self) -> None:
        """Drop the cached outputs of vertices with several outbound edges."""
        for rdd in self._persisted:
            rdd.unpersist()

    def _buildVertexRdd(self, name: str) -> RDD:
        count = self.parallelism[name]
        inbound = sorted(self.dag.getInboundEdges(name), key=lambda e: (e.priorityNumber, e.destOrdinal))
        outbound = self.dag.getOutboundEdges(name)
        supplier = self.suppliers[name]
        sparkSource = not inbound and _readsThroughSpark(supplier)
        terminal = isinstance(supplier, SinkSupplier) and supplier.terminalOutput is not None
        config = (inbound or outbound or [Edge(name)])[0].config
        spec = TaskletSpec(
            vertexName=self.dag.getVertex(name).stageName,
            processorSupplier=supplier.sparkRowsSupplier() if sparkSource else supplier,
            totalParallelism=count,
            inboundOrdinals=(0,) if sparkSource else tuple(e.destOrdinal for e in inbound),
            bucketCount=1 if terminal or self._emitsTheSameToAllEdges(name) else len(outbound),
            queueSize=config.queueSize,
            outboxCapacity=config.outboxCapacity,
            jobName=self.jobName,
            inboundPriorities=tuple(e.priorityNumber for e in inbound),
            inboundOrdering=inbound[0].ordering if len(inbound) == 1 else None,
        )
        if sparkSource:
            parent, packed = self._sparkInput(supplier, count), False
        elif not inbound:
            parent, packed = self.sc.parallelize([], count), False
        elif len(inbound) == 1 and self._isNarrow(inbound[0]):
            parent, packed = self._chainedInput(name, inbound[0]), False
        else:
            parent, packed = self._shuffledInputs(inbound), True
        rdd = parent.mapPartitionsWithIndex(
            functools.partial(_runVertex, spec, _crossingOf(self, name), packed, bool(inbound), self.counts)
        )
        if len(outbound) > 1:
            rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            self._persisted.append(rdd)
        return rdd

    def _sparkInput(self, supplier: StandardProcessorSupplier, count: int) -> RDD:
        """Return the rows of a Spark source's input, in batches, in exactly ``count``
        partitions: more are coalesced, fewer padded with empty ones (both narrow)."""
        rows = supplier.sparkInput(self.spark).rdd
        partitions = rows.getNumPartitions()
        if partitions > count:
            rows = rows.coalesce(count)
        elif partitions < count:
            rows = self.sc.union([rows, self.sc.parallelize([], count - partitions)])
        return rows.mapPartitions(batched)

    def _isNarrow(self, edge: Edge) -> bool:
        """Whether the edge can keep items in their Spark task: local, and the routing allows."""
        upstream, downstream = self.parallelism[edge.sourceName], self.parallelism[edge.destName]
        if upstream == downstream == 1:
            return True
        if edge.isDistributed:
            return False
        if downstream == 1:
            return True
        if edge.routing in (RoutingPolicy.UNICAST, RoutingPolicy.ISOLATED):
            return downstream == upstream or (
                downstream < upstream and edge.routing is RoutingPolicy.UNICAST
            )
        supplier = self.suppliers[edge.destName]
        return downstream == upstream and isinstance(supplier, StandardProcessorSupplier) and (
            supplier.acceptsAnyRouting
        )

    def _emitsTheSameToAllEdges(self, name: str) -> bool:
        """A standard processor offers every item to all its outbound edges, so one output
        serves them all (cached when there are several) and it keeps its fast path."""
        return isinstance(self.suppliers[name], StandardProcessorSupplier)

    def _edgeItems(self, edge: Edge) -> RDD:
        rdd = self.vertexRdd(edge.sourceName)
        shared = self._emitsTheSameToAllEdges(edge.sourceName)
        if len(self.dag.getOutboundEdges(edge.sourceName)) > 1 and not shared:
            return rdd.mapPartitions(functools.partial(_selectOrdinal, edge.sourceOrdinal))
        return rdd

    def _chainedInput(self, name: str, edge: Edge) -> RDD:
        """Return the narrow input of vertex ``name``; PySpark nests the Python functions of a
        chain of narrow vertices into one, so every ``MAX_CHAIN_LENGTH`` vertices the chain is
        cut (a JVM union of the one RDD: partition i stays partition i)."""
        length = self._chainLengths.get(edge.sourceName, 1) + 1
        items = self._narrowInput(edge)
        if length > MAX_CHAIN_LENGTH:
            length, items = 1, self.sc.union([items])
        self._chainLengths[name] = length
        return items

    def _narrowInput(self, edge: Edge) -> RDD:
        items = self._edgeItems(edge)
        downstream = self.parallelism[edge.destName]
        if self.parallelism[edge.sourceName] == downstream:
            return items
        return items.coalesce(downstream)

    def _shuffledInputs(self, inbound: list[Edge]) -> RDD:
        """One shuffle per priority group, so equal priorities interleave; groups in order."""
        tagged = len(inbound) > 1
        groups = itertools.groupby(inbound, key=lambda e: e.priorityNumber)
        shuffles = [
            self._union([self._routed(edge, tagged) for edge in edges]).partitionBy(
                self.parallelism[inbound[0].destName], _targetPartition
            )
            for _, edges in groups
        ]
        return self._union(shuffles)

    def _union(self, rdds: list[RDD]) -> RDD:
        """Return the union of ``rdds``; one RDD stays itself, so its Python functions keep
        running in the same Python worker as the next ones (a union is a JVM RDD)."""
        return rdds[0] if len(rdds) == 1 else self.sc.union(rdds)

    def _routed(self, edge: Edge, tagged: bool) -> RDD:
        downstream = self.parallelism[edge.destName]
        route = Route.of(
            edge, self.parallelism[edge.sourceName], downstream, self._isNarrow(edge),
            self.dag.getVertex(edge.destName),
        )
        self.shuffledEdges.add((edge.sourceName, edge.destName))
        return self._edgeItems(edge).mapPartitionsWithIndex(
            functools.partial(
                _routeItems, route, edge.destOrdinal if tagged else None,
                edge.config.packetSizeLimit, self.counts,
            )
        )


def _readsThroughSpark(supplier) -> bool:
    return isinstance(supplier, StandardProcessorSupplier) and supplier.readsThroughSpark


def _targetPartition(target: int) -> int:
    return target


def _selectOrdinal(ordinal: int, batches: Iterator[list]) -> Iterator[list]:
    for batch in batches:
        selected = [item for itemOrdinal, item in batch if itemOrdinal == ordinal]
        if selected:
            yield selected


def _runVertex(
    spec: TaskletSpec, crossing: Crossing, packed: bool, countsInput: bool, counts, index: int, partition: Iterator
) -> Iterator[list]:
    """Run processor ``index`` of the vertex over its partition; its output batches name the
    stage that emitted them where an item cannot be pickled (see ``namedBatches``)."""
    metrics = TaskMetrics()
    batches = (pickle.loads(packet) for _, packet in partition) if packed else partition
    batches = sliced(batches, spec.queueSize)
    if countsInput:
        batches = metrics.countedInput(spec.vertexName, batches)
    try:
        output = metrics.countedOutput(spec.vertexName, runPartitionBatches(spec, index, batches, metrics))
        yield from namedBatches(output, crossing)
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    counts.add(metrics.total())
    _drained(partition)


def _drained(partition: Iterator) -> None:
    """Read the partition to its end, as a source that ignores its (empty) input does not:
    PySpark reuses a Python worker only if the task read its whole input."""
    for _ in partition:
        pass


def sliced(batches: Iterator[list], size: int) -> Iterator[list]:
    """Cut batches longer than ``size``: the queue between two processors holds at most that."""
    for batch in batches:
        if len(batch) <= size:
            yield batch
        else:
            yield from (batch[start : start + size] for start in range(0, len(batch), size))


@attrs.frozen
class Route:
    """How one edge spreads an upstream processor's items over the downstream partitions."""

    routing: RoutingPolicy
    keyFn: object
    partitioner: object
    upstreamCount: int
    downstreamCount: int
    fixedTarget: int
    narrow: bool
    sourceName: str
    destName: str
    keyOwner: str
    """Whom an error of the key function or of partitioning names: the destination's stage
    (a ``StageName``, with where it was defined), or the edge of a Core DAG built by hand."""

    @property
    def edgeName(self) -> str:
        """Return the edge's name in messages: ``source -> destination``."""
        return f"{self.sourceName} -> {self.destName}"

    @classmethod
    def of(
        cls, edge: Edge, upstreamCount: int, downstreamCount: int, narrow: bool, destination: Vertex
    ) -> "Route":
        """Return the route of ``edge`` into ``destination``; an all-to-one target is drawn
        here, once per job."""
        if edge.allToOneKey is None:
            fixedTarget = random.randrange(downstreamCount)
        else:
            fixedTarget = DefaultPartitioner().getPartition(edge.allToOneKey, downstreamCount)
        return cls(
            edge.routing, edge.keyFn, edge.partitioner, upstreamCount, downstreamCount,
            fixedTarget, narrow, edge.sourceName, edge.destName,
            destination.stageName if destination.definedAt else f"key of edge {edge.sourceName} -> {edge.destName}",
        )

    def targets(self, index: int, items: Iterator) -> Iterator[tuple[int, object]]:
        """Yield ``(target partition, item)`` for the items of upstream processor ``index``."""
        count = self.downstreamCount
        if self.narrow:
            target = index * count // self.upstreamCount
            return ((target, item) for item in items)
        if self.routing is RoutingPolicy.PARTITIONED:
            return self._partitioned(items)
        if self.routing is RoutingPolicy.BROADCAST:
            return ((target, item) for item in items for target in range(count))
        if self.routing is RoutingPolicy.ALL_TO_ONE:
            return ((self.fixedTarget, item) for item in items)
        if self.routing is RoutingPolicy.ISOLATED:
            return zip(itertools.cycle(range(index, count, self.upstreamCount)), items)
        start = index % count
        return zip(itertools.cycle([*range(start, count), *range(start)]), items)

    def _partitioned(self, items: Iterator) -> Iterator[tuple[int, object]]:
        keyFn, getPartition, count = self.keyFn, self.partitioner.getPartition, self.downstreamCount
        for item in items:
            try:
                key = keyFn(item)
                partition = getPartition(key, count)
            except Exception as cause:
                raise UserFunctionError(self.keyOwner, shorten(item), cause) from cause
            if not 0 <= partition < count:
                raise DagError(
                    f"Edge {self.edgeName}: {type(self.partitioner).__name__}.getPartition("
                    f"{shorten(key)}, {count}) returned {partition!r}, expected 0 to {count - 1}"
                )
            yield partition, item


def _routeItems(
    route: Route, ordinal: int | None, packetSizeLimit: int, counts, index: int, batches: Iterator
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(target, pickled packet)`` for the items of upstream processor ``index``; the
    packets are pickled here, so the bytes through the shuffle are counted exactly; an item
    that cannot be pickled fails naming the stage that emitted it."""
    metrics = TaskMetrics()
    batches, crossing = _crossingOfRoute(route, ordinal, batches)
    pairs = route.targets(index, itertools.chain.from_iterable(batches))
    if ordinal is not None:
        pairs = ((target, (ordinal, item)) for target, item in pairs)
    pickled = functools.partial(pickledPacket, crossing=crossing)
    try:
        for target, packet in packets(pairs, route.downstreamCount, packetSizeLimit, pickled):
            data = pickled(packet)
            metrics.countShuffled(route.sourceName, route.destName, len(packet), len(data))
            yield target, data
    except TRANSPORTED as error:
        raise TransportedError(error) from None
    counts.add(metrics.total())


def packets(
    pairs: Iterator, targetCount: int, packetSizeLimit: int, dumps: Callable[[list], bytes]
) -> Iterator[tuple[int, list]]:
    """Group ``(target, item)`` pairs into ``(target, [items])`` of about ``packetSizeLimit``
    pickled bytes; the items per packet are set from the size of the first packet ``dumps``
    pickles (which names what it cannot pickle)."""
    buckets: list[list] = [[] for _ in range(targetCount)]
    perPacket, measured = FIRST_PACKET_ITEMS, False
    for target, item in pairs:
        bucket = buckets[target]
        bucket.append(item)
        if len(bucket) < perPacket:
            continue
        if not measured:
            measured = True
            perPacket = max(1, perPacket * packetSizeLimit // max(1, len(dumps(bucket))))
            if len(bucket) < perPacket:
                continue
        yield target, bucket
        buckets[target] = []
    for target, bucket in enumerate(buckets):
        if bucket:
            yield target, bucket


FIRST_PACKET_ITEMS = 64


def _crossingOf(builder: _RddBuilder, name: str) -> Crossing:
    """Return where vertex ``name``'s output batches go: a sink's items are named after the
    stage that feeds it, a list sink's go to the driver."""
    dag, supplier = builder.dag, builder.suppliers[name]
    inbound = dag.getInboundEdges(name)
    sink = isinstance(supplier, SinkSupplier) and len(inbound) == 1
    producer = dag.getVertex(inbound[0].sourceName if sink else name).stageName
    pickled = _pickledBySpark(builder, name)
    output = supplier.terminalOutput if isinstance(supplier, SinkSupplier) else None
    if isinstance(output, CollectToList):
        return Crossing(producer, f"the driver's list '{output.listName}'", pickled)
    destinations = [edge.destName for edge in dag.getOutboundEdges(name)]
    return Crossing(producer, describeStages(destinations) if destinations else "its sink", pickled)


def _pickledBySpark(builder: _RddBuilder, name: str) -> bool:
    """Whether PySpark pickles vertex ``name``'s output batches: a list sink's are collected, a
    vertex's with several outbound edges cached, and a narrow edge's pass through the JVM where
    it is coalesced or cuts a long chain (see ``_chainedInput``); a shuffle pickles its items."""
    outbound = builder.dag.getOutboundEdges(name)
    if not outbound:
        return isinstance(getattr(builder.suppliers[name], "terminalOutput", None), CollectToList)
    if len(outbound) > 1:
        return True
    edge = outbound[0]
    if len(builder.dag.getInboundEdges(edge.destName)) > 1 or not builder._isNarrow(edge):
        return False
    coalesced = builder.parallelism[name] != builder.parallelism[edge.destName]
    return coalesced or builder._chainLengths.get(name, 1) + 1 > MAX_CHAIN_LENGTH


def _crossingOfRoute(route: Route, ordinal: int | None, batches: Iterator) -> tuple[Iterator, Crossing]:
    """Return the batches and where the edge of ``route`` sends their items: the stage that
    emitted them is named as its ``OutputBatch``es name it (with where it was defined)."""
    batches = iter(batches)
    first = next(batches, None)
    producer = first.crossing.producer if isinstance(first, OutputBatch) else route.sourceName
    crossing = Crossing(producer, f"Stage '{route.destName}'", tagged=ordinal is not None)
    return (batches if first is None else itertools.chain([first], batches)), crossing


def _workerCrashError(text: str, jobName: str, builder: "_RddBuilder | None") -> JobError | None:
    """Return the error of a job whose task's Python worker died in every attempt, naming the
    vertices that the Spark stage of that task ran, if ``text`` (Spark's failure) says so."""
    crashed = CrashedTask.parse(text)
    if crashed is None:
        return None
    return crashed.error(jobName, [] if builder is None else _verticesOfSparkStage(crashed.stage, builder))


def _verticesOfSparkStage(stageId: int, builder: _RddBuilder) -> list:
    """Return the stage names of the vertices of ``builder``'s job that Spark stage ``stageId``
    runs: those whose chain of Python functions starts at an RDD of the stage (PySpark's
    ``_prev_jrdd``)."""
    try:
        stage = builder.sc._jsc.sc().statusStore().lastStageAttempt(stageId)
        rddIds = {int(rddId) for rddId in stage.rddIds().mkString(",").split(",") if rddId}
        built = [(vertex, builder._rdds.get(vertex.name)) for vertex in builder.dag]
        return [vertex.stageName for vertex, rdd in built if rdd is not None and _chainRoot(rdd) in rddIds]
    except Py4JError:
        return []


def _chainRoot(rdd: RDD) -> int:
    """Return the id of the JVM RDD whose items the Python functions of ``rdd`` (pipelined into
    one by PySpark) read."""
    return (rdd._prev_jrdd if hasattr(rdd, "_prev_jrdd") else rdd._jrdd).id()
