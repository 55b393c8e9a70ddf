"""What a task of a vertex needs to run its processor, as both engines read it from the DAG and
the physical plan: the vertex, its inbound edges in the order consumed, its loop and buckets,
its watermarks' queues, the job's guarantee and, in a stream's micro-batch, where its
processors start from. No pyspark here."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.partitioner import DefaultPartitioner, Partitioner
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.processor_state import ProcessorState, RestoredShare, redistributed
from sparkjet.coredag.runtime.tasklet import TaskletSpec
from sparkjet.coredag.runtime.vertex_tasks import StreamStart
from sparkjet.coredag.runtime.watermarks import EdgeQueues

if TYPE_CHECKING:
    from sparkjet.coredag.runtime.micro_batch import MicroBatch


def vertexTaskletSpec(
    dag: DAG, plan: PhysicalPlan, jobName: str, name: str, inbound: list[Edge], sparkSource: bool,
    carriers: set[str], edgeQueues: Callable[[Edge], EdgeQueues], microBatch: "MicroBatch | None" = None,
) -> TaskletSpec:
    """Return what a task of vertex ``name`` needs, its ``inbound`` edges in the order consumed;
    a ``sparkSource``'s processors convert the rows Spark read; ``edgeQueues`` gives the queues
    of an inbound edge from one of the watermark ``carriers``; a stream job's ``microBatch``
    gives its processing guarantee (a batch job has none)."""
    vertex, planned = dag.getVertex(name), plan.vertex(name)
    supplier = vertex.processorSupplier
    config = (inbound or dag.getOutboundEdges(name) or [Edge(name)])[0].config
    return TaskletSpec(
        vertexName=vertex.stageName,
        processorSupplier=supplier.sparkRowsSupplier() if sparkSource else supplier,
        totalParallelism=planned.parallelism,
        inboundOrdinals=(0,) if sparkSource else tuple(e.destOrdinal for e in inbound),
        bucketCount=planned.buckets,
        queueSize=config.queueSize,
        outboxCapacity=config.outboxCapacity,
        jobName=jobName,
        inboundPriorities=tuple(e.priorityNumber for e in inbound),
        inboundOrdering=inbound[0].ordering if len(inbound) == 1 else None,
        loop=planned.loop,
        watermarkQueues=tuple(edgeQueues(edge) for edge in inbound if edge.sourceName in carriers),
        carriesWatermarks=name in carriers,
        hasOutboundEdges=bool(dag.getOutboundEdges(name)),
        processingGuarantee=ProcessingGuarantee.NONE if microBatch is None else microBatch.processingGuarantee,
    )


def isStatic(microBatch: "MicroBatch | None", name: str) -> bool:
    """Return whether vertex ``name`` runs once per stream job, no stream reaching it."""
    return microBatch is not None and name in microBatch.staticVertices


def streamStart(
    dag: DAG, plan: PhysicalPlan, microBatch: "MicroBatch | None", name: str, inbound: list[Edge],
) -> StreamStart | None:
    """Return where vertex ``name``'s processors start a stream's ``microBatch`` from (None in
    a batch job, or where no stream reaches it)."""
    if microBatch is None or isStatic(microBatch, name):
        return None
    return StreamStart(
        vertex=name,
        store=microBatch.stateStore,
        restored=restoredStates(dag, plan, microBatch, name),
        saves=not microBatch.final,
        keptAlive=not any(isStatic(microBatch, edge.sourceName) for edge in inbound),
        savesChangesOnly=plan.vertex(name).capabilities.savesChangesOnly,
    )


def restoredStates(
    dag: DAG, plan: PhysicalPlan, microBatch: "MicroBatch", name: str,
) -> dict[int, ProcessorState | RestoredShare]:
    """Return what each of vertex ``name``'s processors restores: the state it saved in the
    previous micro-batch, or its share of those another number of processors saved (none
    before the first micro-batch)."""
    restored = microBatch.restored.get(name)
    if not restored:
        return {}
    count = plan.vertex(name).parallelism
    if set(restored) != set(range(count)):
        return redistributed(restored, count, restoringPartitioner(dag, name))
    return dict(restored)


def restoringPartitioner(dag: DAG, name: str) -> Partitioner:
    """Return the partitioner that sends vertex ``name`` its keys' items: its partitioned
    inbound edge's, else the default one (Jet's, where no edge says)."""
    partitioned = (edge for edge in dag.getInboundEdges(name) if edge.routing is RoutingPolicy.PARTITIONED)
    return next((edge.partitioner for edge in partitioned), DefaultPartitioner())


def watermarkCarriers(dag: DAG, plan: PhysicalPlan) -> set[str]:
    """Return the vertices whose output may hold watermarks: those whose processors insert them,
    any processor not a standard one (it may emit its own: Jet needs no declaration), and every
    vertex downstream of one (a standard processor forwards them)."""
    carriers: set[str] = set()
    for vertex in dag.topologicalOrder():
        capabilities = plan.vertex(vertex.name).capabilities
        if (
            capabilities.emitsWatermarks
            or not capabilities.hasFastPath
            or any(edge.sourceName in carriers for edge in dag.getInboundEdges(vertex.name))
        ):
            carriers.add(vertex.name)
    return carriers
