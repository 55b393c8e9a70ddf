"""Pictures of a plan: the Pipeline and the Core DAG it becomes, side by side."""

import graphviz

from coredag.dag import DAG
from coredag.dot import dagToGraphviz, writeSvg
from pipeline.naming import makeNamesUnique
from pipeline.pipeline import Pipeline
from pipeline.pipeline_graph import PipelineGraph
from planner.planning import plan


def pipelineToGraphviz(graph: PipelineGraph) -> graphviz.Digraph:
    """Return a left-to-right picture of the pipeline's stages, labelled with their names."""
    picture = graphviz.Digraph("Pipeline", graph_attr={"rankdir": "LR"}, node_attr={"shape": "ellipse"})
    for index, transform in enumerate(graph.transforms):
        parallelism = transform.localParallelism
        caption = f"\nparallelism {parallelism}" if parallelism > 0 else ""
        picture.node(f"stage{index}", f"{transform.name}{caption}")
        for upstream in graph.upstream[index]:
            picture.edge(f"stage{upstream}", f"stage{index}")
    return picture


def planToGraphviz(pipeline: Pipeline, dag: DAG | None = None) -> graphviz.Digraph:
    """Return one picture with the pipeline on the left and its Core DAG on the right."""
    picture = graphviz.Digraph("Plan", graph_attr={"rankdir": "LR", "compound": "true"})
    stages = pipelineToGraphviz(makeNamesUnique(pipeline.graph()))
    stages.name, stages.graph_attr["label"] = "cluster_pipeline", "Pipeline"
    vertices = dagToGraphviz(dag or plan(pipeline))
    vertices.name, vertices.graph_attr["label"] = "cluster_dag", "Core DAG"
    picture.subgraph(stages)
    picture.subgraph(vertices)
    return picture


def writePlanSvg(work: Pipeline | DAG, path: str) -> tuple[str, str | None]:
    """Draw the plan of a Pipeline (with its stages) or of a Core DAG into an SVG file."""
    picture = planToGraphviz(work) if isinstance(work, Pipeline) else dagToGraphviz(work)
    return writeSvg(picture, path)
