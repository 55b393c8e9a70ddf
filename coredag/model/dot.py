"""Drawing a Core DAG: a graphviz picture, annotated with a job's figures (Jet's DOT text: jet_dot.py)."""

import html
import os
from collections.abc import Callable, Iterable, Mapping

import graphviz

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.model.jet_dot import isPrepareToCombine
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, VertexMetrics, counted
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex


NAME_LIMIT = 40
"""Labels shorten longer names with an ellipsis; tooltips keep them whole."""

ROUTING_DRAWING = {
    RoutingPolicy.UNICAST: ("black", "normal"),
    RoutingPolicy.ISOLATED: ("#009E73", "onormal"),
    RoutingPolicy.PARTITIONED: ("#0072B2", "diamond"),
    RoutingPolicy.BROADCAST: ("#D55E00", "crow"),
    RoutingPolicy.ALL_TO_ONE: ("#CC79A7", "box"),
    RoutingPolicy.FANOUT: ("#E69F00", "vee"),
}
"""The colour (Okabe and Ito's, which colour-blind readers tell apart) and the arrowhead of
each routing policy."""

EXCHANGE_STYLE = {Exchange.SHUFFLED: "bold", Exchange.COALESCED: "dashed", Exchange.NARROW: "dashed"}
"""The line of an edge by how it runs: bold where its items cross a shuffle, dashed where they
stay in their Spark task (a priority's dots win over the dashes)."""


def edgeCaption(edge: Edge) -> str:
    """Return a short human caption for an edge: locality, routing, priority."""
    words = ["distributed" if edge.isDistributed else "local", edge.routing.value]
    if edge.ordering is not None:
        words.append("ordered")
    if edge.priorityNumber:
        words.append(f"priority {edge.priorityNumber}")
    if edge.isBuffered:
        words.append("buffered")
    return " ".join(words)


def edgeDrawing(edge: Edge, exchange: Exchange | None = None) -> dict[str, str]:
    """Return how ``edge`` is drawn: colour and arrowhead by routing; a circle at the tail when
    it is distributed; dotted when it has a priority; given its ``exchange``, bold when
    shuffled, else dashed (see EXCHANGE_STYLE)."""
    colour, arrowhead = ROUTING_DRAWING[edge.routing]
    styles = ["dotted"] if edge.priorityNumber else []
    if exchange is not None and not (styles and EXCHANGE_STYLE[exchange] == "dashed"):
        styles.append(EXCHANGE_STYLE[exchange])
    drawing = {
        "color": colour,
        "fontcolor": colour,
        "arrowhead": arrowhead,
        "style": ",".join(styles) or "solid",
    }
    if edge.isDistributed:
        drawing.update(dir="both", arrowtail="odot")
    return drawing


def shortened(name: str, limit: int = NAME_LIMIT) -> str:
    """Return ``name``, cut to ``limit`` characters ending with an ellipsis when it is longer."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def labelText(lines: Iterable[str]) -> str:
    """Return ``lines`` as one graphviz label: backslashes, ``&`` and ``<...>`` taken literally."""
    return graphviz.escape("\n".join(lines).replace("&", "&amp;"))


EDGE_LABEL_PADDING = 4
"""The points of blank kept around an edge's label, besides its line's width, so that the line,
which graphviz routes along the label's box, and its arrowhead do not touch the text."""


def edgeLabel(lines: Iterable[str], penwidth: str = "1") -> str:
    """Return ``lines`` as the label of an edge drawn ``penwidth`` wide, with EDGE_LABEL_PADDING
    and that width of blank around it (an HTML-like label: one cell, its lines centred), taken
    literally."""
    text = "<br/>".join(html.escape(line, quote=False) for line in lines)
    padding = round(EDGE_LABEL_PADDING + float(penwidth))
    return f'<<table border="0" cellborder="0" cellspacing="0" cellpadding="{padding}"><tr><td>{text}</td></tr></table>>'


def tooltipText(lines: Iterable[str]) -> str:
    """Return ``lines`` as one graphviz tooltip, literal as labelText's though graphviz reads a
    tooltip's escapes twice (``\\n``, then ``\\N`` and the like)."""
    return graphviz.escape(labelText(lines))


def itemChange(itemsIn: int, itemsOut: int) -> str:
    """Return how a count changed, `` (-90%)`` when items were dropped, `` (×10.0)`` when made."""
    if itemsIn == 0 or itemsOut == itemsIn:
        return ""
    if itemsOut < itemsIn:
        return f" (-{(itemsIn - itemsOut) * 100 // itemsIn}%)"
    return f" (×{itemsOut / itemsIn:.1f})"


