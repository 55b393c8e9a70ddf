"""Pictures of a plan: the Pipeline above the Core DAG it becomes, a dashed link from each stage
to each vertex running it, edges drawn by kind, a legend, and a job's figures after a run.

Every element carries an id and a class for pages that embed the SVG: stages ``stage-<n>``
(class ``stage``), links between them ``stage-edge-<n>`` (``stage-edge``), vertices
``vertex-<n>`` (``vertex``), edges ``edge-<n>`` (``dag-edge``), links from stages to vertices
``runs-<n>`` (``runs``), clusters of one stage's vertices ``group-<n>`` (``group``), and the
legend ``legend`` (its parts: class ``legend``). Tooltips hold full names and figures.
"""

import attrs
import graphviz

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import (
    dagToGraphviz,
    edgeDrawing,
    labelText,
    shortened,
    tooltipText,
    vertexIds,
    writeSvg,
)
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.metrics import JobMetrics
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.planner.planning import Plan, planOf

FONT = "Helvetica,Arial,sans-serif"

RUNS_DRAWING = {"style": "dashed", "color": "gray50", "arrowhead": "none"}
"""How a link from a stage to a vertex running it is drawn."""

_SAMPLE = Edge("sample", destName="sample")


def stageId(index: int) -> str:
    """Return the picture's node id of the stage at ``index`` in the pipeline graph."""
    return f"stage-{index}"


def pipelineToGraphviz(graph: PipelineGraph) -> graphviz.Digraph:
    """Return a left-to-right picture of the pipeline's stages, labelled with their names."""
    picture = graphviz.Digraph("Pipeline", graph_attr={"rankdir": "LR"}, node_attr={"shape": "ellipse"})
    for index, transform in enumerate(graph.transforms):
        parallelism = transform.localParallelism
        caption = [f"parallelism {parallelism}"] if parallelism > 0 else []
        picture.node(
            stageId(index),
            labelText([shortened(transform.name), *caption]),
            tooltip=tooltipText([transform.name, *caption]),
            **{"id": stageId(index), "class": "stage"},
        )
    links = [(upstream, index) for index, ups in enumerate(graph.upstream) for upstream in ups]
    for number, (upstream, index) in enumerate(links):
        picture.edge(stageId(upstream), stageId(index), **{"id": f"stage-edge-{number}", "class": "stage-edge"})
    return picture


def planToGraphviz(work: Plan | Pipeline | DAG, metrics: JobMetrics | None = None) -> graphviz.Digraph:
    """Return the picture of a plan (a Pipeline is planned, a DAG taken as built; see
    planPicture)."""
    return planPicture(planOf(work), metrics)


def planPicture(planned: Plan, metrics: JobMetrics | None = None) -> graphviz.Digraph:
    """Return the picture of a plan, left to right: the pipeline's stages above the Core DAG
    running them, a dashed link from each stage to each of its vertices, each stage of several
    vertices in a cluster, ``metrics``' figures if given, and a legend. A DAG that was not
    planned from a pipeline is drawn alone, with the legend."""
    withStages = planned.hasStages()
    stageVertices = planned.stageVertices()
    picture = graphviz.Digraph(
        "Plan",
        graph_attr={"rankdir": "LR", "newrank": "true", "fontname": FONT},
        node_attr={"fontname": FONT, "fontsize": "11"},
        edge_attr={"fontname": FONT, "fontsize": "10"},
    )
    picture.subgraph(legendToGraphviz(withStages, metrics))
    if withStages:
        picture.subgraph(_cluster(pipelineToGraphviz(planned.pipelineGraph()), "pipeline", "Pipeline"))
    groups = {stage: names for stage, names in stageVertices.items() if len(names) > 1} if withStages else None
    exchanges = planned.physicalPlan().exchanges()
    picture.subgraph(_cluster(dagToGraphviz(planned.dag, metrics, groups, exchanges=exchanges), "dag", "Core DAG"))
    addRunsLinks(picture, stageVertices, vertexIds(planned.dag))
    return picture


