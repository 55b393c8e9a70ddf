"""Functions users pass to stages, and the check that Spark can ship them."""

import cloudpickle

from coredag.aggregate_operation import identity

from pipeline.errors import PipelineError


def wholeItem():
    """Return the identity function: use the whole item as the grouping key."""
    return identity


def checkPicklable(value: object, stageName: str, parameter: str) -> None:
    """Raise if ``value`` cannot be pickled, naming the stage and the parameter."""
    try:
        cloudpickle.dumps(value)
    except Exception as cause:
        raise PipelineError(
            f"Stage '{stageName}': the {parameter} cannot be pickled, so Spark cannot send it "
            f"to its workers ({type(cause).__name__}: {cause}). Do not capture open files, "
            "locks, connections or other process-bound objects in it; create them inside "
            "the function instead"
        ) from cause
