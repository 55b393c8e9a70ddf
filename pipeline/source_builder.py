"""Jet's ``SourceBuilder``: a source made of the user's functions, ``createFn`` making its state,
``fillBufferFn`` adding the items available now to a buffer, ``destroyFn`` ending it; a stream's
``createSnapshotFn`` / ``restoreSnapshotFn`` take its state across a restart, and a batch
source's ``fillBufferFn`` closes the buffer after its last item."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.processors.built_batch_source import BuiltBatchP
from sparkjet.pipeline.batch_sources import ProcessorBatchSource
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction
from sparkjet.pipeline.stream_sources import StreamSource


@attrs.frozen
class BuiltStreamSource(StreamSource):
    """A stream source of the user's functions; ``supportsNativeTimestamps`` where each item is
    added with its time (``timestampedStream``)."""

    createFn: Callable
    fillBufferFn: Callable
    destroyFn: Callable | None = None
    createSnapshotFn: Callable | None = attrs.field(default=None, kw_only=True)
    restoreSnapshotFn: Callable | None = attrs.field(default=None, kw_only=True)


@attrs.frozen
class StreamSourceBuilder:
    """Collects a stream source's functions; ``build()`` returns the source."""

    name: str
    createFn: Callable
    timestamped: bool
    fillBuffer: Callable | None = None
    destroy: Callable | None = None
    createSnapshot: Callable | None = None
    restoreSnapshot: Callable | None = None

    def fillBufferFn(self, fillBufferFn: Callable) -> "StreamSourceBuilder":
        """Set the function adding the items available now: ``fillBufferFn(state, buffer)``
        calls ``buffer.add(item)`` (``buffer.add(item, timestamp)`` in a timestamped stream);
        it is called again and again, so it should not block for long."""
        checkFunction(fillBufferFn, self.name, "fillBufferFn")
        return attrs.evolve(self, fillBuffer=fillBufferFn)

    def destroyFn(self, destroyFn: Callable) -> "StreamSourceBuilder":
        """Set the function ending the state when the job ends: ``destroyFn(state)``."""
        checkFunction(destroyFn, self.name, "destroyFn")
        return attrs.evolve(self, destroy=destroyFn)

    def createSnapshotFn(self, createSnapshotFn: Callable) -> "FaultTolerant":
        """Set the function returning the state's snapshot, ``createSnapshotFn(state)``: the
        source saves one with the items it adds (every tenth of a second at most), and a job run
        again after a restart goes on from the last one; then set ``restoreSnapshotFn``."""
        checkFunction(createSnapshotFn, self.name, "createSnapshotFn")
        return FaultTolerant(attrs.evolve(self, createSnapshot=createSnapshotFn))

    def build(self) -> BuiltStreamSource:
        """Return the stream source."""
        if self.fillBuffer is None:
            raise PipelineError(
                f"SourceBuilder '{self.name}' (built at {SourceLocation.ofUserCall()}): fillBufferFn must be set"
            )
        return BuiltStreamSource(
            self.name, self.createFn, self.fillBuffer, self.destroy, supportsNativeTimestamps=self.timestamped,
            createSnapshotFn=self.createSnapshot, restoreSnapshotFn=self.restoreSnapshot,
        )


@attrs.frozen
class FaultTolerant:
    """The step after ``createSnapshotFn`` (Jet's ``SourceBuilder.FaultTolerant``): set
    ``restoreSnapshotFn`` to get the builder back."""

    builder: StreamSourceBuilder

    def restoreSnapshotFn(self, restoreSnapshotFn: Callable) -> StreamSourceBuilder:
        """Set the function taking a snapshot back, ``restoreSnapshotFn(state, snapshots)``: when a
        job runs again, ``state`` is new from ``createFn`` and ``snapshots`` the list of what
        ``createSnapshotFn`` returned last (one item: the source runs in one thread); then
        ``fillBufferFn`` must go on from the item after those it had added."""
        checkFunction(restoreSnapshotFn, self.builder.name, "restoreSnapshotFn")
        return attrs.evolve(self.builder, restoreSnapshot=restoreSnapshotFn)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise PipelineError(
            f"SourceBuilder '{self.builder.name}' (at {SourceLocation.ofUserCall()}): createSnapshotFn must be "
            f"followed by restoreSnapshotFn, as in Jet; call .restoreSnapshotFn(fn) before .{name}"
        )