def _cluster(graph: graphviz.Digraph, name: str, label: str) -> graphviz.Digraph:
    graph.name = f"cluster_{name}"
    graph.graph_attr.update(label=label, id=f"cluster-{name}")
    return graph


def addRunsLinks(picture: graphviz.Digraph, stageVertices: dict[str, tuple[str, ...]], ids: dict[str, str]) -> None:
    """Draw a dashed link, ``runs-<n>``, from each stage to each vertex running it; the vertex
    is ranked no further left than its stage."""
    pairs = [(index, stage, name) for index, (stage, names) in enumerate(stageVertices.items()) for name in names]
    for number, (index, stage, name) in enumerate(pairs):
        picture.edge(
            stageId(index),
            ids[name],
            tooltip=tooltipText([f"{stage} runs in {name}"]),
            minlen="0",
            weight="2",
            **RUNS_DRAWING,
            **{"id": f"runs-{number}", "class": "runs"},
        )


def legendRows(withStages: bool, metrics: JobMetrics | None) -> list[list[tuple[str, dict[str, str]]]]:
    """Return the legend's rows of samples: what each says and how its edge is drawn."""
    kinds = [
        ("distributed: circle at the tail", edgeDrawing(_SAMPLE.distributed())),
        ("local", edgeDrawing(_SAMPLE)),
        ("with a priority", edgeDrawing(_SAMPLE.priority(1))),
        ("shuffle: bold", edgeDrawing(_SAMPLE, Exchange.SHUFFLED)),
        ("in task or coalesced: dashed", edgeDrawing(_SAMPLE, Exchange.NARROW)),
    ]
    if withStages:
        kinds.append(("stage to a vertex running it", RUNS_DRAWING))
    if metrics is not None:
        mostItems = max((edge.items for edge in metrics.edges), default=0)
        kinds.append((f"width: items, up to {mostItems:,}", {"penwidth": "6"}))
    routings = [(policy.value, edgeDrawing(attrs.evolve(_SAMPLE, routing=policy))) for policy in RoutingPolicy]
    return [kinds, routings]


def legendToGraphviz(withStages: bool, metrics: JobMetrics | None) -> graphviz.Digraph:
    """Return the legend, a cluster of rows of sample edges, one per way of drawing an edge."""
    legend = graphviz.Digraph(
        "cluster_legend",
        graph_attr={"label": "Legend", "id": "legend", "class": "legend", "color": "gray50"},
        node_attr={"shape": "point", "style": "invis", "class": "legend"},
    )
    rows = legendRows(withStages, metrics)
    samples = [(row, column, sample) for row, entries in enumerate(rows) for column, sample in enumerate(entries)]
    for number, (row, column, (caption, drawing)) in enumerate(samples):
        legend.edge(
            f"legend-{row}-{column}",
            f"legend-{row}-{column + 1}",
            labelText([caption]),
            **drawing,
            **{"id": f"legend-{number}", "class": "legend"},
        )
    return legend


def planSvg(work: Plan | Pipeline | DAG, metrics: JobMetrics | None = None) -> str:
    """Return the SVG text of the plan's picture (see planToGraphviz); raises
    graphviz.ExecutableNotFound when graphviz's ``dot`` is not installed."""
    return planToGraphviz(work, metrics).pipe(format="svg", encoding="utf-8")


def writePlanSvg(work: Plan | Pipeline | DAG, path: str, metrics: JobMetrics | None = None) -> tuple[str, str | None]:
    """Draw a plan, or the plan of a Pipeline (with its stages) or of a Core DAG, into an SVG file,
    annotated with a job's ``metrics`` if given; without ``dot``, write the DOT text instead.

    Returns the path written and, when it is DOT text, a note saying how to get the SVG."""
    return writeSvg(planToGraphviz(work, metrics), path)
