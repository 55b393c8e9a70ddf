"""The functions a Spark Connect session runs with ``mapInArrow``: a chain of vertices over a
partition's Arrow batches of pickled items, ending in their output packets or in the routed
packets of a shuffle, then one row of the figures the task counted and the states its
processors saved (see ``arrow_batches``).
Each processor runs as in the classic engine (``vertex_tasks.runVertex``: init with its
index, the tasklet, complete, close), its index the partition's. No pyspark at import."""

import pickle
from collections.abc import Iterable, Iterator

import attrs

from sparkjet.coredag.model.routing import Route
from sparkjet.coredag.runtime.arrow_batches import Encoder, Figures, decodedBatches, figuresBatch, sparkRowBatches
from sparkjet.coredag.runtime.crossing import Crossing, pickledPacket
from sparkjet.coredag.runtime.files import LocalFiles, UrlFiles
from sparkjet.coredag.runtime.partition_keys import partitionKeys
from sparkjet.coredag.runtime.shuffling import routeItems
from sparkjet.coredag.runtime.tasklet import TaskletSpec
from sparkjet.coredag.runtime.transport import TRANSPORTED, TransportedError
from sparkjet.coredag.runtime.vertex_tasks import StreamStart, runVertex, selectOrdinal

RANK_GROUP_SHIFT, RANK_PROCESSOR_SHIFT = 48, 32
"""A routed packet's rank: its priority group, then its upstream processor, then its place."""


@attrs.frozen
class VertexStep:
    """Runs one processor of a vertex over the batches of the step before (in a stream's
    micro-batch, from where ``stream`` says)."""

    spec: TaskletSpec
    crossing: Crossing
    countsInput: bool
    stream: StreamStart | None = None

    def run(self, figures: Figures, index: int, batches: Iterator[list]) -> Iterator[list]:
        """Yield processor ``index``'s output batches; add its figures, and the state it saved, to ``figures``."""
        end = yield from runVertex(self.spec, self.stream, self.crossing, False, self.countsInput, index, batches)
        figures.add(end.figures)
        if end.state is not None:
            figures.states[self.stream.vertex, index] = end.state


@attrs.frozen
class SelectStep:
    """Keeps the items of one outbound edge of a vertex whose processors fill several buckets."""

    ordinal: int

    def run(self, figures: Figures, index: int, batches: Iterator[list]) -> Iterator[list]:
        """Yield the items of outbound edge ``ordinal``."""
        return selectOrdinal(self.ordinal, batches)


@attrs.frozen
class PacketsOut:
    """Ends a task with its output batches, each pickled as one packet."""

    crossing: Crossing

    def rows(self, figures: Figures, index: int, batches: Iterator[list]) -> Iterator[tuple[int, int, bytes]]:
        """Yield ``(key, rank, packet)`` rows of the batches."""
        for batch in batches:
            if batch:
                yield 0, 0, pickledPacket(batch, self.crossing)


@attrs.frozen
class RoutedOut:
    """Ends a task with its items routed over an edge's downstream processors: each packet
    keyed to reach its target, ranked by its priority ``group`` where its destination sorts;
    the edge's items and bytes counted where it is ``shuffled`` (a coalesced edge's are not,
    as in the classic engine)."""

    route: Route
    ordinal: int | None
    packetSizeLimit: int
    group: int
    shuffled: bool = True

    def rows(self, figures: Figures, index: int, batches: Iterator[list]) -> Iterator[tuple[int, int, bytes]]:
        """Yield ``(key, rank, packet)`` rows of the routed packets."""
        keys = partitionKeys(self.route.downstreamCount)
        rank = (self.group << RANK_GROUP_SHIFT) | (index << RANK_PROCESSOR_SHIFT)
        counted = figures if self.shuffled else Figures()
        routed = routeItems(self.route, self.ordinal, self.packetSizeLimit, counted, index, batches)
        for place, (target, packet) in enumerate(routed):
            yield keys[target], rank | place, packet


@attrs.frozen
class ArrowTask:
    """What ``mapInArrow`` runs over a partition: its packets decoded, ``steps`` in turn, then
    ``output``; the figures of the partition's earlier tasks (where it ``takesFigures``)
    travel on with its own in one row at the end. Its processors' index is the partition's
    (never a union's child: see ``DataFrameBuilder._shuffled``)."""

    steps: tuple
    output: object
    takesFigures: bool = True

    def __call__(self, recordBatches: Iterable) -> Iterator:
        from pyspark import TaskContext  # in the worker only

        index = TaskContext.get().partitionId()
        figures = Figures()
        try:
            batches = decodedBatches(recordBatches, figures if self.takesFigures else Figures())
            for step in self.steps:
                batches = step.run(figures, index, batches)
            encoder = Encoder()
            for key, rank, packet in self.output.rows(figures, index, batches):
                full = encoder.add(key, rank, packet)
                if full is not None:
                    yield full
        except TRANSPORTED as error:
            raise TransportedError(error) from None
        last = encoder.flush()
        if last is not None:
            yield last
        yield figuresBatch(figures)


def sparkRowsPackets(recordBatches: Iterable) -> Iterator:
    """The ``mapInArrow`` function turning a Spark source's rows into packets of Rows."""
    encoder = Encoder()
    for rows in sparkRowBatches(recordBatches):
        full = encoder.add(0, 0, pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
        if full is not None:
            yield full
    last = encoder.flush()
    if last is not None:
        yield last


@attrs.frozen
class FilesOut:
    """Ends a task of a files sink: its lines written as part file ``index`` into the staging
    directory of the job's claimed output directory, ``staging`` in ``files`` (a local
    directory, or a URL's through fsspec), which exists (a task never creates it, so one
    still running after the job aborted writes nothing)."""

    files: LocalFiles | UrlFiles
    staging: str

    def rows(self, figures: Figures, index: int, batches: Iterator[list]) -> Iterator[tuple[int, int, bytes]]:
        """Write the lines; yield no row."""
        with self.files.writer(f"{self.staging}/part-{index:05d}") as part:
            for batch in batches:
                part.write(b"".join(_line(item) for item in batch))
        return iter(())


def _line(item: object) -> bytes:
    """Return ``item`` as a line of a text file, as PySpark's ``saveAsTextFile`` writes it."""
    text = item if isinstance(item, bytes | str) else str(item)
    return (text.encode("utf-8") if isinstance(text, str) else text) + b"\n"
