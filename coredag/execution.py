"""Running a Core DAG on PySpark: vertices become partitions, edges narrow links or shuffles.

This is the only module that imports pyspark.
"""

import functools
import itertools
import os
import random
import shutil
import sys
from collections.abc import Iterator

import attrs
from pyspark import RDD, SparkContext, StorageLevel
from pyspark.sql import SparkSession

from coredag.dag import DAG
from coredag.edge import Edge, RoutingPolicy
from coredag.errors import DagError, JobError, UserFunctionError, shorten
from coredag.partitioner import DefaultPartitioner
from coredag.sinks import CollectToList, SaveAsTextFiles, SinkSupplier
from coredag.tasklet import TaskletSpec, runPartition
from coredag.transport import TRANSPORTED, TransportedError, restoreError, summarizeFailure


_LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")


def embeddedSession(master: str = "local[*]", appName: str = "sparkjet") -> SparkSession:
    """Return the active SparkSession, or start one whose Python workers run this
    interpreter with this ``sys.path`` (so they import what the driver imports)."""
    active = activeSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths += [p for p in sys.path if p and os.path.isdir(p) and p not in paths]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    session = (
        SparkSession.builder.master(master)
        .appName(appName)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_LOG4J2}")
        .getOrCreate()
    )
    return session


def activeSession() -> SparkSession | None:
    """Return the SparkSession active in this process, if any."""
    return SparkSession.getActiveSession()


@attrs.frozen
class JobOutcome:
    """What a finished job hands back to its driver: the items of its list sinks."""

    lists: dict[str, list]


def executeDag(spark: SparkSession, dag: DAG, jobName: str) -> JobOutcome:
    """Run a validated, preflighted ``dag``; return its list sinks' items.

    A failure leaves no output: part files already written by this job are removed.
    """
    sc = spark.sparkContext
    parallelism = {v.name: v.determineLocalParallelism(sc.defaultParallelism) for v in dag}
    _checkIsolatedEdges(dag, parallelism)
    suppliers = {v.name: v.processorSupplier for v in dag}
    builder = _RddBuilder(sc, dag, parallelism, suppliers, jobName)
    written: list[str] = []
    try:
        lists = _runTerminalVertices(builder, suppliers, written)
    except Exception as error:
        for directory in written:
            shutil.rmtree(directory, ignore_errors=True)
        raise _driverError(error, jobName) from _causeOf(error)
    finally:
        builder.unpersist()
    return JobOutcome(lists)


def _checkIsolatedEdges(dag: DAG, parallelism: dict[str, int]) -> None:
    for edge in dag.edges():
        upstream, downstream = parallelism[edge.sourceName], parallelism[edge.destName]
        if edge.routing is RoutingPolicy.ISOLATED and downstream < upstream:
            raise DagError(
                f"The edge {edge!r} specifies the ISOLATED routing policy, but the downstream "
                f"vertex parallelism ({downstream}) is less than the upstream vertex "
                f"parallelism ({upstream})"
            )


def _runTerminalVertices(builder: "_RddBuilder", suppliers: dict, written: list[str]) -> dict:
    lists: dict[str, list] = {}
    for vertex in builder.dag:
        if builder.dag.getOutboundEdges(vertex.name):
            continue
        rdd = builder.vertexRdd(vertex.name)
        output = suppliers[vertex.name].terminalOutput if isinstance(suppliers[vertex.name], SinkSupplier) else None
        if isinstance(output, CollectToList):
            lists.setdefault(output.listName, []).extend(rdd.collect())
        elif isinstance(output, SaveAsTextFiles):
            directory = os.path.abspath(output.directory)
            written.append(directory)
            rdd.saveAsTextFile(directory)
        else:
            rdd.count()
    return lists


def _causeOf(error: Exception):
    restored = restoreError(str(error))
    return restored.__cause__ if isinstance(restored, UserFunctionError) else None


def _driverError(error: Exception, jobName: str) -> Exception:
    if isinstance(error, TRANSPORTED):
        return error
    restored = restoreError(str(error))
    if restored is not None:
        return restored
    return JobError(f"Job '{jobName}' failed: {summarizeFailure(str(error))}")


