"""A batch source built from the user's functions (Jet's ``SourceBuilder.batch``): a processor
calls ``fillBufferFn`` until the buffer is closed, emitting what it added."""

from collections.abc import Callable, Iterator

import attrs

from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.errors import JobError, UserFunctionError, shorten
from sparkjet.coredag.processors.sources import TraverserSourceProcessor


class BatchSourceBuffer:
    """What a batch source's ``fillBufferFn`` adds its items to, and closes once it added the
    last (Jet's ``SourceBuilder.SourceBuffer``)."""

    def __init__(self, sourceName: str) -> None:
        self._sourceName = sourceName
        self._items: list = []
        self.closed = False

    def add(self, item: object) -> None:
        """Add ``item``; refused once the buffer is closed."""
        if self.closed:
            raise JobError(
                f"SourceBuilder.batch('{self._sourceName}'): fillBufferFn added {shorten(item)} after it closed "
                "the buffer: close() comes after the last item"
            )
        self._items.append(item)

    def size(self) -> int:
        """Return how many items were added since the buffer was last emptied."""
        return len(self._items)

    def close(self) -> None:
        """Say the source has added its last item."""
        self.closed = True

    def drain(self) -> list:
        """Return the items added and empty the buffer: the engine's side."""
        items, self._items = self._items, []
        return items


@attrs.frozen
class BuiltBatchP:
    """Jet's ``SourceBuilder.batch``: a processor makes its state with ``createFn(context)``
    and calls ``fillBufferFn(state, buffer)`` until the buffer is closed, emitting what was
    added, then ``destroyFn(state)``. One processor of the vertex does it, unless ``distributed``:
    then each does, with its own context."""

    name: str
    createFn: Callable[[ProcessorContext], object]
    fillBufferFn: Callable[[object, BatchSourceBuffer], None]
    destroyFn: Callable[[object], None] | None = None
    distributed: bool = False

    def items(self, context: ProcessorContext) -> Iterator:
        """Yield the items the source adds in processor ``context`` (none but in processor 0,
        unless ``distributed``); ``destroyFn`` runs once they end or the generator is closed."""
        if not self.distributed and context.globalProcessorIndex != 0:
            return
        state = self._called("createFn", lambda: self.createFn(context))
        try:
            buffer = BatchSourceBuffer(self.name)
            while not buffer.closed:
                self._called("fillBufferFn", lambda: self.fillBufferFn(state, buffer))
                yield from buffer.drain()
        finally:
            if self.destroyFn is not None:
                self._called("destroyFn", lambda: self.destroyFn(state))

    def _called(self, function: str, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as cause:
            raise UserFunctionError(self.name, f"(in {function})", cause) from cause

    def __call__(self) -> "BuiltBatchSourceProcessor":
        return BuiltBatchSourceProcessor(self.items)


class BuiltBatchSourceProcessor(TraverserSourceProcessor):
    """A built batch source's processor: not cooperative (``fillBufferFn`` may block, as in Jet),
    and ``destroyFn`` runs when it closes, whether its items ended or the job failed."""

    def isCooperative(self) -> bool:
        """Return False: the user's functions may block."""
        return False

    def close(self) -> None:
        """End the source's items, calling ``destroyFn`` if the source started."""
        if self._traverser is not None:
            self._traverser.close()
