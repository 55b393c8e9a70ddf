"""A job's report: one self-contained HTML page with its annotated plan, how the planner
built it, and its figures per vertex, fused stage and edge."""

import html
import json

import graphviz

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.metrics import EdgeMetrics, JobMetrics, VertexMetrics
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.planner.planning import Plan, planOf
from sparkjet.planner.render import edgeKinds, planSvg, writeText

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
#drawing { overflow: auto; max-height: 85vh; border: 1px solid #ddd; cursor: grab; }
#drawing.panning { cursor: grabbing; user-select: none; }
#drawing svg { display: block; }
#zoom { margin-bottom: 0.5em; }
#zoom button { font-size: 1em; min-width: 2.5em; }
#zoom button[aria-pressed="true"] { background: #cde; }
#zoom-level { display: inline-block; min-width: 4em; text-align: center; }
.hint, #drawing-check { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: left; vertical-align: top; }
.number { text-align: right; }
tr.stage td { color: #555; font-size: 0.9em; }
tr.stage td.name { padding-left: 2.5em; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
"""

MIN_TEXT_PIXELS = 11
"""The smallest size, in CSS pixels at the browser's 100%, that zooming out or fitting the
plan to the window may bring its text down to."""

ZOOM_SCRIPT = """
(() => {
  const box = document.getElementById("drawing");
  const svg = box.querySelector("svg");
  const bar = document.getElementById("zoom");
  if (!svg) { bar.hidden = true; return; }
  const natural = { width: svg.width.baseVal.value, height: svg.height.baseVal.value };
  const unit = natural.width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll("text")].map(text => parseFloat(text.getAttribute("font-size")) || 14);
  const smallest = Math.min(...sizes) * unit;
  const least = Math.min(1, MIN_TEXT_PIXELS / smallest);
  const state = { zoom: 1, fit: false };
  const room = () => {
    const style = getComputedStyle(box);
    const height = parseFloat(style.maxHeight) - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    return Math.min(box.clientWidth / natural.width, height / natural.height);
  };
  const shown = () => state.fit ? room() : state.zoom;
  const apply = () => {
    const zoom = shown();
    svg.setAttribute("width", `${natural.width * zoom}px`);
    svg.setAttribute("height", `${natural.height * zoom}px`);
    document.getElementById("zoom-level").textContent = `${Math.round(zoom * 100)}%`;
    document.getElementById("zoom-fit").setAttribute("aria-pressed", String(state.fit));
    box.dataset.zoom = zoom;
  };
  const zoomTo = zoom => { state.zoom = Math.min(8, Math.max(least, zoom)); state.fit = false; apply(); };
  document.getElementById("zoom-out").onclick = () => zoomTo(shown() / 1.25);
  document.getElementById("zoom-in").onclick = () => zoomTo(shown() * 1.25);
  document.getElementById("zoom-reset").onclick = () => zoomTo(1);
  document.getElementById("zoom-fit").onclick = () => { state.fit = !state.fit; apply(); };
  window.addEventListener("resize", () => state.fit && apply());
  let drag = null;
  box.addEventListener("pointerdown", event => {
    drag = { x: event.clientX, y: event.clientY, left: box.scrollLeft, top: box.scrollTop };
    box.classList.add("panning");
  });
  window.addEventListener("pointermove", event => {
    if (drag) {
      box.scrollLeft = drag.left - (event.clientX - drag.x);
      box.scrollTop = drag.top - (event.clientY - drag.y);
    }
  });
  window.addEventListener("pointerup", () => { drag = null; box.classList.remove("panning"); });
  box.dataset.leastZoom = least;
  apply();
})();
""".replace("MIN_TEXT_PIXELS", str(MIN_TEXT_PIXELS))
"""Run by the page: zooms the plan by its buttons (``-``, ``100%``, ``+``), never below the zoom
at which its smallest text is MIN_TEXT_PIXELS; ``Fit`` toggles showing the whole plan in its box,
as large as both its width and its height allow, however small that makes its text (and again
when the window is resized); a drag pans it. The browser's own zoom scales it too."""

ZOOM_BAR = (
    '<div id="zoom" role="toolbar" aria-label="Zoom the plan">'
    '<button id="zoom-out" title="Zoom out">-</button>'
    '<button id="zoom-reset" title="Actual size">100%</button>'
    '<button id="zoom-in" title="Zoom in">+</button> '
    '<button id="zoom-fit" aria-pressed="false" title="Show the whole plan in its box">Fit</button> '
    '<span id="zoom-level">100%</span> '
    '<span class="hint">Drag the plan to pan it; point at a stage, vertex or edge for its full name and figures.</span>'
    "</div>"
)

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
    ? `All ${expected.vertices.length} vertices and ${expected.edges.length} edges of the Core DAG are drawn.`
    : `Not drawn, though in the tables below: ${missing.join("; ")}.`;
})();
"""
"""Run by the page: checks that the drawing shows every vertex and edge of the Core DAG (the
picture gives them classes ``vertex`` and ``dag-edge``, their full names, of one line or more,
first in their tooltips) and tells the reader in ``#drawing-check`` that all are drawn or which
are not, the counts in its data attributes."""


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
        _jobTime(metrics),
        _drawingSection(planned, metrics),
        _figuresSection(metrics, edgeKinds(planned)),
        _planTextSection(planned),
        f'<script type="application/json" id="plan-graph">{_planGraphJson(metrics)}</script>',
        f"<script>{CHECK_SCRIPT}</script>",
        f"<script>{ZOOM_SCRIPT}</script>",
        "</body>",
        "</html>",
    ])


def writeReport(work: Plan | Pipeline | DAG, path: str, metrics: JobMetrics) -> str:
    """Write the report of a finished job into ``path`` (see reportHtml), making the directories
    it needs; return the path."""
    return writeText(path, reportHtml(work, metrics), "the job's report")


def busySeconds(metrics: JobMetrics) -> float:
    """Return the seconds a job's vertices were busy, summed over their processors."""
    return sum(vertex.seconds for vertex in metrics.vertices)


