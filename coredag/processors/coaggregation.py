"""Co-aggregation: one aggregate operation per input, folded together over ``(ordinal, item)``."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import Inbox, Outbox, Processor, ProcessorContext, callIdleHook
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.model.aggregate_operation import AggregateOperation


@attrs.frozen
class TaggedKey:
    """The key of an ``(ordinal, item)`` pair: the key function of that ordinal's input."""

    keyFns: tuple

    def __call__(self, pair: tuple) -> object:
        ordinal, item = pair
        return self.keyFns[ordinal](item)


@attrs.frozen
class CoAggregation:
    """The parts of an operation whose accumulator is a list, one slot per operation; operation
    i aggregates the items of input ``inputs[i]``, and ``outputFn`` gets the tuple of results."""

    operations: tuple[AggregateOperation, ...]
    inputs: tuple[int, ...]
    outputFn: Callable[[tuple], object] = tuple

    def create(self) -> list:
        """Return one fresh accumulator per operation."""
        return [op.createFn() for op in self.operations]

    def accumulate(self, accumulators: list, pair: tuple) -> list:
        """Accumulate ``(ordinal, item)`` into the slots of the operations of its input."""
        ordinal, item = pair
        for slot, (op, source) in enumerate(zip(self.operations, self.inputs)):
            if source == ordinal:
                accumulators[slot] = op.accumulateFn(accumulators[slot], item)
        return accumulators

    def combine(self, left: list, right: list) -> list:
        """Combine slot by slot into ``left``."""
        for slot, op in enumerate(self.operations):
            left[slot] = op.combineFn(left[slot], right[slot])
        return left

    def deduct(self, left: list, right: list) -> list:
        """Deduct slot by slot from ``left``."""
        for slot, op in enumerate(self.operations):
            left[slot] = op.deductFn(left[slot], right[slot])
        return left

    def export(self, accumulators: list) -> object:
        """Return ``outputFn`` of each operation's exported result."""
        return self.outputFn(tuple(op.exportFn(acc) for op, acc in zip(self.operations, accumulators)))

    def finish(self, accumulators: list) -> object:
        """Return ``outputFn`` of each operation's finished result."""
        return self.outputFn(tuple(op.finishFn(acc) for op, acc in zip(self.operations, accumulators)))


def coAggregateOperation(
    operations: tuple[AggregateOperation, ...],
    outputFn: Callable[[tuple], object] = tuple,
    inputs: tuple[int, ...] | None = None,
) -> AggregateOperation:
    """Return the operation folding ``(ordinal, item)`` pairs, operation i taking the items of
    input ``inputs[i]`` (by default input i); its result is ``outputFn(results)``."""
    inputs = tuple(range(len(operations))) if inputs is None else tuple(inputs)
    parts = CoAggregation(tuple(operations), inputs, outputFn)
    return AggregateOperation(
        createFn=parts.create,
        accumulateFn=parts.accumulate,
        combineFn=parts.combine if all(op.combineFn is not None for op in operations) else None,
        deductFn=parts.deduct if all(op.deductFn is not None for op in operations) else None,
        exportFn=parts.export,
        finishFn=parts.finish,
        arity=max(inputs, default=0) + 1,
    )


@attrs.frozen
class TaggedInputP(StandardProcessorSupplier):
    """Runs a supplier that takes ``(ordinal, item)`` pairs on a vertex with several inputs."""

    inner: StandardProcessorSupplier
    takesOrdinalPairs = True

    @property
    def acceptsAnyRouting(self) -> bool:
        """As the wrapped supplier."""
        return self.inner.acceptsAnyRouting

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return the inner fast path: the engine already gives it ``(ordinal, item)`` pairs."""
        return self.inner.batchFunction(context)

    def __call__(self) -> "OrdinalTaggingProcessor":
        return OrdinalTaggingProcessor(self.inner())


class OrdinalTaggingProcessor(Processor):
    """Presents the items of every inbound ordinal to a processor as ``(ordinal, item)`` at 0."""

    def __init__(self, inner: Processor) -> None:
        self._inner = inner
        self._tagged = Inbox()

    def init(self, outbox: Outbox, context: ProcessorContext) -> None:
        """Initialize the inner processor."""
        self._inner.init(outbox, context)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Tag the inbox's items (once the previous ones are taken) and process them."""
        if self._tagged.isEmpty():
            inbox.drain(lambda item: self._tagged.add((ordinal, item)))
        self._inner.process(0, self._tagged)

    def tryProcess(self) -> bool:
        """Delegate the idle hook."""
        return callIdleHook(self._inner)

    def completeEdge(self, ordinal: int) -> bool:
        """Finish the tagged items first."""
        return self._drainTagged()

    def complete(self) -> bool:
        """Finish the tagged items, then complete the inner processor."""
        return self._drainTagged() and self._inner.complete()

    def close(self) -> None:
        """Close the inner processor."""
        self._inner.close()

    def _drainTagged(self) -> bool:
        if self._tagged.isEmpty():
            return True
        self._inner.process(0, self._tagged)
        return self._tagged.isEmpty()
