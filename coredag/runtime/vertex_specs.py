"""What a task of a vertex needs to run its processor, as both engines read it from the DAG and
the physical plan: the vertex, its inbound edges in the order consumed, its loop and buckets,
its watermarks' queues (a stream's micro-batch adds its state to it). No pyspark here."""

from collections.abc import Callable

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.runtime.physical_plan import PhysicalPlan
from sparkjet.coredag.runtime.tasklet import TaskletSpec
from sparkjet.coredag.runtime.watermarks import EdgeQueues


def vertexTaskletSpec(
    dag: DAG, plan: PhysicalPlan, jobName: str, name: str, inbound: list[Edge], sparkSource: bool,
    carriers: set[str], edgeQueues: Callable[[Edge], EdgeQueues],
) -> TaskletSpec:
    """Return what a task of vertex ``name`` needs, its ``inbound`` edges in the order consumed;
    a ``sparkSource``'s processors convert the rows Spark read; ``edgeQueues`` gives the queues
    of an inbound edge from one of the watermark ``carriers``."""
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
    )


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
