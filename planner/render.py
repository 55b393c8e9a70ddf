"""Pictures of a plan: each stage of the Pipeline drawn just above the Core DAG vertices running
it, edges drawn by kind, a legend, and a job's figures after a run; a picture too wide for a
screen is drawn top to bottom if that fits (screenPicture). The ids and classes of its elements,
for pages that embed it: docs/internals/client.md."""

import contextlib
import os
import re
from collections.abc import Iterator

import attrs
import graphviz

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.dot import (
    dagToGraphviz,
    edgeDrawing,
    edgeLabel,
    edgeLines,
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

STAGE_DRAWING = {"shape": "ellipse", "style": "filled", "fillcolor": "#F0F0F0", "color": "gray40"}
"""How a stage of the pipeline is drawn: a grey ellipse, apart from the vertices' white boxes."""

STAGE_EDGE_DRAWING = {"color": "gray40", "arrowhead": "normal"}
"""How a link from a stage to the next is drawn."""

RUNS_DRAWING = {"style": "dashed", "color": "gray50", "arrowhead": "none"}
"""How a link from a stage to a vertex running it is drawn."""

SCREEN_WIDTH = 1600
"""The width in CSS pixels of the screen a standalone picture should fit."""

PIXELS_PER_POINT = 4 / 3
"""graphviz sizes an SVG in points; a browser at 100% shows a point as 4/3 of a CSS pixel."""

LEGEND_COLUMNS = {"LR": 1, "TB": 3}
"""How many samples a row of the legend holds, by the picture's direction: one in a picture drawn
left to right, so that the legend widens a single gap between its ranks; three top to bottom."""

_SAMPLE = Edge("sample", destName="sample")


def stageId(index: int) -> str:
    """Return the picture's node id of the stage at ``index`` in the pipeline graph."""
    return f"stage-{index}"


def pipelineToGraphviz(graph: PipelineGraph) -> graphviz.Digraph:
    """Return a left-to-right picture of the pipeline's stages, labelled with their names."""
    picture = graphviz.Digraph("Pipeline", graph_attr={"rankdir": "LR"}, node_attr=STAGE_DRAWING)
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
        picture.edge(
            stageId(upstream),
            stageId(index),
            **STAGE_EDGE_DRAWING,
            **{"id": f"stage-edge-{number}", "class": "stage-edge"},
        )
    return picture


def planToGraphviz(work: Plan | Pipeline | DAG, metrics: JobMetrics | None = None) -> graphviz.Digraph:
    """Return the picture of a plan (a Pipeline is planned, a DAG taken as built; see
    planPicture)."""
    return planPicture(planOf(work), metrics)


def planPicture(
    planned: Plan, metrics: JobMetrics | None = None, rankdir: str = "LR", legend: bool = True
) -> graphviz.Digraph:
    """Return the picture of a plan, left to right (or as graphviz's ``rankdir`` says): each
    stage of the pipeline just above (before) the Core DAG vertices running it, a short dashed
    link from the stage to each of them, each stage of several vertices in a cluster,
    ``metrics``' figures if given, and a ``legend`` unless told not to. A DAG that was not
    planned from a pipeline is drawn alone.

    Drawing stage and vertex side by side, rather than the whole pipeline above the whole DAG,
    keeps each link short where a pipeline branches: no link crosses another branch."""
    withStages = planned.hasStages()
    stageVertices = planned.stageVertices()
    picture = graphviz.Digraph(
        "Plan",
        graph_attr={"rankdir": rankdir, "newrank": "true", "fontname": FONT, "nodesep": "0.2", "ranksep": "0.3"},
        node_attr={"fontname": FONT, "fontsize": "11"},
        edge_attr={"fontname": FONT, "fontsize": "10"},
    )
    if legend:
        picture.subgraph(legendToGraphviz(withStages, metrics, rankdir))
    if withStages:
        picture.subgraph(pipelineToGraphviz(planned.pipelineGraph()))
    groups = {stage: names for stage, names in stageVertices.items() if len(names) > 1} if withStages else None
    exchanges = planned.physicalPlan().exchanges()
    picture.subgraph(dagToGraphviz(planned.dag, metrics, groups, exchanges=exchanges))
    addRunsLinks(picture, stageVertices, vertexIds(planned.dag))
    return picture


def edgeKinds(planned: Plan) -> dict[tuple[str, int], list[str]]:
    """Return the lines the picture labels each Core DAG edge with before its figures: its kind
    and how it runs (``local unicast``, ``in task``), by its source's name and ordinal."""
    exchanges = planned.physicalPlan().exchanges()
    keys = [((edge.sourceName, edge.sourceOrdinal), edge) for edge in planned.dag.edges()]
    return {key: edgeLines(edge, None, exchanges.get(key)) for key, edge in keys}


def addRunsLinks(picture: graphviz.Digraph, stageVertices: dict[str, tuple[str, ...]], ids: dict[str, str]) -> None:
    """Draw a dashed link, ``runs-<n>``, from each stage to each vertex running it; the vertex
    is ranked no further left than its stage, and pulled next to it."""
    pairs = [(index, stage, name) for index, (stage, names) in enumerate(stageVertices.items()) for name in names]
    for number, (index, stage, name) in enumerate(pairs):
        picture.edge(
            stageId(index),
            ids[name],
            tooltip=tooltipText([f"{stage} runs in {name}"]),
            minlen="0",
            weight="8",
            **RUNS_DRAWING,
            **{"id": f"runs-{number}", "class": "runs"},
        )


def legendRows(
    withStages: bool, metrics: JobMetrics | None, columns: int = 1
) -> list[list[tuple[str, dict[str, str]]]]:
    """Return the legend's rows of samples, at most ``columns`` a row: what each says (in short
    lines, no wider than the captions of edges, as the legend's gaps are the picture's too) and
    how its edge is drawn."""
    kinds = [
        ("distributed:\ncircle at the tail", edgeDrawing(_SAMPLE.distributed())),
        ("local", edgeDrawing(_SAMPLE)),
        ("with a priority", edgeDrawing(_SAMPLE.priority(1))),
        ("shuffle: bold", edgeDrawing(_SAMPLE, Exchange.SHUFFLED)),
        ("in task or\ncoalesced: dashed", edgeDrawing(_SAMPLE, Exchange.NARROW)),
    ]
    if withStages:
        kinds += [("stage to the\nnext stage", STAGE_EDGE_DRAWING), ("stage to a vertex\nrunning it", RUNS_DRAWING)]
    if metrics is not None:
        mostItems = max((edge.items for edge in metrics.edges), default=0)
        kinds.append((f"width: items,\nup to {mostItems:,}", {"penwidth": "6"}))
    routings = [(policy.value, edgeDrawing(attrs.evolve(_SAMPLE, routing=policy))) for policy in RoutingPolicy]
    return [
        samples[start : start + columns]
        for samples in (kinds, routings)
        for start in range(0, len(samples), columns)
    ]


def legendTitle(withStages: bool) -> str:
    """Return the legend's title, which tells stages and vertices apart when there are stages."""
    shapes = ["grey ellipse: a stage of the pipeline", "white box: a vertex of the Core DAG"] if withStages else []
    return labelText(["Legend", *shapes])


def legendToGraphviz(
    withStages: bool, metrics: JobMetrics | None, rankdir: str = "LR", columns: int | None = None
) -> graphviz.Digraph:
    """Return the legend, a cluster of rows of sample edges (``columns`` a row, by default as
    LEGEND_COLUMNS says for ``rankdir``), one per way of drawing an edge, labelled with what stages
    and vertices look like when there are stages."""
    legend = graphviz.Digraph(
        "cluster_legend",
        graph_attr={"label": legendTitle(withStages), "id": "legend", "class": "legend", "color": "gray50"},
        node_attr={"shape": "point", "style": "invis", "class": "legend"},
    )
    rows = legendRows(withStages, metrics, columns or LEGEND_COLUMNS[rankdir])
    samples = [(row, column, sample) for row, entries in enumerate(rows) for column, sample in enumerate(entries)]
    for number, (row, column, (caption, drawing)) in enumerate(samples):
        legend.edge(
            f"legend-{row}-{column}",
            f"legend-{row}-{column + 1}",
            edgeLabel(caption.split("\n"), drawing.get("penwidth", "1")),
            **drawing,
            **{"id": f"legend-{number}", "class": "legend"},
        )
    if rankdir != "LR":
        stackRows(legend, [len(entries) for entries in rows])
    return legend


def stackRows(legend: graphviz.Digraph, lengths: list[int]) -> None:
    """Keep each row of the legend on one rank, so that its samples lie across the picture's
    flow, and stack the rows with invisible links below an invisible node that keeps the first
    row's captions, drawn above it, clear of the legend's title."""
    for row, length in enumerate(lengths):
        legend.body.append("{rank=same; " + " ".join(f'"legend-{row}-{column}"' for column in range(length + 1)) + "}")
    legend.edge("legend-top", "legend-0-0", style="invis")
    for row in range(len(lengths) - 1):
        legend.edge(f"legend-{row}-0", f"legend-{row + 1}-0", style="invis")


def svgWidth(svg: str) -> float:
    """Return the width in CSS pixels at 100% of an SVG graphviz drew."""
    return svgPoints(svg)[0] * PIXELS_PER_POINT


def svgPoints(svg: str) -> tuple[float, float]:
    """Return the width and height in points of an SVG graphviz drew."""
    size = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    return float(size.group(1)), float(size.group(2))


def legendPicture(withStages: bool, metrics: JobMetrics | None, columns: int) -> graphviz.Digraph:
    """Return the legend drawn alone, rows of ``columns`` samples each, left to right."""
    picture = graphviz.Digraph(
        "Legend",
        graph_attr={"rankdir": "LR", "fontname": FONT, "nodesep": "0.1", "ranksep": "0.1"},
        edge_attr={"fontname": FONT, "fontsize": "10"},
    )
    picture.subgraph(legendToGraphviz(withStages, metrics, "LR", columns))
    return picture


def stackedSvg(top: str, bottom: str, width: float) -> str:
    """Return one SVG of two graphviz drew, ``top`` above ``bottom``, scaled down to at most
    ``width`` CSS pixels when wider; the bottom one's root group is renamed ``legend-graph``."""
    parts = [top[top.index("<svg"):], bottom[bottom.index("<svg"):].replace('id="graph0"', 'id="legend-graph"', 1)]
    sizes = [svgPoints(part) for part in parts]
    points = (max(w for w, _ in sizes), sum(h for _, h in sizes))
    scale = min(1.0, width / PIXELS_PER_POINT / points[0])
    nested = [
        re.sub(r'^<svg width="([\d.]+)pt" height="([\d.]+)pt"', rf'<svg x="0" y="{y}" width="\1" height="\2"', part)
        for part, y in zip(parts, (0, sizes[0][1]))
    ]
    return "".join([
        f'<svg width="{points[0] * scale:.2f}pt" height="{points[1] * scale:.2f}pt" viewBox="0 0 {points[0]:.2f} {points[1]:.2f}"',
        ' xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n',
        *nested,
        "</svg>\n",
    ])


NOTEBOOK_WIDTH = 900
"""The width in CSS pixels of a notebook's output, which its pictures fit."""


def notebookSvg(planned: Plan, metrics: JobMetrics | None = None, width: float = NOTEBOOK_WIDTH) -> str:
    """Return the SVG text of the plan's picture for a notebook, no wider than ``width``: left to
    right if that fits, else top to bottom if that does, else the narrower scaled down (each drawn
    only when the one before does not fit); its legend
    drawn apart below it, in as many columns as fit (up to 7), so that it is a few rows high.
    Raises graphviz.ExecutableNotFound without graphviz's ``dot``."""
    svgs = []
    for rankdir in ("LR", "TB"):
        svgs.append(planPicture(planned, metrics, rankdir, legend=False).pipe(format="svg", encoding="utf-8"))
        if svgWidth(svgs[-1]) <= width:
            break
    drawn = min(svgs, key=svgWidth)
    for columns in (7, 6, 5, 4, 3, 2):
        legend = legendPicture(planned.hasStages(), metrics, columns).pipe(format="svg", encoding="utf-8")
        if svgWidth(legend) <= width:
            break
    return stackedSvg(drawn, legend, width)


def viewingNote(width: float) -> list[str]:
    """Return the lines of the note of a picture ``width`` pixels wide, wider than a screen."""
    return [
        f"This plan is {width:,.0f} pixels wide, wider than a {SCREEN_WIDTH}-pixel screen:",
        "scroll sideways, or zoom out in the browser (Ctrl and -), or open the job's",
        "HTML report (sparkjet run --html FILE SCRIPT) to zoom and pan it.",
    ]


def screenPicture(planned: Plan, metrics: JobMetrics | None = None, noted: bool = True) -> graphviz.Digraph:
    """Return the picture of a plan as it best fits a screen (see screenDrawing); without
    graphviz's ``dot``, which measures it, left to right."""
    try:
        return screenDrawing(planned, metrics, noted)[0]
    except graphviz.ExecutableNotFound:
        return planPicture(planned, metrics)


def screenDrawing(planned: Plan, metrics: JobMetrics | None = None, noted: bool = True) -> tuple[graphviz.Digraph, str]:
    """Return the picture of a plan (see planPicture) and its SVG text: left to right if it fits
    a screen SCREEN_WIDTH wide, else top to bottom, the stages left of their vertices, if that
    fits, else the narrower of the two, ``noted`` at its top with how to view it. Each is drawn
    only when the one before does not fit; raises graphviz.ExecutableNotFound without ``dot``."""
    drawn = []
    for rankdir in ("LR", "TB"):
        picture = planPicture(planned, metrics, rankdir)
        svg = picture.pipe(format="svg", encoding="utf-8")
        if svgWidth(svg) <= SCREEN_WIDTH:
            return picture, svg
        drawn.append((svgWidth(svg), picture, svg))
    width, narrower, svg = min(drawn, key=lambda candidate: candidate[0])
    if not noted:
        return narrower, svg
    withNote = narrower.copy()
    withNote.attr(label=labelText(viewingNote(width)), labelloc="t", labeljust="l", fontsize="14")
    return withNote, withNote.pipe(format="svg", encoding="utf-8")


def planSvg(work: Plan | Pipeline | DAG, metrics: JobMetrics | None = None, noted: bool = True) -> str:
    """Return the SVG text of the plan's picture as it best fits a screen (see screenDrawing);
    raises graphviz.ExecutableNotFound when graphviz's ``dot`` is not installed."""
    return screenDrawing(planOf(work), metrics, noted)[1]


def writePlanSvg(work: Plan | Pipeline | DAG, path: str, metrics: JobMetrics | None = None) -> tuple[str, str | None]:
    """Draw a plan, or the plan of a Pipeline (with its stages) or of a Core DAG, into an SVG file,
    as it best fits a screen (see screenPicture); without ``dot``, write the DOT text instead.

    Args:
        work: a Pipeline, a plan, or a Core DAG.
        path: the SVG file to write.
        metrics: a job's figures to draw on the plan (``job.metrics()``).

    Returns:
        The path written and, when it is DOT text, a note saying how to get the SVG."""
    picture = screenPicture(planOf(work), metrics)
    with writingFile(path, "the plan's picture"):
        return writeSvg(picture, path)


@contextlib.contextmanager
def writingFile(path: str, what: str) -> Iterator[None]:
    """Make the directories ``path`` needs, then run the block that writes ``what`` there; an
    OSError of either is an OutputError saying in one line what could not be written where, and why."""
    try:
        os.makedirs(os.path.dirname(path) or os.curdir, exist_ok=True)
        yield
    except OSError as cause:
        raise OutputError(
            f"Cannot write {what} to '{path}': {_whyNot(path, cause)}; "
            "give a path whose directories you can create and write in"
        ) from cause


def _whyNot(path: str, cause: OSError) -> str:
    """Return why ``path`` could not be written: the file in the place of a directory it needs,
    else what the system said."""
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"'{parent}' is a file, not a directory"
    return f"{cause.strerror or cause}: '{cause.filename}'" if cause.filename else str(cause.strerror or cause)


def writeText(path: str, text: str, what: str) -> str:
    """Write ``text``, which is ``what``, into ``path``, making the directories it needs; return the path."""
    with writingFile(path, what), open(path, "w", encoding="utf-8") as file:
        file.write(text)
    return path
