"""Drawing a Core DAG: Jet's DOT text and a graphviz picture."""

import os

import graphviz

from coredag.dag import DAG
from coredag.edge import Edge, RoutingPolicy
from coredag.vertex import LOCAL_PARALLELISM_USE_DEFAULT

PREPARE_SUFFIX = "-prepare"


def jetEdgeLabel(edge: Edge) -> str:
    """Return the label Jet's DOT output gives an edge, such as ``distributed-partitioned``."""
    routing = {
        RoutingPolicy.UNICAST: "",
        RoutingPolicy.ISOLATED: "isolated",
        RoutingPolicy.PARTITIONED: "partitioned",
        RoutingPolicy.ALL_TO_ONE: "partitioned",
        RoutingPolicy.BROADCAST: "broadcast",
    }[edge.routing]
    labels = ["distributed"] if edge.isDistributed else []
    labels += [routing] if routing else []
    labels += ["ordered"] if edge.ordering is not None else []
    return "-".join(labels)


def _escape(name: str) -> str:
    return name.replace('"', '\\"')


def jetDotString(dag: DAG, defaultParallelism: int = LOCAL_PARALLELISM_USE_DEFAULT) -> str:
    """Return ``dag`` in Jet's DOT format, a prepare -> combine edge in its own cluster."""
    lines = ["digraph DAG {"]
    for vertex in dag:
        parallelism = vertex.determineLocalParallelism(defaultParallelism)
        shown = "default" if parallelism == LOCAL_PARALLELISM_USE_DEFAULT else parallelism
        lines.append(f'\t"{_escape(vertex.name)}" [localParallelism={shown}];')
    clusters = 0
    for vertex in dag:
        outbound = dag.getOutboundEdges(vertex.name)
        for edge in outbound:
            attributes = []
            label = jetEdgeLabel(edge)
            if label:
                attributes.append(f'label="{label}"')
            if len(dag.getInboundEdges(edge.destName)) > 1:
                attributes.append(f"headlabel={edge.destOrdinal}")
            if len(outbound) > 1:
                attributes.append(f"taillabel={edge.sourceOrdinal}")
            attributes.append(f"queueSize={edge.config.queueSize}")
            line = f'"{_escape(edge.sourceName)}" -> "{_escape(edge.destName)}" [{", ".join(attributes)}];'
            if edge.sourceName == edge.destName + PREPARE_SUFFIX:
                lines += [f"\tsubgraph cluster_{clusters} {{", f"\t\t{line}", "\t}"]
                clusters += 1
            else:
                lines.append(f"\t{line}")
    lines.append("}")
    return "\n".join(lines)


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


def dagToGraphviz(dag: DAG, defaultParallelism: int | None = None) -> graphviz.Digraph:
    """Return a left-to-right picture of ``dag``: vertices with parallelism, edges by kind."""
    graph = graphviz.Digraph(
        "DAG", graph_attr={"rankdir": "LR"}, node_attr={"shape": "box", "style": "rounded"}
    )
    nodeIds = {vertex.name: f"vertex{number}" for number, vertex in enumerate(dag)}
    for vertex in dag:
        parallelism = vertex.localParallelism
        if parallelism == LOCAL_PARALLELISM_USE_DEFAULT:
            parallelism = defaultParallelism if defaultParallelism else "default"
        graph.node(nodeIds[vertex.name], f"{vertex.name}\nparallelism {parallelism}")
    for edge in dag.edges():
        graph.edge(
            nodeIds[edge.sourceName],
            nodeIds[edge.destName],
            label=edgeCaption(edge),
            style="bold" if edge.isDistributed else "solid",
        )
    return graph


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
