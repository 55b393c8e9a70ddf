"""What a job did: items in and out per vertex and per fused stage, busy time, shuffle bytes.

Each Spark task counts per batch into a TaskMetrics and adds it, once, to the job's
accumulator; JobMetrics is the frozen summary the driver builds from the total.
"""

import html
import itertools
import operator
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

import attrs

from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge
from sparkjet.coredag.model.measurement import Measurement, MetricNames, MetricTags

_END = object()


class CountsAccumulatorParam:
    """A Spark accumulator parameter adding Counters key by key."""

    def zero(self, value: Counter) -> Counter:
        """Return an empty Counter."""
        return Counter()

    def addInPlace(self, total: Counter, more: Counter) -> Counter:
        """Add ``more`` into ``total`` and return it."""
        total.update(more)
        return total


class TaskMetrics:
    """The counts of one Spark task, made per batch, never per item."""

    def __init__(self) -> None:
        self._counts: Counter = Counter()
        self._stageCounts: list[tuple[str, tuple[str, ...], list[int]]] = []

    def countedInput(self, vertexName: str, batches: Iterable[list]) -> Iterator[list]:
        """Pass ``batches`` on, counting the items into the vertex and the time spent upstream."""
        return self._counted(batches, ("itemsIn", vertexName), ("upstreamSeconds", vertexName))

    def countedOutput(self, vertexName: str, batches: Iterable[list]) -> Iterator[list]:
        """Pass ``batches`` on, counting the items out of the vertex and its busy time."""
        self._counts["processors", vertexName] += 1
        return self._counted(batches, ("itemsOut", vertexName), ("seconds", vertexName))

    def _counted(self, batches: Iterable[list], itemsKey: tuple, secondsKey: tuple) -> Iterator[list]:
        counts, clock, iterator = self._counts, time.perf_counter, iter(batches)
        while True:
            start = clock()
            batch = next(iterator, _END)
            counts[secondsKey] += clock() - start
            if batch is _END:
                return
            counts[itemsKey] += len(batch)
            yield batch

    def countLateEvents(self, vertexName: str, events: int) -> None:
        """Count the events a processor of the vertex dropped as late."""
        if events:
            self._counts["lateEventsDropped", vertexName] += events

    def stageCounts(self, vertexName: str, stageNames: tuple[str, ...]) -> list[int]:
        """Return the list a fused vertex fills: items into its first stage, then out of each."""
        counts = [0] * (len(stageNames) + 1)
        self._stageCounts.append((vertexName, stageNames, counts))
        return counts

    def discount(self, vertexName: str, markersIn: int, markersOut: int) -> None:
        """Take back the watermark markers counted among the vertex's items in and out."""
        for key, markers in ((("itemsIn", vertexName), markersIn), (("itemsOut", vertexName), markersOut)):
            if markers:
                self._counts[key] -= markers

    def countShuffled(self, sourceName: str, sourceOrdinal: int, items: int, pickledBytes: int) -> None:
        """Count a packet of ``items`` sent across the shuffle of the edge leaving vertex
        ``sourceName`` at ``sourceOrdinal``."""
        self._counts["edgeItems", sourceName, sourceOrdinal] += items
        self._counts["edgeBytes", sourceName, sourceOrdinal] += pickledBytes

    def total(self) -> Counter:
        """Return every count of the task, the fused stages' included; consecutive steps of
        one stage (a stage and its peek) count as that stage."""
        total = Counter(self._counts)
        for vertexName, stageNames, counts in self._stageCounts:
            numbered = itertools.groupby(enumerate(stageNames), key=operator.itemgetter(1))
            for stageName, steps in numbered:
                numbers = [number for number, _ in steps]
                total["stageIn", vertexName, stageName] += counts[numbers[0]]
                total["stageOut", vertexName, stageName] += counts[numbers[-1] + 1]
        return total


@attrs.frozen
class StageMetrics:
    """Items into and out of one pipeline stage fused into a vertex."""

    name: str
    itemsIn: int
    itemsOut: int


