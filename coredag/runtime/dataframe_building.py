"""Building a job's DataFrames from its physical plan, for a Spark Connect session: the
DataFrame API alone (no SparkContext, no RDDs). Each vertex is a ``Flow``: a DataFrame whose
partition i feeds processor i, and the chain of steps ``mapInArrow`` runs over it. A narrow
edge adds the next vertex to the chain; a shuffled or coalesced one routes the items (Jet's
partitioner and routing, ``model.routing``) into keyed packets and repartitions them by key
(``partition_keys``), one priority group after the other; a vertex with several outbound
edges is cached. In a stream job's micro-batch, each processor starts from where the previous
one left it (``vertex_specs.streamStart``, as in the classic engine), a stream source reads the
micro-batch's rows, and a vertex no stream reaches runs once per run, its output kept in the
run's caches. Nothing is decided here: parallelism, loops and exchanges are the plan's."""

import itertools

import attrs
from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.errors import describeStages
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.routing import Route
from sparkjet.coredag.processors.sinks import CollectToList, SinkSupplier
from sparkjet.coredag.runtime.arrow_batches import SCHEMA
from sparkjet.coredag.runtime.arrow_tasks import (
    ArrowTask,
    PacketsOut,
    RoutedOut,
    SelectStep,
    VertexStep,
    sparkRowsPackets,
)
from sparkjet.coredag.runtime.cache import StreamCaches
from sparkjet.coredag.runtime.crossing import Crossing
from sparkjet.coredag.runtime.micro_batch import MicroBatch
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan, terminalOutputOf
from sparkjet.coredag.runtime.tasklet import TaskletSpec
from sparkjet.coredag.runtime.vertex_specs import isStatic, streamStart, vertexTaskletSpec, watermarkCarriers
from sparkjet.coredag.runtime.watermarks import EdgeQueues


@attrs.frozen
class Flow:
    """A vertex's output still to compute: the ``steps`` that one ``mapInArrow`` task runs over
    a partition of ``base``; ``takesFigures``: the figures rows of ``base`` are passed on
    (not where another outbound edge of a cached vertex passes them)."""

    base: DataFrame
    steps: tuple = ()
    takesFigures: bool = True

    def then(self, step: object) -> "Flow":
        """Return this flow with ``step`` run after its steps, in the same task."""
        return attrs.evolve(self, steps=(*self.steps, step))

    def dataFrame(self, output: object) -> DataFrame:
        """Return the DataFrame of the rows ``output`` makes of the flow's batches."""
        return self.base.mapInArrow(ArrowTask(self.steps, output, self.takesFigures), SCHEMA)


