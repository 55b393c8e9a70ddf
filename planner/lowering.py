"""Lowering: each pipeline stage becomes Core DAG vertices and edges, one function per kind,
registered with ``@lowerStage.register`` in the module of its family (``lowering_sources``,
``lowering_stateless``, ``lowering_aggregations``, ``lowering_windows``, ``lowering_joins``,
``lowering_stateful``, ``lowering_sinks``; ``lowering_dispatch`` holds ``lowerStage`` and the
``DagBuilder``). ``lowerToDag`` returns the DAG with each vertex's role and the reason for each
choice between one vertex and two. How to add a stage kind:
docs/internals/core-dag-on-spark.md, "Adding a kind of stage"."""

# Each family's module registers its kinds with lowerStage as it is imported.
import sparkjet.planner.lowering_aggregations
import sparkjet.planner.lowering_joins
import sparkjet.planner.lowering_sinks
import sparkjet.planner.lowering_sources
import sparkjet.planner.lowering_stateful
import sparkjet.planner.lowering_stateless
import sparkjet.planner.lowering_windows
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.planner.lowering_dispatch import NO_STAGE, DagBuilder, LoweredDag, VertexRole, lowerStage

__all__ = ["NO_STAGE", "DagBuilder", "LoweredDag", "VertexRole", "lowerStage", "lowerToDag"]


def lowerToDag(graph: PipelineGraph) -> LoweredDag:
    """Lower every stage, in creation order, into one Core DAG with each vertex's role:
    ``source -> fused(map, filter) -> count -> sink`` becomes ``source -> fused(map, filter)
    -> count-prepare -> count -> sink``, ``count-prepare`` the prepare step of ``count``."""
    builder = DagBuilder(graph)
    for index, transform in enumerate(graph.transforms):
        builder.current = transform
        lowerStage(transform, builder, index)
    return builder.build()