@attrs.frozen
class VertexMetrics:
    """What one vertex did, summed over its processors; ``seconds`` excludes upstream time."""

    name: str
    processors: int
    itemsIn: int
    itemsOut: int
    seconds: float
    stages: tuple[StageMetrics, ...]
    """The pipeline stages fused into the vertex, in order; empty unless there are several."""
    watermark: int | None = None
    """In a stream job, the watermark every processor of the vertex has reached (observed, or,
    where none comes in, emitted); None before the first."""
    lateEventsDropped: int = 0
    """Events behind the watermark its processors dropped."""


@attrs.frozen
class MicroBatchMetrics:
    """One run of a stream job's DAG: Spark's micro-batch ``batchId`` (-1: the run completing a
    finite stream), how long it took and how many items its stream sources read."""

    batchId: int
    seconds: float
    itemsRead: int


@attrs.frozen
class MicroBatchSummary:
    """The micro-batches a stream job ran before those its figures keep one by one: how many,
    their seconds in all, the longest, and the items their sources read."""

    count: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    itemsRead: int = 0

    def including(self, batch: MicroBatchMetrics) -> "MicroBatchSummary":
        """Return this summary with ``batch`` added."""
        return MicroBatchSummary(
            self.count + 1, self.seconds + batch.seconds, max(self.longest, batch.seconds), self.itemsRead + batch.itemsRead
        )


@attrs.frozen
class EdgeMetrics:
    """Items through one edge; ``shuffleBytes`` is None where the items stayed in their task."""

    sourceName: str
    destName: str
    items: int
    shuffleBytes: int | None
    sourceOrdinal: int = 0


@attrs.frozen
class SnapshotMetrics:
    """A stream job's snapshot: the micro-batch it ends (``snapshotId``), when it was taken (wall
    clock, ms), its size in bytes and how long saving it took."""

    snapshotId: int
    takenAtMillis: int
    bytes: int
    seconds: float

    def describe(self) -> str:
        """Return ``snapshot 12 at 11:40:03, 1,234 bytes in 0.01 s``."""
        taken = time.strftime("%H:%M:%S", time.localtime(self.takenAtMillis / 1000))
        return f"snapshot {self.snapshotId} at {taken}, {counted(self.bytes, 'byte')} in {self.seconds:.2f} s"


