"""The Pipeline: the one mutable object of the API, an append-only graph of transforms."""

from collections.abc import Callable
from typing import ClassVar

from sparkjet.pipeline.batch_sources import BatchSource
from sparkjet.pipeline.habits import calledAt, habitError, notASink, notASource
from sparkjet.pipeline.naming import makeNamesUnique
from sparkjet.pipeline.pipeline_graph import PipelineGraph
from sparkjet.pipeline.sinks import Sink
from sparkjet.pipeline.stage import BatchStage, SinkStage, Stage, attachFedBy
from sparkjet.pipeline.stream_source_stage import StreamSourceStage
from sparkjet.pipeline.stream_stage import StreamStage, timestamped
from sparkjet.pipeline.stream_sources import StreamSource
from sparkjet.pipeline.transforms import SinkTransform, SourceTransform, StreamSourceTransform, Transform


class Pipeline:
    """A graph of stages; stages are added, renamed or re-parallelized, never removed."""

    notebookDisplay: ClassVar[Callable[["Pipeline"], dict[str, str]] | None] = None
    """How a notebook shows a pipeline: the planner sets it to a function drawing the pipeline's
    plan (planner/notebook.py), which the pipeline cannot draw itself, never importing the planner."""

    def __init__(self) -> None:
        self._transforms: list[Transform] = []
        self._upstream: list[tuple[int, ...]] = []
        self._fusionEnabled = True
        self._preserveOrder = False

    @classmethod
    def create(cls) -> "Pipeline":
        """Return a new, empty pipeline."""
        return cls()

    def readFrom(self, source: BatchSource | StreamSource) -> BatchStage | StreamSourceStage:
        """Add a stage reading ``source`` and return it: a batch stage, or for a stream source a
        stage that must choose its timestamps."""
        if not isinstance(source, (BatchSource, StreamSource)):
            raise notASource(source)
        if isinstance(source, StreamSource):
            return StreamSourceStage(self, self.attach(StreamSourceTransform(source.name, source=source), ()))
        return BatchStage(self, self.attach(SourceTransform(source.name, source=source), ()))

    def writeTo(self, sink: Sink, *stages: BatchStage) -> SinkStage:
        """Send the items of every one of ``stages`` to one ``sink``."""
        if not isinstance(sink, Sink):
            raise notASink(sink, calledAt("Pipeline.writeTo()"))
        return SinkStage(self, attachFedBy(SinkTransform(sink.name, sink), stages))

    def timestamped(self, stage: Stage, timestampFn: Callable, allowedLag: int) -> StreamStage:
        """Return the stream stage after ``stage`` giving its items the event time
        ``timestampFn(item)`` (``addTimestamps``; the stages cannot import the stream stage,
        which builds on them)."""
        return timestamped(stage, timestampFn, allowedLag)

    def attach(self, transform: Transform, upstream: tuple[int, ...]) -> int:
        """Add ``transform`` fed by the transforms at ``upstream``; return its index."""
        self._transforms.append(transform)
        self._upstream.append(upstream)
        return len(self._transforms) - 1

    def __getattr__(self, name: str):
        raise habitError(self, name)

    def isEmpty(self) -> bool:
        """Return True if the pipeline has no stages yet."""
        return not self._transforms

    def transformAt(self, index: int) -> Transform:
        """Return the transform at ``index``."""
        return self._transforms[index]

    def update(self, index: int, change: Callable[[Transform], Transform]) -> None:
        """Replace the transform at ``index`` with ``change(transform)`` (a rename, say)."""
        self._transforms[index] = change(self._transforms[index])

    def setFusionEnabled(self, enabled: bool) -> "Pipeline":
        """Let the planner fuse chains of stateless stages into one vertex (the default), or
        not: each stage then gets its own vertex, easier to follow in a plan. Return self."""
        self._fusionEnabled = enabled
        return self

    def setPreserveOrder(self, value: bool) -> "Pipeline":
        """Keep the order of each source processor's items through the stateless stages (Jet's
        ``setPreserveOrder``): each takes its upstream's parallelism (the lower, where it has its
        own) behind an isolated edge, so no rebalancing reorders them. Return self."""
        self._preserveOrder = value
        return self

    def isPreserveOrder(self) -> bool:
        """Return whether the pipeline keeps the order of items through its stateless stages."""
        return self._preserveOrder

    def graph(self) -> PipelineGraph:
        """Return an immutable snapshot of the pipeline."""
        return PipelineGraph(
            tuple(self._transforms), tuple(self._upstream), self._fusionEnabled, self._preserveOrder
        )

    def toDotString(self) -> str:
        """Return the pipeline graph in Jet's DOT format, with unique stage names."""
        return makeNamesUnique(self.graph()).toDotString()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str] | None:
        """Return the notebook's display of the pipeline (see ``notebookDisplay``); None, for
        the plain repr, when no planner set one."""
        display = Pipeline.notebookDisplay
        return None if display is None else display(self)