@attrs.frozen
class BatchSourceBuilder:
    """Collects a batch source's functions; ``build()`` returns the source."""

    name: str
    createFn: Callable
    fillBuffer: Callable | None = None
    destroy: Callable | None = None
    localParallelism: int | None = None
    """Set by ``distributed``: the processors each running the functions."""

    def fillBufferFn(self, fillBufferFn: Callable) -> "BatchSourceBuilder":
        """Set the function adding the next items, ``fillBufferFn(state, buffer)``: it calls
        ``buffer.add(item)``, and ``buffer.close()`` once it added the last; it is called
        again until then."""
        checkFunction(fillBufferFn, self.name, "fillBufferFn")
        return attrs.evolve(self, fillBuffer=fillBufferFn)

    def destroyFn(self, destroyFn: Callable) -> "BatchSourceBuilder":
        """Set the function ending the state once the items end or the job fails: ``destroyFn(state)``."""
        checkFunction(destroyFn, self.name, "destroyFn")
        return attrs.evolve(self, destroy=destroyFn)

    def distributed(self, preferredLocalParallelism: int) -> "BatchSourceBuilder":
        """Run the functions in ``preferredLocalParallelism`` processors, each with its own
        state from ``createFn(context)`` (``context.globalProcessorIndex`` tells them apart);
        without it, one processor runs them, as in Jet."""
        if isinstance(preferredLocalParallelism, bool) or not isinstance(preferredLocalParallelism, int) or (
            preferredLocalParallelism <= 0
        ):
            raise PipelineError(
                f"SourceBuilder '{self.name}' (at {SourceLocation.ofUserCall()}): distributed() takes a positive "
                f"number of processors, got {preferredLocalParallelism!r}"
            )
        return attrs.evolve(self, localParallelism=preferredLocalParallelism)

    def build(self):
        """Return the batch source (a ``Sources.batchFromProcessor`` source, as Jet's)."""
        if self.fillBuffer is None:
            raise PipelineError(
                f"SourceBuilder '{self.name}' (built at {SourceLocation.ofUserCall()}): fillBufferFn must be set"
            )
        supplier = BuiltBatchP(self.name, self.createFn, self.fillBuffer, self.destroy, self.localParallelism is not None)
        return ProcessorBatchSource(self.name, supplier, preferredLocalParallelism=self.localParallelism or 1)


class SourceBuilder:
    """Sources of your own functions (Jet's ``SourceBuilder``). A stream source's functions run
    on the driver, in one thread, and the items they add reach the job's processors through
    Spark; a batch source's run in its processors, on the workers."""

    @staticmethod
    def batch(name: str, createFn: Callable) -> BatchSourceBuilder:
        """Start a batch source named ``name`` whose state ``createFn(context)`` makes."""
        checkFunction(createFn, name, "createFn")
        return BatchSourceBuilder(name, createFn)

    @staticmethod
    def stream(name: str, createFn: Callable) -> StreamSourceBuilder:
        """Start a stream source named ``name`` whose state ``createFn(context)`` makes."""
        checkFunction(createFn, name, "createFn")
        return StreamSourceBuilder(name, createFn, timestamped=False)

    @staticmethod
    def timestampedStream(name: str, createFn: Callable) -> StreamSourceBuilder:
        """Start a stream source whose items come with their event time
        (``buffer.add(item, timestamp)``), read with ``withNativeTimestamps(allowedLag)``."""
        checkFunction(createFn, name, "createFn")
        return StreamSourceBuilder(name, createFn, timestamped=True)
