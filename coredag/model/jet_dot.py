"""Jet's DOT text of a Core DAG (``DAG.toDotString``) and of a pipeline: Jet's quoting, edge
labels and prepare -> combine clusters."""

from typing import TYPE_CHECKING

from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT

if TYPE_CHECKING:
    from sparkjet.coredag.model.dag import DAG

PREPARE_SUFFIX = "-prepare"


def jetEdgeLabel(edge: Edge) -> str:
    """Return the label Jet's DOT output gives an edge, such as ``distributed-partitioned``."""
    routing = {
        RoutingPolicy.UNICAST: "",
        RoutingPolicy.ISOLATED: "isolated",
        RoutingPolicy.PARTITIONED: "partitioned",
        RoutingPolicy.ALL_TO_ONE: "partitioned",
        RoutingPolicy.BROADCAST: "broadcast",
        RoutingPolicy.FANOUT: "fanout",
    }[edge.routing]
    labels = ["distributed"] if edge.isDistributed else []
    labels += [routing] if routing else []
    labels += ["ordered"] if edge.ordering is not None else []
    return "-".join(labels)


def isPrepareToCombine(edge: Edge) -> bool:
    """Tell whether ``edge`` joins a prepare vertex to its combine vertex (``x-prepare -> x``).

    By name, as Jet's own ``DAG.toDotString`` tells it: a Core DAG carries no roles. Pictures of
    a planned pipeline group vertices by the roles lowering recorded instead."""
    return edge.sourceName == edge.destName + PREPARE_SUFFIX


JET_ESCAPES = str.maketrans({'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r"})
"""Jet escapes only ``"``; a backslash (which would escape the closing quote or read as an
escString escape) and line breaks (which would split a statement's line) are escaped too."""


def jetQuoted(name: str) -> str:
    """Return ``name`` quoted for Jet's DOT text: Jet's bytes unless it holds a backslash or a line break."""
    return f'"{name.translate(JET_ESCAPES)}"'


def jetDotString(dag: "DAG", defaultParallelism: int = LOCAL_PARALLELISM_USE_DEFAULT) -> str:
    """Return ``dag`` in Jet's DOT format, a prepare -> combine edge in its own cluster."""
    lines = ["digraph DAG {"]
    for vertex in dag:
        parallelism = vertex.determineLocalParallelism(defaultParallelism)
        shown = "default" if parallelism == LOCAL_PARALLELISM_USE_DEFAULT else parallelism
        lines.append(f"\t{jetQuoted(vertex.name)} [localParallelism={shown}];")
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
            line = f'{jetQuoted(edge.sourceName)} -> {jetQuoted(edge.destName)} [{", ".join(attributes)}];'
            if isPrepareToCombine(edge):
                lines += [f"\tsubgraph cluster_{clusters} {{", f"\t\t{line}", "\t}"]
                clusters += 1
            else:
                lines.append(f"\t{line}")
    lines.append("}")
    return "\n".join(lines)