@attrs.frozen
class JobMetrics:
    """The figures of a job, per vertex (and fused stage) and per edge; a stream job's also per
    micro-batch, and so far while it runs."""

    jobName: str
    seconds: float
    vertices: tuple[VertexMetrics, ...]
    edges: tuple[EdgeMetrics, ...]
    microBatches: tuple[MicroBatchMetrics, ...] = ()
    """A stream job's latest micro-batches, one by one (those before: ``earlierMicroBatches``)."""
    lastSnapshot: SnapshotMetrics | None = None
    """A stream job with a processing guarantee: the last snapshot it saved."""
    earlierMicroBatches: MicroBatchSummary = MicroBatchSummary()
    """A long-running stream job's micro-batches before its latest, summed up."""
    measurements: tuple[Measurement, ...] = ()
    """The same figures under Jet's metric names, tagged by vertex (and processor, ordinal)."""

    @classmethod
    def of(
        cls, jobName: str, seconds: float, dag: DAG, counts: Counter, shuffled: set,
        watermarks: Mapping[str, int] = MappingProxyType({}), microBatches: tuple[MicroBatchMetrics, ...] = (),
        lastSnapshot: SnapshotMetrics | None = None, earlierMicroBatches: MicroBatchSummary = MicroBatchSummary(),
        processorWatermarks: Mapping[str, Mapping[int, tuple[int, int]]] = MappingProxyType({}),
    ) -> "JobMetrics":
        """Summarize the accumulated ``counts`` of ``dag``; ``shuffled`` holds the (source,
        source ordinal) pairs of edges that crossed a shuffle; a stream job gives the watermark
        each vertex reached, each processor's (observed, last forwarded) watermarks and its
        micro-batches."""
        vertices = tuple(_vertexMetrics(vertex.name, counts, watermarks.get(vertex.name)) for vertex in dag)
        itemsIn = {vertex.name: vertex.itemsIn for vertex in vertices}
        edges = tuple(_edgeMetrics(e, counts, shuffled, itemsIn) for e in dag.edges())
        measured = Measured(int(time.time() * 1000))
        measurements = (
            *(m for vertex in vertices for m in measured.ofVertex(vertex)),
            *(m for edge in edges for m in measured.ofEdge(edge)),
            *(
                m
                for name, byIndex in processorWatermarks.items()
                for index, (observed, forwarded) in sorted(byIndex.items())
                for m in measured.ofWatermarks(name, index, observed, forwarded, len(dag.getInboundEdges(name)))
            ),
        )
        return cls(jobName, seconds, vertices, edges, microBatches, lastSnapshot, earlierMicroBatches, measurements)

    def metrics(self) -> set[str]:
        """Return the names of the metrics measured, as Jet's ``JobMetrics.metrics()``."""
        return {measurement.name for measurement in self.measurements}

    def get(self, metricName: str) -> list[Measurement]:
        """Return the measurements of ``metricName`` (a ``MetricNames`` constant), as Jet's
        ``JobMetrics.get``: none where the job measured no such metric."""
        return [measurement for measurement in self.measurements if measurement.name == metricName]

    def filter(self, tagName: str, tagValue: str) -> "JobMetrics":
        """Return these figures with only the measurements whose tag ``tagName`` is ``tagValue``."""
        kept = tuple(measurement for measurement in self.measurements if measurement.tag(tagName) == tagValue)
        return attrs.evolve(self, measurements=kept)

    @property
    def microBatchCount(self) -> int:
        """Return how many micro-batches the stream job ran."""
        return self.earlierMicroBatches.count + len(self.microBatches)

    @property
    def itemsReadInMicroBatches(self) -> int:
        """Return how many items the stream job's sources read over all its micro-batches."""
        return self.earlierMicroBatches.itemsRead + sum(batch.itemsRead for batch in self.microBatches)

    def vertex(self, name: str) -> VertexMetrics:
        """Return the figures of the vertex ``name``."""
        return _named(self.vertices, name, "vertex")

    def stage(self, name: str) -> StageMetrics:
        """Return the figures of the stage ``name``: a fused stage, or a vertex's only one."""
        for vertex in self.vertices:
            for stage in vertex.stages:
                if stage.name == name:
                    return stage
        vertex = self.vertex(name)
        return StageMetrics(name, vertex.itemsIn, vertex.itemsOut)

    def edge(self, sourceName: str, destName: str, sourceOrdinal: int | None = None) -> EdgeMetrics:
        """Return the figures of the edge from ``sourceName`` to ``destName``; where several
        join the two, of the one leaving at ``sourceOrdinal``."""
        found = [
            edge for edge in self.edges
            if (edge.sourceName, edge.destName) == (sourceName, destName)
            and sourceOrdinal in (None, edge.sourceOrdinal)
        ]
        if len(found) > 1:
            raise KeyError(
                f"Job '{self.jobName}' has {len(found)} edges {sourceName} -> {destName}: "
                "give the sourceOrdinal of the one you mean"
            )
        if not found:
            raise KeyError(f"Job '{self.jobName}' has no edge {sourceName} -> {destName}")
        return found[0]

    def format(self) -> str:
        """Return the figures as a table of text, one vertex (and fused stage) per line."""
        lines = [f"Job '{self.jobName}': {self.seconds:.2f} s"]
        if self.microBatches:
            lines.append(self.microBatchLine())
        if self.lastSnapshot is not None:
            lines.append(f"Last {self.lastSnapshot.describe()}")
        lines += ["", "Vertices"]
        for vertex in self.vertices:
            lines.append(
                f"  {vertex.name}: {vertex.itemsIn:,} in, {vertex.itemsOut:,} out, "
                f"{vertex.seconds:.2f} s busy in {counted(vertex.processors, 'processor')}"
                + _eventTimeFigures(vertex)
            )
            lines += [f"    {s.name}: {s.itemsIn:,} in, {s.itemsOut:,} out" for s in vertex.stages]
        lines += ["", "Edges"]
        for edge in self.edges:
            through = "not shuffled" if edge.shuffleBytes is None else f"{edge.shuffleBytes:,} bytes shuffled"
            lines.append(f"  {edge.sourceName} -> {edge.destName}: {counted(edge.items, 'item')}, {through}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Return the notebook's display of the figures: tables of vertices and edges (see figuresHtml)."""
        return figuresHtml(self)

    def microBatchLine(self) -> str:
        """Return a stream job's micro-batches in a line: how many, items read, their durations."""
        earlier = self.earlierMicroBatches
        seconds = [batch.seconds for batch in self.microBatches]
        count = self.microBatchCount
        noun = "micro-batch" if count == 1 else "micro-batches"
        return (
            f"{count:,} {noun}, {counted(self.itemsReadInMicroBatches, 'item')} read; "
            f"{(earlier.seconds + sum(seconds)) / count:.2f} s each on average, the longest "
            f"{max(seconds + [earlier.longest]):.2f} s, the last {seconds[-1]:.2f} s"
        )


def figuresHtml(metrics: JobMetrics) -> str:
    """Return a job's figures as HTML: its time (a stream job's micro-batches, last snapshot),
    a table of vertices with their fused stages, and one of edges."""
    lines = [f"Job '{metrics.jobName}': {metrics.seconds:.2f} s"]
    lines += [metrics.microBatchLine()] if metrics.microBatches else []
    lines += [f"Last {metrics.lastSnapshot.describe()}"] if metrics.lastSnapshot is not None else []
    eventTime = any(v.watermark is not None or v.lateEventsDropped for v in metrics.vertices)
    vertexRows = [
        row
        for v in metrics.vertices
        for row in [
            ("vertex", v.name, v.itemsIn, v.itemsOut, v.seconds, v.processors)
            + ((_eventTimeFigures(v).removeprefix(", "),) if eventTime else ()),
            *(("stage", f"\u00a0\u00a0\u00a0{s.name}", s.itemsIn, s.itemsOut, "", "") for s in v.stages),
        ]
    ]
    edgeRows = [
        ("edge", f"{e.sourceName} \u2192 {e.destName}", e.items, "not shuffled" if e.shuffleBytes is None else e.shuffleBytes)
        for e in metrics.edges
    ]
    return "".join([
        *(f"<p>{html.escape(line)}</p>" for line in lines),
        _htmlTable(
            ["Vertex and its fused stages", "Items in", "Items out", "Busy (s)", "Processors"]
            + (["Event time"] if eventTime else []),
            vertexRows,
        ),
        _htmlTable(["Edge", "Items", "Shuffled bytes"], edgeRows),
    ])


def _htmlTable(headings: list[str], rows: list[tuple]) -> str:
    """Return a table of ``rows``, each its class then its cells; numbers right-aligned."""
    head = "".join(f"<th>{html.escape(heading)}</th>" for heading in headings)
    body = "".join(
        f'<tr class="{kind}">' + "".join(_htmlCell(cell) for cell in cells) + "</tr>" for kind, *cells in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _htmlCell(value: object) -> str:
    """Return a cell: a number right-aligned (a float to two decimals), anything else as text."""
    if isinstance(value, int | float):
        text = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        return f'<td style="text-align: right">{text}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _eventTimeFigures(vertex: VertexMetrics) -> str:
    """Return ``, watermark 12,000, 3 late events dropped`` where a vertex has them."""
    figures = "" if vertex.watermark is None else f", watermark {vertex.watermark:,}"
    if vertex.lateEventsDropped:
        figures += f", {counted(vertex.lateEventsDropped, 'late event')} dropped"
    return figures


def _edgeMetrics(edge: Edge, counts: Counter, shuffled: set, itemsIn: dict[str, int]) -> EdgeMetrics:
    """A shuffled edge counted its packets; any other is its destination's only input."""
    source, ordinal = edge.sourceName, edge.sourceOrdinal
    if (source, ordinal) in shuffled:
        items, shuffleBytes = counts["edgeItems", source, ordinal], counts["edgeBytes", source, ordinal]
        return EdgeMetrics(source, edge.destName, items, shuffleBytes, ordinal)
    return EdgeMetrics(source, edge.destName, itemsIn[edge.destName], None, ordinal)


def _vertexMetrics(name: str, counts: Counter, watermark: int | None = None) -> VertexMetrics:
    stages = tuple(
        StageMetrics(key[2], counts[key], counts["stageOut", name, key[2]])
        for key in counts
        if key[0] == "stageIn" and key[1] == name
    )
    if len(stages) == 1:
        stages = ()
    return VertexMetrics(
        name=name,
        processors=counts["processors", name],
        itemsIn=counts["itemsIn", name],
        itemsOut=counts["itemsOut", name],
        seconds=max(0.0, counts["seconds", name] - counts["upstreamSeconds", name]),
        stages=stages,
        watermark=watermark,
        lateEventsDropped=counts["lateEventsDropped", name],
    )


@attrs.frozen
class Measured:
    """Makes the measurements, under Jet's names, of figures taken at ``timestampMillis``."""

    timestampMillis: int

    def ofVertex(self, vertex: VertexMetrics) -> list[Measurement]:
        """Items received and emitted and late events dropped by the vertex's processors together."""
        tags = {MetricTags.VERTEX: vertex.name}
        return [
            Measurement(MetricNames.RECEIVED_COUNT, vertex.itemsIn, self.timestampMillis, tags),
            Measurement(MetricNames.EMITTED_COUNT, vertex.itemsOut, self.timestampMillis, tags),
            Measurement(MetricNames.LATE_EVENTS_DROPPED, vertex.lateEventsDropped, self.timestampMillis, tags),
        ]

    def ofEdge(self, edge: EdgeMetrics) -> list[Measurement]:
        """Items and bytes a shuffled edge carried, tagged by its source vertex and ordinal."""
        if edge.shuffleBytes is None:
            return []
        tags = {MetricTags.VERTEX: edge.sourceName, MetricTags.ORDINAL: str(edge.sourceOrdinal)}
        return [
            Measurement(MetricNames.DISTRIBUTED_ITEMS_OUT, edge.items, self.timestampMillis, tags),
            Measurement(MetricNames.DISTRIBUTED_BYTES_OUT, edge.shuffleBytes, self.timestampMillis, tags),
        ]

    def ofWatermarks(self, vertex: str, index: int, observed: int, forwarded: int, inputs: int) -> list[Measurement]:
        """A processor's watermarks: the one it observed over all its inputs (per input too, where
        it has one), the last it emitted; ``LONG_MIN`` before the first, as in Jet."""
        tags = {MetricTags.VERTEX: vertex, MetricTags.PROCESSOR: str(index)}
        measurements = [
            Measurement(MetricNames.TOP_OBSERVED_WM, observed, self.timestampMillis, tags),
            Measurement(MetricNames.LAST_FORWARDED_WM, forwarded, self.timestampMillis, tags),
        ]
        if inputs == 1:
            ordinalTags = {**tags, MetricTags.ORDINAL: "0"}
            measurements.append(Measurement(MetricNames.COALESCED_WM, observed, self.timestampMillis, ordinalTags))
        return measurements


def _named(values: tuple, name: str, kind: str):
    for value in values:
        if value.name == name:
            return value
    raise KeyError(f"No {kind} named '{name}'; there are: {', '.join(v.name for v in values)}")


def counted(count: int, noun: str) -> str:
    """Return ``1,234 items`` or ``1 item``: the count and the noun, plural unless one."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
