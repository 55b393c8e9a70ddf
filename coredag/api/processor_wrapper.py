"""Wrappers of a processor and of a processor supplier, as Jet's ``ProcessorWrapper``: each
forwards the whole contract to what it wraps, so a wrapper overrides only what it changes and a
method added to the contract (or a capability) is never lost behind one."""

import functools
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.capabilities import Capabilities, DeclaresCapabilities, capabilitiesOf
from sparkjet.coredag.api.processor import Inbox, Outbox, Processor, ProcessorContext, callIdleHook, restoreSnapshot
from sparkjet.coredag.api.saves_changes import SavesChanges
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.model.watermark import Watermark


class ProcessorWrapper(Processor):
    """A processor that runs ``wrapped``, forwarding every method of the processor contract (the
    snapshot's, its two-phase commit's included) and any other attribute asked of it (such as
    ``lateEventsDropped``). Wrapping a processor that ``SavesChanges``, it is one too, saving
    its changes as the wrapped one does."""

    def __new__(cls, wrapped: Processor, *arguments, **keywords) -> "ProcessorWrapper":
        if isinstance(wrapped, SavesChanges) and not issubclass(cls, SavesChanges):
            cls = _savingChanges(cls)
        return super().__new__(cls)

    def __init__(self, wrapped: Processor) -> None:
        self.wrapped = wrapped

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "wrapped":
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def init(self, outbox: Outbox, context: ProcessorContext) -> None:
        """Initialize the wrapped processor with ``wrapOutbox(outbox)``."""
        self.wrapped.init(self.wrapOutbox(outbox), context)

    def wrapOutbox(self, outbox: Outbox) -> Outbox:
        """Return the outbox the wrapped processor emits to: by default the engine's."""
        return outbox

    def isCooperative(self) -> bool:
        """As the wrapped processor."""
        return self.wrapped.isCooperative()

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Delegate."""
        self.wrapped.process(ordinal, inbox)

    def tryProcess(self) -> bool:
        """Delegate the idle hook."""
        return callIdleHook(self.wrapped)

    def tryProcessWatermark(self, watermark: Watermark) -> bool:
        """Delegate."""
        return self.wrapped.tryProcessWatermark(watermark)

    def completeEdge(self, ordinal: int) -> bool:
        """Delegate."""
        return self.wrapped.completeEdge(ordinal)

    def complete(self) -> bool:
        """Delegate."""
        return self.wrapped.complete()

    def saveToSnapshot(self) -> bool:
        """Delegate."""
        return self.wrapped.saveToSnapshot()

    def restoreFromSnapshot(self, inbox: Inbox) -> None:
        """Delegate, in the form the wrapped processor takes."""
        restoreSnapshot(self.wrapped, inbox)

    def finishSnapshotRestore(self) -> bool:
        """Delegate."""
        return self.wrapped.finishSnapshotRestore()

    def snapshotCommitPrepare(self) -> bool:
        """Delegate."""
        return self.wrapped.snapshotCommitPrepare()

    def snapshotCommitFinish(self, success: bool) -> bool:
        """Delegate."""
        return self.wrapped.snapshotCommitFinish(success)

    def close(self) -> None:
        """Delegate."""
        self.wrapped.close()


class _ForwardingChanges(SavesChanges):
    """What a ``ProcessorWrapper`` of a processor that ``SavesChanges`` adds: it forwards both methods."""

    wrapped: SavesChanges

    def saveChangesToSnapshot(self) -> bool:
        """Delegate."""
        return self.wrapped.saveChangesToSnapshot()

    def forgetFromSnapshot(self, key: object) -> None:
        """Delegate."""
        self.wrapped.forgetFromSnapshot(key)


@functools.cache
def _savingChanges(wrapperClass: type) -> type:
    """Return ``wrapperClass`` made one that ``SavesChanges`` (one such class per wrapper class)."""
    names = {"__module__": wrapperClass.__module__, "__qualname__": wrapperClass.__qualname__}
    return type(wrapperClass.__name__, (wrapperClass, _ForwardingChanges), names)


class SupplierWrapper(DeclaresCapabilities):
    """A processor supplier that wraps another, ``inner``: what it does not define itself, it
    has as ``inner`` has, its ``Capabilities`` included."""

    inner: Callable

    def capabilities(self) -> Capabilities:
        """Return the wrapped supplier's capabilities (its default ones where it declares none)."""
        return capabilitiesOf(self.inner)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _forwarded(name: str) -> property:
    """Return a property that is the wrapped supplier's ``name``."""
    return property(lambda self: getattr(self.inner, name), doc=f"As the wrapped supplier's ``{name}``.")


class StandardSupplierWrapper(SupplierWrapper, StandardProcessorSupplier):
    """A ``SupplierWrapper`` of a standard supplier (an attrs class with an ``inner`` field),
    forwarding what ``StandardProcessorSupplier`` itself defines, which ``__getattr__`` never sees."""

    inner: StandardProcessorSupplier

    takesOrdinalPairs = _forwarded("takesOrdinalPairs")
    acceptsAnyRouting = _forwarded("acceptsAnyRouting")
    readsThroughSpark = _forwarded("readsThroughSpark")
    readsStream = _forwarded("readsStream")

    def capabilities(self) -> Capabilities:
        """Return the wrapped supplier's capabilities, taking ``(ordinal, item)`` pairs where this wrapper does."""
        return attrs.evolve(self.inner.capabilities(), takesOrdinalPairs=self.takesOrdinalPairs)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the wrapped supplier's fast path."""
        return self.inner.batchFunction(context)

    def inputBytes(self) -> int | None:
        """As the wrapped supplier."""
        return self.inner.inputBytes()

    def preflight(self) -> "StandardSupplierWrapper":
        """Return this wrapper of the wrapped supplier preflighted."""
        return attrs.evolve(self, inner=self.inner.preflight())


def unwrapped(supplier: Callable) -> Callable:
    """Return the supplier ``supplier``'s wrappers wrap (``supplier`` itself if it wraps none)."""
    while isinstance(supplier, SupplierWrapper):
        supplier = supplier.inner
    return supplier
