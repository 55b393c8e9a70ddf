"""Building a job's RDDs from its physical plan: each vertex an RDD whose partition i is the
output of processor i, each edge a chained narrow link, a coalesce or a shuffle, as planned.

Nothing is decided here: parallelism, loops and exchanges are the physical plan's."""

import functools
import itertools
import logging

from py4j.protocol import Py4JError
from pyspark import RDD, StorageLevel
from pyspark.rdd import PipelinedRDD
from pyspark.sql import SparkSession

from sparkjet.coredag.api.standard import StandardProcessorSupplier, batched
from sparkjet.coredag.errors import describeStages
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.routing import Route
from sparkjet.coredag.processors.sinks import CollectToList, SinkSupplier
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.classic_tasks import inClassicTask
from sparkjet.coredag.runtime.coalescing import coalescedByJetsRule
from sparkjet.coredag.runtime.crossing import Crossing
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan, terminalOutputOf
from sparkjet.coredag.runtime.shuffling import homePacket, routeItems, targetPartition
from sparkjet.coredag.runtime.tasklet import TaskletSpec
from sparkjet.coredag.runtime.vertex_specs import isStatic, streamStart, vertexTaskletSpec, watermarkCarriers
from sparkjet.coredag.runtime.vertex_tasks import runVertex, selectOrdinal
from sparkjet.coredag.runtime.watermarks import EdgeQueues

MAX_CHAIN_LENGTH = 50
"""How many vertices of a chain of narrow edges run as one nested Python function: PySpark
pickles it recursively, and a chain of about 150 is too deep to pickle."""

logger = logging.getLogger("sparkjet")


