"""Co-aggregation: one aggregate operation per input, folded together over ``(ordinal, item)``."""

import functools
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import Inbox, Processor
from sparkjet.coredag.api.processor_wrapper import ProcessorWrapper, StandardSupplierWrapper
from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.tags import Tag


@attrs.frozen
class TaggedKey:
    """The key of an ``(ordinal, item)`` pair: the key function of that ordinal's input."""

    keyFns: tuple

    def __call__(self, pair: tuple) -> object:
        ordinal, item = pair
        return self.keyFns[ordinal](item)


@attrs.frozen
class CoAggregation:
    """The parts of an operation whose accumulator is a list, one slot per input: operation i
    aggregates the items of input i, and ``outputFn`` gets the tuple of results."""

    operations: tuple[AggregateOperation, ...]
    outputFn: Callable[[tuple], object] = tuple

    def create(self) -> list:
        """Return one fresh accumulator per operation."""
        return [op.createFn() for op in self.operations]

    def accumulateInput(self, ordinal: int, accumulators: list, item: object) -> list:
        """Accumulate an item of input ``ordinal`` into its slot."""
        accumulators[ordinal] = self.operations[ordinal].accumulateFn(accumulators[ordinal], item)
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
    operations: tuple[AggregateOperation, ...], outputFn: Callable[[tuple], object] = tuple
) -> AggregateOperation:
    """Return the operation of ``len(operations)`` inputs, operation i aggregating input i's
    items, built as Jet's ``CoAggregateOperationBuilder`` does; its result is ``outputFn(results)``."""
    parts = CoAggregation(tuple(operations), outputFn)
    builder = AggregateOperation.withCreate(parts.create).varArity()
    for ordinal in range(len(operations)):
        builder = builder.andAccumulate(Tag(ordinal), functools.partial(parts.accumulateInput, ordinal))
    return (
        builder.andCombine(parts.combine if all(op.combineFn is not None for op in operations) else None)
        .andDeduct(parts.deduct if all(op.deductFn is not None for op in operations) else None)
        .andExport(parts.export)
        .andFinish(parts.finish)
    )


@attrs.frozen
class TaggedInputP(StandardSupplierWrapper):
    """Runs a supplier that takes ``(ordinal, item)`` pairs on a vertex with several inputs
    (its fast path as it is: the engine already gives it ``(ordinal, item)`` pairs)."""

    inner: StandardProcessorSupplier
    takesOrdinalPairs = True

    def __call__(self) -> "OrdinalTaggingProcessor":
        return OrdinalTaggingProcessor(self.inner())


class OrdinalTaggingProcessor(ProcessorWrapper):
    """Presents the items of every inbound ordinal to a processor as ``(ordinal, item)`` at 0.
    An item leaves the inbox once the wrapped processor took its pair, so the engine sees what
    is left to process, as before a watermark or a snapshot."""

    def __init__(self, wrapped: Processor) -> None:
        super().__init__(wrapped)
        self._tagged = Inbox()

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Tag the inbox's items (those not tagged yet) and process them."""
        if self._tagged.size() != inbox.size():
            self._tagged = Inbox((ordinal, item) for item in inbox)
        before = self._tagged.size()
        self.wrapped.process(0, self._tagged)
        for _ in range(before - self._tagged.size()):
            inbox.remove()

    def completeEdge(self, ordinal: int) -> bool:
        """Nothing to do: the wrapped processor's one input, ordinal 0, completes with the vertex."""
        return True