class DataFrameBuilder:
    """Builds, once per vertex, the ``Flow`` of its output partitions, as ``plan`` says; in a
    stream job's ``microBatch``, what it keeps for the next micro-batches goes into ``caches``."""

    def __init__(
        self, spark: SparkSession, dag: DAG, plan: PhysicalPlan, jobName: str,
        microBatch: MicroBatch | None = None, caches: StreamCaches | None = None,
    ) -> None:
        self.spark, self.dag, self.plan, self.jobName = spark, dag, plan, jobName
        self.microBatch, self.caches = microBatch, caches
        self._flows: dict[str, Flow] = {}
        self._cached: dict[str, DataFrame] = {}
        self._countedBefore: set[str] = set()
        """The static vertices whose figures an earlier micro-batch counted."""
        self._carriers = watermarkCarriers(dag, plan)

    def vertexFlow(self, name: str) -> Flow:
        """Return the flow whose partition i is the output of processor i of vertex ``name`` (in a
        stream job, of a vertex no stream reaches: the one its first micro-batch cached)."""
        if name not in self._flows:
            self._flows[name] = self._staticFlow(name) if isStatic(self.microBatch, name) else self._buildFlow(name)
        return self._flows[name]

    def crossingOf(self, name: str) -> Crossing:
        """Return where vertex ``name``'s output batches go, named as the classic engine names it."""
        dag, supplier = self.dag, self.dag.getVertex(name).processorSupplier
        output, inbound = terminalOutputOf(supplier), dag.getInboundEdges(name)
        sink = isinstance(supplier, SinkSupplier) and len(inbound) == 1
        producer = dag.getVertex(inbound[0].sourceName if sink else name).stageName
        if isinstance(output, CollectToList):
            return Crossing(producer, f"the driver's list '{output.listName}'")
        destinations = [edge.destName for edge in dag.getOutboundEdges(name)]
        return Crossing(producer, describeStages(destinations) if destinations else "its sink")

    def release(self) -> None:
        """Let go of the checkpointed outputs of vertices with several outbound edges: the
        Connect client has the server drop a checkpoint once nothing holds its DataFrame."""
        self._cached.clear()

    def _staticFlow(self, name: str) -> Flow:
        """Return the output of vertex ``name``, which no stream reaches: computed by the run's
        first micro-batch and kept in its caches (released by dropping it), its figures that
        micro-batch's alone, as the classic engine's persisted RDD counts them once."""
        built = []

        def build() -> DataFrame:
            built.append(name)
            return self._checkpointed(name, self._buildFlow(name))

        self._cached[name] = self.caches.staticOutputs.get(name, build, _dropped)
        if not built:
            self._countedBefore.add(name)
        return Flow(self._cached[name], takesFigures=bool(built))

    def _checkpointed(self, name: str, flow: Flow) -> DataFrame:
        """Return the output packets of vertex ``name``, computed now by its own tasks (see ``ArrowTask``)."""
        return flow.dataFrame(PacketsOut(self.crossingOf(name))).localCheckpoint(eager=True)

    def _buildFlow(self, name: str) -> Flow:
        count = self.plan.vertex(name).parallelism
        inbound = sorted(self.dag.getInboundEdges(name), key=lambda e: (e.priorityNumber, e.destOrdinal))
        sparkSource = not inbound and self.plan.vertex(name).capabilities.readsThroughSpark
        if sparkSource:
            flow = Flow(self._sparkInput(count, name))
        elif not inbound:
            flow = Flow(self._processorRows(count))
        elif self.plan.exchangeOf(inbound[0]) is Exchange.NARROW:
            flow = self._edgeFlow(inbound[0])
        else:
            flow = Flow(self._shuffled(inbound, count))
        spec = self._taskletSpec(name, inbound, sparkSource)
        stream = streamStart(self.dag, self.plan, self.microBatch, name, inbound)
        flow = flow.then(VertexStep(spec, self.crossingOf(name), bool(inbound), stream))
        if len(self.dag.getOutboundEdges(name)) > 1 and not isStatic(self.microBatch, name):
            self._cached[name] = self._checkpointed(name, flow)
        return flow

    def _edgeFlow(self, edge: Edge) -> Flow:
        """Return the upstream's output that ``edge`` carries: a cached upstream's read again
        (its figures passed on by its first outbound edge alone, and by none where an earlier
        micro-batch counted them), the edge's bucket selected."""
        flow = self.vertexFlow(edge.sourceName)
        if edge.sourceName in self._cached:
            first = self.dag.getOutboundEdges(edge.sourceName)[0]
            counts = edge.sourceOrdinal == first.sourceOrdinal and edge.sourceName not in self._countedBefore
            flow = Flow(self._cached[edge.sourceName], takesFigures=counts)
        if self.plan.vertex(edge.sourceName).buckets > 1:
            flow = flow.then(SelectStep(edge.sourceOrdinal))
        return flow

    def _shuffled(self, inbound: list[Edge], count: int) -> DataFrame:
        """Return the routed items of ``inbound`` in ``count`` partitions, each item in the
        one its route names; priority groups in order where there are several (a coalesced
        edge goes the same way, each upstream processor's items to the one its route names)."""
        tagged = len(inbound) > 1
        groups = [list(edges) for _, edges in itertools.groupby(inbound, key=lambda e: e.priorityNumber)]
        grouped = [(group, edge) for group, edges in enumerate(groups) for edge in edges]
        routed = [self._routed(edge, tagged, group) for group, edge in grouped]
        if len(routed) > 1:  # computed now, each by its own tasks: in a union, a task's partition is the union's
            routed = [rows.localCheckpoint(eager=True) for rows in routed]
        rows = routed[0]
        for more in routed[1:]:
            rows = rows.unionAll(more)
        rows = rows.repartition(count, "key")
        return rows.sortWithinPartitions("rank") if len(groups) > 1 else rows

    def _routed(self, edge: Edge, tagged: bool, group: int) -> DataFrame:
        route = Route.of(
            edge, self.plan.vertex(edge.sourceName).parallelism, self.plan.vertex(edge.destName).parallelism,
            self.plan.edge(edge).narrow, self.dag.getVertex(edge.destName),
        )
        output = RoutedOut(
            route, edge.destOrdinal if tagged else None, edge.config.packetSizeLimit, group,
            self.plan.exchangeOf(edge) is Exchange.SHUFFLED,
        )
        return self._edgeFlow(edge).dataFrame(output)

    def _processorRows(self, count: int) -> DataFrame:
        """Return ``count`` partitions of one row each, which holds no packet: the input of a
        vertex's ``count`` processors where they read none."""
        return self.spark.range(0, count, 1, count).selectExpr(
            "cast(0 as int) as key", "cast(0 as bigint) as rank", "cast(null as binary) as packet",
            "cast(null as binary) as figures",
        )

    def _sparkInput(self, count: int, name: str) -> DataFrame:
        """Return the rows a Spark source reads (a stream source's: of this micro-batch, none
        once the stream ended), in packets of Rows, in exactly ``count`` partitions: fewer are
        padded with empty ones, then all coalesced."""
        supplier = self.dag.getVertex(name).processorSupplier
        if not supplier.readsStream:
            rows = supplier.sparkInput(self.spark)
        elif self.microBatch is None or self.microBatch.rows is None:
            return self._processorRows(count)
        else:
            rows = supplier.microBatchRows(self.microBatch.rows)
        packets = rows.mapInArrow(sparkRowsPackets, SCHEMA)
        return packets.coalesce(count).unionAll(self._processorRows(count)).coalesce(count)

    def _taskletSpec(self, name: str, inbound: list[Edge], sparkSource: bool) -> TaskletSpec:
        """Return what a task of vertex ``name`` needs, its inbound edges in the order consumed."""
        return vertexTaskletSpec(
            self.dag, self.plan, self.jobName, name, inbound, sparkSource, self._carriers, self._edgeQueues,
            self.microBatch,
        )

    def _edgeQueues(self, edge: Edge) -> EdgeQueues:
        """Return which upstream processors of ``edge`` send watermarks to each downstream one:
        all, unless the edge is narrow (then each its own)."""
        upstream = self.plan.vertex(edge.sourceName).parallelism
        downstream = self.plan.vertex(edge.destName).parallelism
        if self.plan.exchangeOf(edge) is not Exchange.NARROW or downstream == 1:
            return EdgeQueues(edge.destOrdinal, upstream)
        return EdgeQueues(edge.destOrdinal, upstream, tuple((index,) for index in range(downstream)))


def _dropped(output: DataFrame) -> None:
    """Release nothing: the Connect client has the server drop a checkpoint once nothing holds its DataFrame."""
