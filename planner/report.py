"""A job's report: one self-contained HTML page with its annotated plan, how the planner
built it, and its figures per vertex, fused stage and edge."""

import html
import json

import graphviz

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, VertexMetrics
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.planner.planning import Plan, planOf
from sparkjet.planner.render import planSvg

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
#drawing svg { max-width: 100%; height: auto; }
#drawing-check { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: left; }
.number { text-align: right; }
tr.stage td { color: #555; font-size: 0.9em; }
tr.stage td.name { padding-left: 2.5em; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
"""

CHECK_SCRIPT = """
(() => {
  const expected = JSON.parse(document.getElementById("plan-graph").textContent);
  const drawn = kind => [...document.querySelectorAll(`#drawing svg g.${kind}`)]
    .map(group => group.querySelector("a")?.getAttribute("xlink:title") ?? "");
  const shows = (tooltips, name) => tooltips.some(t => t === name || t.startsWith(`${name}\\n`));
  const vertices = drawn("vertex");
  const edges = drawn("dag-edge");
  const lostVertices = expected.vertices.filter(name => !shows(vertices, name));
  const lostEdges = expected.edges.map(([source, dest]) => `${source} -> ${dest}`)
    .filter(edge => !shows(edges, edge));
  const missing = [...lostVertices, ...lostEdges];
  const check = document.getElementById("drawing-check");
  check.dataset.verticesDrawn = expected.vertices.length - lostVertices.length;
  check.dataset.edgesDrawn = expected.edges.length - lostEdges.length;
  check.dataset.missing = missing.join("; ");
  check.textContent = missing.length === 0
    ? `The drawing shows all ${expected.vertices.length} vertices and ${expected.edges.length} edges.`
    : `Missing from the drawing: ${missing.join("; ")}`;
})();
"""
"""Run by the page: checks that the drawing shows every vertex and edge of the Core DAG (the
picture gives them classes ``vertex`` and ``dag-edge``, their full names, of one line or more,
first in their tooltips) and says so in ``#drawing-check``, the counts in its data attributes."""


SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
"""JSON escapes that keep a script element's text free of ``</script``, ``<!--`` and ``-->``,
which would end it early or make ``</script>`` not end it."""


def reportHtml(work: Plan | Pipeline | DAG, metrics: JobMetrics) -> str:
    """Return the report of a finished job as one HTML page that needs no other file (a
    Pipeline is planned, a DAG taken as built)."""
    planned = planOf(work)
    title = html.escape(f"sparkjet job '{metrics.jobName}'")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        f'<head><meta charset="utf-8"><title>{title}</title><style>{STYLE}</style></head>',
        "<body>",
        f'<h1 id="title">{title}</h1>',
        f'<p id="job-time">The job ran in <span class="seconds">{metrics.seconds:.2f}</span> s.</p>',
        _drawingSection(planned, metrics),
        _figuresSection(metrics),
        _planTextSection(planned),
        f'<script type="application/json" id="plan-graph">{_planGraphJson(metrics)}</script>',
        f"<script>{CHECK_SCRIPT}</script>",
        "</body>",
        "</html>",
    ])


def writeReport(work: Plan | Pipeline | DAG, path: str, metrics: JobMetrics) -> str:
    """Write the report of a finished job into ``path`` (see reportHtml); return the path."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(reportHtml(work, metrics))
    return path


def _drawingSection(planned: Plan, metrics: JobMetrics) -> str:
    try:
        svg = planSvg(planned, metrics)
        drawing = svg[svg.index("<svg"):]
    except graphviz.ExecutableNotFound:
        drawing = (
            '<p class="note">graphviz\'s \'dot\' program is not installed, so the plan is not drawn. '
            "Install graphviz (Debian/Ubuntu: apt-get install graphviz, macOS: brew install graphviz) "
            "and write the report again.</p>"
        )
    counts = f'data-vertices-expected="{len(metrics.vertices)}" data-edges-expected="{len(metrics.edges)}"'
    return "\n".join([
        '<section id="plan">',
        "<h2>Plan</h2>",
        f'<div id="drawing">{drawing}</div>',
        f'<p id="drawing-check" {counts}></p>',
        "</section>",
    ])


def _figuresSection(metrics: JobMetrics) -> str:
    vertexRows = [row for vertex in metrics.vertices for row in _vertexRows(vertex)]
    stream = [f'<p id="micro-batches">{html.escape(metrics.microBatchLine())}</p>'] if metrics.microBatches else []
    if metrics.lastSnapshot is not None:
        stream.append(f'<p id="last-snapshot">Last {html.escape(metrics.lastSnapshot.describe())}</p>')
    return "\n".join([
        '<section id="figures">',
        *stream,
        "<h2>Vertices</h2>",
        '<table id="vertices">',
        _headings(["Vertex and its fused stages"], ["Items in", "Items out", "Busy (s)", "Processors"]),
        *vertexRows,
        "</table>",
        "<h2>Edges</h2>",
        '<table id="edges">',
        _headings(["From", "To"], ["Items", "Shuffled bytes"]),
        *(_edgeRow(edge) for edge in metrics.edges),
        "</table>",
        "</section>",
    ])


def _headings(texts: list[str], numbers: list[str]) -> str:
    cells = [f"<th>{text}</th>" for text in texts] + [f'<th class="number">{text}</th>' for text in numbers]
    return f"<tr>{''.join(cells)}</tr>"


def _vertexRows(vertex: VertexMetrics) -> list[str]:
    name = html.escape(vertex.name)
    figures = [
        _number("items-in", vertex.itemsIn),
        _number("items-out", vertex.itemsOut),
        f'<td class="busy number">{vertex.seconds:.2f}</td>',
        _number("processors", vertex.processors),
    ]
    rows = [f'<tr class="vertex" data-name="{name}"><td class="name">{name}</td>{"".join(figures)}</tr>']
    for stage in vertex.stages:
        stageName = html.escape(stage.name)
        figures = [_number("items-in", stage.itemsIn), _number("items-out", stage.itemsOut)]
        rows.append(
            f'<tr class="stage" data-vertex="{name}" data-name="{stageName}">'
            f'<td class="name">{stageName}</td>{"".join(figures)}<td></td><td></td></tr>'
        )
    return rows


def _edgeRow(edge: EdgeMetrics) -> str:
    source, dest = html.escape(edge.sourceName), html.escape(edge.destName)
    shuffled = "kept in their tasks" if edge.shuffleBytes is None else f"{edge.shuffleBytes:,}"
    return (
        f'<tr class="edge" data-source="{source}" data-dest="{dest}">'
        f'<td class="source">{source}</td><td class="dest">{dest}</td>{_number("items", edge.items)}'
        f'<td class="shuffled-bytes number">{shuffled}</td></tr>'
    )


def _number(kind: str, count: int) -> str:
    return f'<td class="{kind} number">{count:,}</td>'


def _planTextSection(planned: Plan) -> str:
    if planned.hasStages():
        heading, text = "How the planner built the Core DAG", planned.explain()
    else:
        heading, text = "The Core DAG in Jet's DOT format", planned.toDotString()
    return "\n".join([
        '<section id="planner">',
        f"<h2>{heading}</h2>",
        f'<pre id="plan-text">{html.escape(text)}</pre>',
        "</section>",
    ])


def _planGraphJson(metrics: JobMetrics) -> str:
    graph = {
        "vertices": [vertex.name for vertex in metrics.vertices],
        "edges": [[edge.sourceName, edge.destName] for edge in metrics.edges],
    }
    return json.dumps(graph).translate(SCRIPT_ESCAPES)
