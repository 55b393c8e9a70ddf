"""sparkjet in a notebook (Jupyter): how a pipeline, a plan and a job show inline (a running
job's progress in the cell that waits for it: planner/progress.py). How the pipeline and the plan
show their picture without importing this module: docs/internals/client.md."""

import html

import graphviz

from sparkjet.coredag.errors import SparkjetError
from sparkjet.coredag.model.metrics import JobMetrics, counted
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.planner.job_status import JobStatus
from sparkjet.planner.planning import Plan, plan
from sparkjet.planner.render import notebookSvg
from sparkjet.planner.report import busySeconds

NO_DOT = "graphviz's 'dot' program is not installed, so the plan is not drawn (apt-get install graphviz, brew install graphviz)"

STYLE = (
    "<style>.sparkjet-job table { border-collapse: collapse; margin-bottom: 0.8em; }"
    " .sparkjet-job th, .sparkjet-job td { text-align: left; padding: 0.2em 0.8em; }"
    " .sparkjet-job svg { max-width: 100%; height: auto; }</style>"
)


def planBundle(planned: Plan, metrics: JobMetrics | None = None) -> dict[str, str]:
    """Return the notebook's display of ``planned``: its picture, with ``metrics`` if given, as
    SVG; without graphviz's ``dot``, or for a plan without vertices, text saying why not."""
    try:
        return {"image/svg+xml": notebookSvg(planned, metrics), "text/plain": repr(planned)}
    except graphviz.ExecutableNotFound:
        return {"text/plain": f"{planned!r}: {NO_DOT}"}
    except SparkjetError as error:
        return {"text/plain": f"{planned!r}, not drawn: {error}"}


def pipelineBundle(pipeline: Pipeline) -> dict[str, str]:
    """Return the notebook's display of ``pipeline``: the picture of its plan; while it cannot
    be planned yet (a stage without a sink, say), text saying why."""
    try:
        planned = plan(pipeline)
    except SparkjetError as error:
        return {"text/plain": f"<Pipeline of {counted(len(pipeline.graph().transforms), 'stage')}, not planned: {error}>"}
    return planBundle(planned)


def jobHtml(job) -> str:
    """Return the notebook's display of ``job`` (a Job): a table of its status and figures (its
    progress while it runs, its error if it failed, or where it goes on from if ``Jet.shutdown()``
    stopped it) and the picture of its plan, with its figures once it ran (a stream job's: so far)."""
    status = job.getStatus()
    rows = [("Job", job.name), ("Status", status.value)]
    metrics = None
    if status is JobStatus.COMPLETED or job.isStream:
        metrics = job.metrics()
        rows += summaryRows(metrics)
    elif status is JobStatus.RUNNING:
        from sparkjet.planner.progress import jobText  # imports pyspark, which a running job has

        rows.append(("Progress", jobText(job).partition(": ")[2]))
    if status is JobStatus.FAILED or (job.isStream and status is JobStatus.NOT_RUNNING):
        rows.append(("Error", failureOf(job)))
    table = "".join(f"<tr><th>{name}</th><td>{html.escape(str(value))}</td></tr>" for name, value in rows)
    return f'{STYLE}<div class="sparkjet-job"><table>{table}</table>{svgElement(job.plan, metrics)}</div>'


def summaryRows(metrics: JobMetrics) -> list[tuple[str, str]]:
    """Return a job's figures in a few rows: its time and its vertices' busy time, the items its sources read and its sinks
    got, the bytes shuffled; a stream job's micro-batches and last snapshot."""
    destinations = {edge.destName for edge in metrics.edges}
    sources = {edge.sourceName for edge in metrics.edges}
    rows = [
        ("Time", f"{metrics.seconds:.2f} s, its vertices busy {busySeconds(metrics):.2f} s"),
        ("Items read", f"{sum(v.itemsOut for v in metrics.vertices if v.name not in destinations):,}"),
        ("Items written", f"{sum(v.itemsIn for v in metrics.vertices if v.name not in sources):,}"),
        ("Shuffled", counted(sum(edge.shuffleBytes or 0 for edge in metrics.edges), "byte")),
    ]
    if metrics.microBatches:
        rows.append(("Micro-batches", metrics.microBatchLine()))
    if metrics.lastSnapshot is not None:
        rows.append(("Last snapshot", metrics.lastSnapshot.describe()))
    return rows


def failureOf(job) -> str:
    """Return the error that failed ``job`` (a FAILED job's ``join()`` raises it at once)."""
    try:
        job.join()
    except BaseException as error:  # a cancelled job's is a CancelledError
        return f"{type(error).__name__}: {error}"
    return ""


def svgElement(planned: Plan, metrics: JobMetrics | None) -> str:
    """Return the plan's picture as an ``<svg>`` element to put in HTML, or a note without ``dot``."""
    try:
        svg = notebookSvg(planned, metrics)
    except graphviz.ExecutableNotFound:
        return f"<p>{html.escape(NO_DOT)}</p>"
    return svg[svg.index("<svg"):]


Pipeline.notebookDisplay = pipelineBundle
Plan.notebookDisplay = planBundle
