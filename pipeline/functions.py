"""Functions users pass to stages, and the checks that Spark can ship and call them."""

import inspect
import io
import pickle
import sys
from collections.abc import Callable

import cloudpickle

from sparkjet.coredag.errors import SourceLocation, shorten
from sparkjet.coredag.model.aggregate_operation import AggregateOperation, identity
from sparkjet.pipeline.errors import PipelineError


def wholeItem():
    """Return the identity function: use the whole item as the grouping key."""
    return identity


def checkFunction(fn: Callable, stageName: str, parameter: str) -> None:
    """Raise if ``fn`` is not a function Spark can ship, naming the stage, the parameter and
    the line of the user's call."""
    if not callable(fn):
        raise PipelineError(
            f"Stage '{stageName}': {_given(parameter)} must be a function, got "
            f"{type(fn).__name__} {shorten(fn)}"
        )
    checkPicklable(fn, stageName, parameter)


def acceptsOneArgument(fn: Callable) -> bool:
    """Return whether ``fn(item)`` is a valid call (True where Python cannot tell)."""
    try:
        inspect.signature(fn).bind(None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def checkAggregateOperation(aggrOp: AggregateOperation, stageName: str, arity: int = 1) -> None:
    """Raise if ``aggrOp`` is not an AggregateOperation of ``arity`` inputs Spark can ship."""
    if not isinstance(aggrOp, AggregateOperation):
        raise PipelineError(
            f"Stage '{stageName}': {_given('aggrOp')} must be an AggregateOperation (see "
            f"AggregateOperations), got {type(aggrOp).__name__} {shorten(aggrOp)}"
        )
    if aggrOp.arity != arity:
        raise PipelineError(
            f"Stage '{stageName}': {_given('aggrOp')} aggregates {aggrOp.arity} input(s), but the stage "
            f"has {arity}"
        )
    checkPicklable(aggrOp, stageName, "aggrOp")


def checkPicklable(value: object, stageName: str, parameter: str) -> None:
    """Raise if ``value`` cannot be pickled, naming the stage, the parameter and the line of
    the user's call."""
    try:
        _DefinitionPickler(io.BytesIO(), protocol=cloudpickle.DEFAULT_PROTOCOL).dump(value)
    except Exception as cause:
        raise PipelineError(
            f"Stage '{stageName}': {_given(parameter)} cannot be pickled, so Spark cannot send it "
            f"to its workers ({type(cause).__name__}: {cause}). Do not capture open files, "
            "locks, connections or other process-bound objects in it; create them inside "
            "the function instead"
        ) from cause


_FILES = (io.FileIO, io.BufferedReader, io.BufferedWriter, io.BufferedRandom, io.TextIOWrapper)
"""What ``open()`` returns."""


class _DefinitionPickler(cloudpickle.Pickler):
    """cloudpickle, as Spark ships functions, but refusing every file: it would send a text file
    open for reading as a copy of its contents, read in full at each pickling."""

    def reducer_override(self, obj):
        """Refuse a file other than stdout and stderr; reduce the rest as cloudpickle does."""
        if isinstance(obj, _FILES) and obj is not sys.stdout and obj is not sys.stderr:
            raise pickle.PicklingError(f"cannot pickle the file {getattr(obj, 'name', '')!r}")
        return super().reducer_override(obj)


def _given(parameter: str) -> str:
    here = SourceLocation.ofUserCall()
    return f"the {parameter}" if here is None else f"the {parameter} given at {here}"
