"""AggregateOperation.withCreate(...): Jet's step-by-step builder of an operation."""

import operator

import pytest

from sparkjet.coredag.model.aggregate_operation import AggregateOperationBuilder, identity, increment, zero
from sparkjet.pipeline import AggregateOperation, PipelineError


def test_the_builder_makes_the_same_operation_as_the_constructor():
    built = (
        AggregateOperation.withCreate(zero)
        .andAccumulate(increment)
        .andCombine(operator.add)
        .andDeduct(operator.sub)
        .andExportFinish(identity)
    )
    assert built == AggregateOperation(zero, increment, operator.add, operator.sub)
    assert built.createFn is zero and built.accumulateFn is increment


def test_andExport_then_andFinish_registers_two_functions():
    exporting = AggregateOperation.withCreate(zero).andAccumulate(increment).andExport(str)
    op = exporting.andFinish(identity)
    assert (op.exportFn, op.finishFn) == (str, identity)
    assert (op.combineFn, op.deductFn) == (None, None)


def test_builder_steps_are_values_that_do_not_change():
    accumulating = AggregateOperation.withCreate(zero).andAccumulate(increment)
    combining = accumulating.andCombine(operator.add)
    assert accumulating.combineFn is None
    assert combining.combineFn is operator.add
    assert isinstance(combining, AggregateOperationBuilder.Arity1)
    assert combining.andCombine(None).andExportFinish(identity).combineFn is None


def test_andFinish_without_andExport_is_an_error():
    accumulating = AggregateOperation.withCreate(zero).andAccumulate(increment)
    with pytest.raises(PipelineError) as raised:
        accumulating.andFinish(identity)
    assert str(raised.value) == (
        "The export primitive is not registered. Either add the missing andExport() call or "
        "use andExportFinish() to register the same function as both the export and finish "
        "primitive"
    )


def test_andExportFinish_after_andExport_is_an_error():
    exporting = AggregateOperation.withCreate(zero).andAccumulate(increment).andExport(identity)
    with pytest.raises(PipelineError) as raised:
        exporting.andExportFinish(identity)
    assert str(raised.value) == (
        "The export primitive is already registered. Call andFinish() if you want to register "
        "a separate finish primitive"
    )
