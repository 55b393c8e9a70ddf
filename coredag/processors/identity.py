"""The identity processor: emits every item it receives, from any ordinal (merge, collect)."""

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier


@attrs.frozen
class IdentityP(StandardProcessorSupplier):
    """Passes items through unchanged."""

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the identity over batches."""
        return iter

    def __call__(self) -> "ForwardingProcessor":
        return ForwardingProcessor()


class ForwardingProcessor(AbstractProcessor):
    """Emits each item of any inbound ordinal to every outbound bucket."""

    def tryProcess(self, ordinal: int | None = None, item=None) -> bool:
        """Forward ``item``; with no arguments, the idle hook."""
        return True if ordinal is None else self.tryEmit(item)