class RddBuilder:
    """Builds, once per vertex, the RDD of the vertex's output partitions, as ``plan`` says;
    in a stream job's ``microBatch``, its processors' state goes into ``states``, and what it
    keeps for the next micro-batches into ``caches``."""

    def __init__(
        self, spark: SparkSession, dag: DAG, plan: PhysicalPlan, jobName: str, counts,
        states=None, microBatch: MicroBatch | None = None, caches: StreamCaches | None = None,
    ) -> None:
        self.spark, self.sc = spark, spark.sparkContext
        self.dag, self.plan = dag, plan
        self.jobName, self.counts = jobName, counts
        self.states, self.microBatch, self.caches = states, microBatch, caches
        self._rdds: dict[str, RDD] = {}
        self._persisted: list[RDD] = []
        self._chainLengths: dict[str, int] = {}
        self._coalescedGroups: dict[str, tuple[tuple[int, ...], ...]] = {}
        self._carriers = watermarkCarriers(dag, plan)

    def vertexRdd(self, name: str) -> RDD:
        """Return the RDD whose partition i is the output of processor i of vertex ``name`` (in a
        stream job, of a vertex no stream reaches: the one its first micro-batch cached)."""
        if name not in self._rdds:
            if isStatic(self.microBatch, name):
                self._rdds[name] = self.caches.staticOutputs.get(name, lambda: self._buildVertexRdd(name), RDD.unpersist)
            else:
                self._rdds[name] = self._buildVertexRdd(name)
        return self._rdds[name]

    def unpersist(self) -> None:
        """Drop the cached outputs of vertices with several outbound edges.
        Their release failing (a stream's query stopped meanwhile interrupts Spark's calls) does
        not fail the job, whose work is done: Spark's cleaner drops them once unreferenced."""
        for release in [rdd.unpersist for rdd in self._persisted]:
            try:
                release()
            except Exception as error:
                logger.debug("Could not release a finished job's cached data: %s", error)

    def verticesOfSparkStage(self, stageId: int) -> list:
        """Return the stage names of the vertices that Spark stage ``stageId`` runs: those whose
        chain of Python functions starts at an RDD of the stage (PySpark's ``_prev_jrdd``)."""
        try:
            stage = self.sc._jsc.sc().statusStore().lastStageAttempt(stageId)
            rddIds = {int(rddId) for rddId in stage.rddIds().mkString(",").split(",") if rddId}
            built = [(vertex, self._rdds.get(vertex.name)) for vertex in self.dag]
            return [vertex.stageName for vertex, rdd in built if rdd is not None and _chainRoot(rdd) in rddIds]
        except Py4JError:
            return []

    def _buildVertexRdd(self, name: str) -> RDD:
        supplier, count = self.dag.getVertex(name).processorSupplier, self.plan.vertex(name).parallelism
        inbound = sorted(self.dag.getInboundEdges(name), key=lambda e: (e.priorityNumber, e.destOrdinal))
        sparkSource = not inbound and self.plan.vertex(name).capabilities.readsThroughSpark
        if sparkSource:
            parent, packed = self._sparkInput(supplier, count), False
        elif not inbound:
            parent, packed = self.sc.parallelize([], count), False
        elif self.plan.exchangeOf(inbound[0]) is not Exchange.SHUFFLED:
            parent, packed = self._chainedInput(name, inbound[0]), False
        else:
            parent, packed = self._homed(name, self._shuffledInputs(inbound)), True
        spec = self._taskletSpec(name, inbound, sparkSource)
        stream, crossing = streamStart(self.dag, self.plan, self.microBatch, name, inbound), self._crossingOf(name)
        task = functools.partial(runVertex, spec, stream, crossing, packed, bool(inbound))
        rdd = parent.mapPartitionsWithIndex(functools.partial(inClassicTask, task, name, self.counts, self.states))
        if len(self.dag.getOutboundEdges(name)) > 1 or isStatic(self.microBatch, name):
            rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            if not isStatic(self.microBatch, name):  # a stream job's static outputs live as long as the job
                self._persisted.append(rdd)
        return rdd

    def _taskletSpec(self, name: str, inbound: list[Edge], sparkSource: bool) -> TaskletSpec:
        """Return what a task of vertex ``name`` needs, its inbound edges in the order consumed."""
        return vertexTaskletSpec(
            self.dag, self.plan, self.jobName, name, inbound, sparkSource, self._carriers, self._edgeQueues,
            self.microBatch,
        )

    def _edgeQueues(self, edge: Edge) -> EdgeQueues:
        """Return which upstream processors of ``edge`` send watermarks to each downstream one:
        all where it is shuffled or goes into one processor, else those Spark keeps in the task."""
        upstream, downstream = self.plan.vertex(edge.sourceName).parallelism, self.plan.vertex(edge.destName).parallelism
        exchange = self.plan.exchangeOf(edge)
        if exchange is Exchange.SHUFFLED or downstream == 1:
            return EdgeQueues(edge.destOrdinal, upstream)
        groups = self._coalescedGroups[edge.destName] if exchange is Exchange.COALESCED else None
        return EdgeQueues(edge.destOrdinal, upstream, groups or tuple((index,) for index in range(downstream)))

    def _sparkInput(self, supplier: StandardProcessorSupplier, count: int) -> RDD:
        """Return the rows of a Spark source's input (a stream source's: of this micro-batch),
        in batches, in exactly ``count`` partitions: more are coalesced, fewer padded with
        empty ones (both narrow)."""
        if not supplier.readsStream:
            rows = supplier.sparkInput(self.spark).rdd
        elif self.microBatch is None or self.microBatch.rows is None:
            rows = self.sc.parallelize([], count)
        else:
            rows = supplier.microBatchRows(self.microBatch.rows).rdd
        partitions = rows.getNumPartitions()
        if partitions > count:
            rows = rows.coalesce(count)
        elif partitions < count:
            rows = self.sc.union([rows, self.sc.parallelize([], count - partitions)])
        return rows.mapPartitions(batched)

    def _edgeItems(self, edge: Edge) -> RDD:
        """Return the upstream's output that ``edge`` carries: all of it where one outbox
        bucket serves every outbound edge, else its own bucket's items."""
        rdd = self.vertexRdd(edge.sourceName)
        if self.plan.vertex(edge.sourceName).buckets > 1:
            return rdd.mapPartitions(functools.partial(selectOrdinal, edge.sourceOrdinal))
        return rdd

    def _chainedInput(self, name: str, edge: Edge) -> RDD:
        """Return the narrow input of vertex ``name``; PySpark nests the Python functions of a
        chain of narrow vertices into one, so every ``MAX_CHAIN_LENGTH`` vertices the chain is
        cut (a JVM union of the one RDD: partition i stays partition i)."""
        length = self._chainLengths.get(edge.sourceName, 1) + 1
        items = self._edgeItems(edge)
        if self.plan.exchangeOf(edge) is Exchange.COALESCED:
            items = self._coalesced(items, edge, self.plan.vertex(name).parallelism)
        if length > MAX_CHAIN_LENGTH:
            length, items = 1, self.sc.union([items])
        self._chainLengths[name] = length
        return items

    def _coalesced(self, items: RDD, edge: Edge, count: int) -> RDD:
        """Return ``items`` in ``count`` partitions, narrow: an isolated edge's grouped by Jet's
        rule (upstream i into ``i mod count``; into one, every rule is Spark's), any other's as
        Spark groups neighbours; which upstream partitions each holds is noted for its watermarks."""
        if edge.routing is RoutingPolicy.ISOLATED and count > 1:
            upstream = items.getNumPartitions()
            self._coalescedGroups[edge.destName] = tuple(tuple(range(j, upstream, count)) for j in range(count))
            return coalescedByJetsRule(self.sc, items, count)
        coalesced = items.coalesce(count)
        self._coalescedGroups[edge.destName] = _coalescedGroups(coalesced)
        return coalesced

    def _shuffledInputs(self, inbound: list[Edge]) -> RDD:
        """One shuffle per priority group, so equal priorities interleave; groups in order."""
        tagged = len(inbound) > 1
        groups = itertools.groupby(inbound, key=lambda e: e.priorityNumber)
        count = self.plan.vertex(inbound[0].destName).parallelism
        shuffles = [
            self._union([self._routed(edge, tagged) for edge in edges]).partitionBy(count, targetPartition)
            for _, edges in groups
        ]
        return self._union(shuffles)

    def _homed(self, name: str, shuffled: RDD) -> RDD:
        """Return the shuffled input of vertex ``name``, in a stream job behind its home, so that a
        processor's next task goes back to the host whose worker keeps it alive
        (docs/internals/stream-state.md, "Homes")."""
        if self.microBatch is None or isStatic(self.microBatch, name):
            return shuffled
        count = shuffled.getNumPartitions()
        home = self.caches.homes.get(
            name,
            lambda: self.sc.parallelize(range(count), count).map(homePacket).partitionBy(count, targetPartition)
            .persist(StorageLevel.MEMORY_ONLY),
            RDD.unpersist,
        )
        return self.sc.union([home, home, shuffled])

    def _union(self, rdds: list[RDD]) -> RDD:
        """Return the union of ``rdds``; one RDD stays itself, so its Python functions keep
        running in the same Python worker as the next ones (a union is a JVM RDD)."""
        return rdds[0] if len(rdds) == 1 else self.sc.union(rdds)

    def _routed(self, edge: Edge, tagged: bool) -> RDD:
        route = Route.of(
            edge, self.plan.vertex(edge.sourceName).parallelism, self.plan.vertex(edge.destName).parallelism,
            self.plan.edge(edge).narrow, self.dag.getVertex(edge.destName),
        )
        return self._edgeItems(edge).mapPartitionsWithIndex(
            functools.partial(
                routeItems, route, edge.destOrdinal if tagged else None, edge.config.packetSizeLimit, self.counts
            )
        )

    def _crossingOf(self, name: str) -> Crossing:
        """Return where vertex ``name``'s output batches go: a sink's items are named after the
        stage that feeds it, a list sink's go to the driver."""
        dag, supplier = self.dag, self.dag.getVertex(name).processorSupplier
        output, inbound = terminalOutputOf(supplier), dag.getInboundEdges(name)
        sink = isinstance(supplier, SinkSupplier) and len(inbound) == 1
        producer = dag.getVertex(inbound[0].sourceName if sink else name).stageName
        pickled = self._pickledBySpark(name)
        if isinstance(output, CollectToList):
            return Crossing(producer, f"the driver's list '{output.listName}'", pickled)
        destinations = [edge.destName for edge in dag.getOutboundEdges(name)]
        return Crossing(producer, describeStages(destinations) if destinations else "its sink", pickled)

    def _pickledBySpark(self, name: str) -> bool:
        """Whether PySpark pickles vertex ``name``'s output batches: a list sink's are collected,
        a vertex's with several outbound edges cached, and a narrow edge's pass through the JVM
        where it is coalesced or cuts a long chain (see ``_chainedInput``); a shuffle pickles
        its items."""
        outbound = self.dag.getOutboundEdges(name)
        if not outbound:
            return isinstance(terminalOutputOf(self.dag.getVertex(name).processorSupplier), CollectToList)
        if len(outbound) > 1:
            return True
        exchange = self.plan.exchangeOf(outbound[0])
        if exchange is Exchange.SHUFFLED:
            return False
        return exchange is Exchange.COALESCED or self._chainLengths.get(name, 1) + 1 > MAX_CHAIN_LENGTH


def _coalescedGroups(rdd: RDD) -> tuple[tuple[int, ...], ...]:
    """Return, for each partition of the coalesced ``rdd``, the parent partitions it reads, as
    Spark grouped them (its ``CoalescedRDDPartition.parentsIndices``)."""
    return tuple(tuple(int(index) for index in partition.parentsIndices()) for partition in rdd._jrdd.rdd().partitions())


def _chainRoot(rdd: RDD) -> int:
    """Return the id of the JVM RDD whose items the Python functions of ``rdd`` (pipelined into
    one by PySpark) read."""
    return (rdd._prev_jrdd if isinstance(rdd, PipelinedRDD) else rdd._jrdd).id()