class _RddBuilder:
    """Builds, once per vertex, the RDD of the vertex's output partitions."""

    def __init__(self, sc: SparkContext, dag: DAG, parallelism: dict, suppliers: dict, jobName: str):
        self.sc, self.dag, self.parallelism = sc, dag, parallelism
        self.suppliers, self.jobName = suppliers, jobName
        self._rdds: dict[str, RDD] = {}
        self._persisted: list[RDD] = []

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
        terminal = isinstance(supplier, SinkSupplier) and supplier.terminalOutput is not None
        config = (inbound or outbound or [Edge(name)])[0].config
        spec = TaskletSpec(
            vertexName=name,
            processorSupplier=supplier,
            totalParallelism=count,
            inboundOrdinals=tuple(e.destOrdinal for e in inbound),
            bucketCount=1 if terminal else len(outbound),
            queueSize=config.queueSize,
            outboxCapacity=config.outboxCapacity,
            jobName=self.jobName,
        )
        if not inbound:
            parent, keyed = self.sc.parallelize([], count), False
        elif len(inbound) == 1 and self._isNarrow(inbound[0]):
            parent, keyed = self._narrowInput(inbound[0]), False
        elif len(inbound) == 1:
            parent, keyed = self._shuffledInput(inbound[0], tagged=False), True
        else:
            parent = self.sc.union([self._shuffledInput(e, tagged=True) for e in inbound])
            keyed = True
        rdd = parent.mapPartitionsWithIndex(functools.partial(_runVertex, spec, keyed))
        if len(outbound) > 1:
            rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            self._persisted.append(rdd)
        return rdd

    def _isNarrow(self, edge: Edge) -> bool:
        upstream, downstream = self.parallelism[edge.sourceName], self.parallelism[edge.destName]
        if edge.isDistributed:
            return False
        if upstream == downstream:
            return True
        return downstream < upstream and (downstream == 1 or edge.routing is RoutingPolicy.UNICAST)

    def _edgeItems(self, edge: Edge) -> RDD:
        rdd = self.vertexRdd(edge.sourceName)
        if len(self.dag.getOutboundEdges(edge.sourceName)) > 1:
            return rdd.mapPartitions(functools.partial(_selectOrdinal, edge.sourceOrdinal))
        return rdd

    def _narrowInput(self, edge: Edge) -> RDD:
        items = self._edgeItems(edge)
        downstream = self.parallelism[edge.destName]
        if self.parallelism[edge.sourceName] == downstream:
            return items
        return items.coalesce(downstream)

    def _shuffledInput(self, edge: Edge, tagged: bool) -> RDD:
        downstream = self.parallelism[edge.destName]
        route = Route.of(edge, self.parallelism[edge.sourceName], downstream, self._isNarrow(edge))
        pairs = self._edgeItems(edge).mapPartitionsWithIndex(
            functools.partial(_routeItems, route, edge.destOrdinal if tagged else None)
        )
        return pairs.partitionBy(downstream, _targetPartition)


def _targetPartition(target: int) -> int:
    return target


def _selectOrdinal(ordinal: int, pairs: Iterator) -> Iterator:
    return (item for itemOrdinal, item in pairs if itemOrdinal == ordinal)


def _runVertex(spec: TaskletSpec, keyed: bool, index: int, items: Iterator) -> Iterator:
    if keyed:
        items = (item for _, item in items)
    try:
        yield from runPartition(spec, index, items)
    except TRANSPORTED as error:
        raise TransportedError(error) from None


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
    edgeName: str

    @classmethod
    def of(cls, edge: Edge, upstreamCount: int, downstreamCount: int, narrow: bool) -> "Route":
        """Return the route of ``edge``; an all-to-one target is drawn here, once per job."""
        if edge.allToOneKey is None:
            fixedTarget = random.randrange(downstreamCount)
        else:
            fixedTarget = DefaultPartitioner().getPartition(edge.allToOneKey, downstreamCount)
        return cls(
            edge.routing, edge.keyFn, edge.partitioner, upstreamCount, downstreamCount,
            fixedTarget, narrow, f"{edge.sourceName} -> {edge.destName}",
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
            except Exception as cause:
                raise UserFunctionError(f"key of edge {self.edgeName}", shorten(item), cause) from cause
            yield getPartition(key, count), item


def _routeItems(route: Route, ordinal: int | None, index: int, items: Iterator) -> Iterator:
    pairs = route.targets(index, items)
    if ordinal is not None:
        pairs = ((target, (ordinal, item)) for target, item in pairs)
    try:
        yield from pairs
    except TRANSPORTED as error:
        raise TransportedError(error) from None