def _jobTime(metrics: JobMetrics) -> str:
    busy = f'<span class="busy-seconds">{busySeconds(metrics):.2f}</span>'
    return (
        f'<p id="job-time">The job ran in <span class="seconds">{metrics.seconds:.2f}</span> s; '
        f"its vertices were busy {busy} s in all, summed over their processors "
        "(the rest is Spark's and sparkjet's own work: scheduling, starting workers, moving items).</p>"
    )


def _drawingSection(planned: Plan, metrics: JobMetrics) -> str:
    try:
        svg = planSvg(planned, metrics, noted=False)
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
        ZOOM_BAR,
        f'<div id="drawing">{drawing}</div>',
        f'<p id="drawing-check" {counts}></p>',
        "</section>",
    ])


def _figuresSection(metrics: JobMetrics, kinds: dict[tuple[str, int], list[str]]) -> str:
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
        _headings(["From", "To", "Kind, as the plan labels it"], ["Items", "Shuffled bytes"]),
        *(_edgeRow(edge, kinds.get((edge.sourceName, edge.sourceOrdinal), [])) for edge in metrics.edges),
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


def _edgeRow(edge: EdgeMetrics, kind: list[str]) -> str:
    source, dest = html.escape(edge.sourceName), html.escape(edge.destName)
    shuffled = "not shuffled" if edge.shuffleBytes is None else f"{edge.shuffleBytes:,}"
    return (
        f'<tr class="edge" data-source="{source}" data-dest="{dest}">'
        f'<td class="source">{source}</td><td class="dest">{dest}</td>'
        f'<td class="kind">{"<br>".join(html.escape(line) for line in kind)}</td>{_number("items", edge.items)}'
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