def vertexLines(
    nameOf: Callable[[str], str], dag: DAG, vertex: Vertex, parallelism: object, figures: VertexMetrics | None
) -> list[str]:
    """Return the lines describing a vertex: its name and parallelism and, after a run, items in
    and out, busy time, in a stream job the watermark it reached and the late events it dropped,
    and the items in and out of each stage fused into it."""
    lines = [nameOf(vertex.name), f"parallelism {parallelism}"]
    role = eventTimeRole(vertex)
    if role is not None:
        lines.append(role[0])
    if figures is None:
        return lines
    processors = "processor" if figures.processors == 1 else "processors"
    lines[1] += f", {figures.processors} {processors}"
    hasInput, hasOutput = bool(dag.getInboundEdges(vertex.name)), bool(dag.getOutboundEdges(vertex.name))
    lines += [flowLine(figures, hasInput, hasOutput), f"{figures.seconds:.2f} s busy"]
    if figures.watermark is not None:
        lines.append(f"watermark {figures.watermark:,}")
    if figures.lateEventsDropped:
        lines.append(f"{figures.lateEventsDropped:,} late dropped")
    if len(figures.stages) > 1:
        lines += [
            f"{nameOf(stage.name)}: {stage.itemsIn:,} -> {stage.itemsOut:,}{itemChange(stage.itemsIn, stage.itemsOut)}"
            for stage in figures.stages
        ]
    return lines


EVENT_TIME_ROLES = (
    ("emitsWatermarks", "inserts watermarks", "#E3F1E4"),
    ("windowsByEventTime", "windows by event time", "#FCEFD2"),
)
"""The marks of a vertex that gives events their time or windows them: its supplier's
attribute, the line its picture gets and its fill."""


def eventTimeRole(vertex: Vertex) -> tuple[str, str] | None:
    """Return the caption and fill of a vertex that inserts watermarks or windows by event time."""
    for attribute, caption, fill in EVENT_TIME_ROLES:
        if getattr(vertex.processorSupplier, attribute, False):
            return caption, fill
    return None


def flowLine(figures: VertexMetrics, hasInput: bool, hasOutput: bool) -> str:
    """Return a vertex's items in and out: only out of a source, only into a sink."""
    if not hasInput:
        return f"{figures.itemsOut:,} out"
    if not hasOutput:
        return f"{figures.itemsIn:,} in"
    return f"{figures.itemsIn:,} in -> {figures.itemsOut:,} out{itemChange(figures.itemsIn, figures.itemsOut)}"


def edgeLines(edge: Edge, figures: EdgeMetrics | None, exchange: Exchange | None = None) -> list[str]:
    """Return the lines describing an edge: its kind, how it runs (``shuffle``, ``in task``,
    ``coalesced``) if known and, after a run, its items and the bytes it shuffled."""
    lines = [edgeCaption(edge)] + ([exchange.value] if exchange is not None else [])
    if figures is None:
        return lines
    lines.append(counted(figures.items, "item"))
    if figures.shuffleBytes is not None:
        lines.append(f"{figures.shuffleBytes:,} bytes shuffled")
    return lines


def edgeWidth(items: int, mostItems: int) -> str:
    """Return the pen width of an edge carrying ``items``: from 1 for none to 6 for the most."""
    return f"{1 + 5 * items / mostItems:.2f}" if mostItems else "1"


def vertexIds(dag: DAG) -> dict[str, str]:
    """Return the picture's node id of each vertex, ``vertex-0``, ``vertex-1``, ... in DAG order."""
    return {vertex.name: f"vertex-{number}" for number, vertex in enumerate(dag)}


def preparePairs(dag: DAG) -> dict[str, tuple[str, ...]]:
    """Return each prepare and combine pair of ``dag``, by the combine vertex's name."""
    return {e.destName: (e.sourceName, e.destName) for e in dag.edges() if isPrepareToCombine(e)}


