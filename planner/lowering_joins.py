"""Lowering the hash join: a collector per joined stage, broadcast to the joiner."""

from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.processors.join import HashJoinCollectP, HashJoinP
from sparkjet.pipeline.transforms import HashJoinTransform
from sparkjet.planner.lowering_dispatch import DagBuilder, lowerStage, rebalanced, stageName


@lowerStage.register
def lowerHashJoin(transform: HashJoinTransform, builder: DagBuilder, index: int) -> None:
    """Each joined stage -(distributed broadcast)-> ``<name>-collector<i>`` (parallelism 1)
    -(broadcast, priority -1)-> ``<name>-joiner``, which gets the primary stage at ordinal 0."""
    name, label, clauses = transform.name, stageName(transform), transform.clauses
    joiner = builder.addVertex(
        f"{name}-joiner",
        HashJoinP(tuple(c.leftKeyFn for c in clauses), transform.mapFn, transform.inner, transform.matchesByTag, label),
        transform.localParallelism,
        "joiner",
    )
    primary, *sides = builder.graph.upstream[index]
    builder.addEdge(rebalanced(builder.edgeFrom(primary).to(joiner, 0), transform))
    for ordinal, (side, clause) in enumerate(zip(sides, clauses), start=1):
        sideName = builder.emittingStage(side)
        supplier = HashJoinCollectP(clause.rightKeyFn, clause.rightProjectFn, label, sideName, clause.broadcastLimit)
        collector = builder.addVertex(f"{name}-collector{ordinal}", supplier, 1, f"collector{ordinal}")
        builder.addEdge(builder.edgeFrom(side).to(collector).distributed().broadcast())
        builder.addEdge(Edge.from_(collector).to(joiner, ordinal).broadcast().priority(-1))
    builder.setExit(index, joiner)
