"""The leakage check: every stage but a sink must feed another stage."""

from pipeline.pipeline_graph import PipelineGraph
from pipeline.transforms import SinkTransform
from planner.errors import PlanningError


def rejectDanglingStages(graph: PipelineGraph) -> PipelineGraph:
    """Raise if a stage other than a sink has nothing downstream; else return ``graph``."""
    dangling = [
        transform.name
        for index, transform in enumerate(graph.transforms)
        if not isinstance(transform, SinkTransform) and not graph.downstream(index)
    ]
    if dangling:
        raise PlanningError(f"These transforms have nothing attached to them: [{', '.join(dangling)}]")
    return graph
