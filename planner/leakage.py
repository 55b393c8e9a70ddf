"""The leakage check: every stage but a sink must feed another stage."""

from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.transforms import SinkTransform
from sparkjet.planner.errors import PlanningError


def rejectDanglingStages(graph: PipelineGraph) -> PipelineGraph:
    """Raise if a stage other than a sink has nothing downstream, naming where each was
    defined; else return ``graph``."""
    dangling = [
        transform
        for index, transform in enumerate(graph.transforms)
        if not isinstance(transform, SinkTransform) and not graph.downstream(index)
    ]
    if dangling:
        names = ", ".join(transform.name for transform in dangling)
        places = ", ".join(str(transform.definedAt) for transform in dangling)
        raise PlanningError(
            f"These transforms have nothing attached to them: [{names}] (defined at {places}); "
            "attach a stage or a sink (writeTo) to each, or remove it"
        )
    return graph