def dagToGraphviz(
    dag: DAG,
    metrics: JobMetrics | None = None,
    groups: Mapping[str, tuple[str, ...]] | None = None,
    defaultParallelism: int | None = None,
    exchanges: Mapping[tuple[str, int], Exchange] | None = None,
) -> graphviz.Digraph:
    """Return a left-to-right picture of ``dag``: vertices with their parallelism, edges by kind
    (see edgeDrawing), each group of vertices (by default each prepare and combine pair) in a
    cluster labelled by its key; given a job's ``metrics``, its figures, edge widths by items;
    given the ``exchanges`` of its edges by source name and ordinal (a physical plan's
    ``exchanges()``), shuffled edges bold and labelled ``shuffle``, the others dashed."""
    graph = graphviz.Digraph(
        "DAG", graph_attr={"rankdir": "LR"}, node_attr={"shape": "box", "style": "rounded"}
    )
    clusters = groupClusters(preparePairs(dag) if groups is None else groups)
    homes = {name: cluster for cluster, names in clusters for name in names}
    ids = vertexIds(dag)
    for vertex in dag:
        parallelism = vertex.localParallelism
        if parallelism == LOCAL_PARALLELISM_USE_DEFAULT:
            parallelism = defaultParallelism if defaultParallelism else "default"
        figures = metrics.vertex(vertex.name) if metrics is not None else None
        role = eventTimeRole(vertex)
        homes.get(vertex.name, graph).node(
            ids[vertex.name],
            labelText(vertexLines(shortened, dag, vertex, parallelism, figures)),
            tooltip=tooltipText(vertexLines(str, dag, vertex, parallelism, figures)),
            **{"id": ids[vertex.name], "class": "vertex"},
            **({} if role is None else {"style": "rounded,filled", "fillcolor": role[1]}),
        )
    for cluster, _ in clusters:
        graph.subgraph(cluster)
    addEdges(graph, ids, dag, metrics, exchanges)
    return graph


def groupClusters(groups: Mapping[str, tuple[str, ...]]) -> list[tuple[graphviz.Digraph, tuple[str, ...]]]:
    """Return an empty dashed cluster, ``group-<n>``, for each group of vertex names."""
    return [
        (
            graphviz.Digraph(
                f"cluster_group_{number}",
                graph_attr={
                    "label": labelText([shortened(label)]),
                    "tooltip": tooltipText([label]),
                    "style": "dashed,rounded",
                    "labelloc": "b",
                    "color": "gray50",
                    "id": f"group-{number}",
                    "class": "group",
                },
            ),
            names,
        )
        for number, (label, names) in enumerate(groups.items())
    ]


def addEdges(
    graph: graphviz.Digraph,
    ids: Mapping[str, str],
    dag: DAG,
    metrics: JobMetrics | None,
    exchanges: Mapping[tuple[str, int], Exchange] | None = None,
) -> None:
    """Draw each edge of ``dag`` into ``graph``, ``edge-0``, ``edge-1``, ... in DAG order."""
    figures = [metrics.edge(e.sourceName, e.destName, e.sourceOrdinal) if metrics is not None else None for e in dag.edges()]
    mostItems = max((f.items for f in figures if f is not None), default=0)
    for number, (edge, edgeFigures) in enumerate(zip(dag.edges(), figures)):
        exchange = (exchanges or {}).get((edge.sourceName, edge.sourceOrdinal))
        caption = edgeLines(edge, edgeFigures, exchange)
        penwidth = edgeWidth(edgeFigures.items, mostItems) if edgeFigures else "1"
        graph.edge(
            ids[edge.sourceName],
            ids[edge.destName],
            edgeLabel(caption, penwidth),
            tooltip=tooltipText([f"{edge.sourceName} -> {edge.destName}", *caption]),
            penwidth=penwidth,
            **edgeDrawing(edge, exchange),
            **{"id": f"edge-{number}", "class": "dag-edge"},
        )


def writeSvg(graph: graphviz.Digraph, path: str) -> tuple[str, str | None]:
    """Write ``graph`` as SVG to ``path``; without graphviz's ``dot``, write DOT text instead.

    Returns the path written and, when it is DOT text, a note saying how to get the SVG.
    """
    try:
        svg = graph.pipe(format="svg")
    except graphviz.ExecutableNotFound:
        dotPath = os.path.splitext(path)[0] + ".dot"
        with open(dotPath, "w", encoding="utf-8") as file:
            file.write(graph.source)
        return dotPath, (
            f"graphviz's 'dot' program is not installed, so no SVG was drawn; the plan's DOT "
            f"text is in {dotPath}. Install graphviz (Debian/Ubuntu: apt-get install graphviz, "
            "macOS: brew install graphviz) and run again to get the SVG."
        )
    with open(path, "wb") as file:
        file.write(svg)
    return path, None
