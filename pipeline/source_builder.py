"""Jet's ``SourceBuilder`` for streams: a source made of the user's functions, ``createFn``
making its state, ``fillBufferFn`` adding the items available now to a buffer, ``destroyFn``
ending it."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import SourceLocation
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


@attrs.frozen
class StreamSourceBuilder:
    """Collects a stream source's functions; ``build()`` returns the source."""

    name: str
    createFn: Callable
    timestamped: bool
    fillBuffer: Callable | None = None
    destroy: Callable | None = None

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

    def build(self) -> BuiltStreamSource:
        """Return the stream source."""
        if self.fillBuffer is None:
            raise PipelineError(
                f"SourceBuilder '{self.name}' (built at {SourceLocation.ofUserCall()}): fillBufferFn must be set"
            )
        return BuiltStreamSource(
            self.name, self.createFn, self.fillBuffer, self.destroy, supportsNativeTimestamps=self.timestamped
        )


class SourceBuilder:
    """Sources of your own functions (Jet's ``SourceBuilder``). The functions run on the driver,
    in one thread, and the items they add reach the job's processors through Spark."""

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
