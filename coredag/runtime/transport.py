"""Carrying a job's own errors from a Spark worker back to the driver, cause included."""

import base64
import re

import cloudpickle

from sparkjet.coredag.errors import SparkjetError, UserFunctionError

_PAYLOAD = re.compile(r"\[sparkjet-error ([A-Za-z0-9+/=]+)\]")
_PYTHON_ERROR_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.*)$", re.MULTILINE)

TRANSPORTED = (SparkjetError,)
"""The errors a worker carries back as themselves: sparkjet's own, of every kind."""


class TransportedError(Exception):
    """Raised in a worker: the readable message, then the pickled original for the driver."""

    def __init__(self, error: Exception) -> None:
        super().__init__(f"{error}\n[sparkjet-error {_encode(error)}]")


def _encode(error: Exception) -> str:
    if isinstance(error, UserFunctionError):
        error = error.withCause(_picklable(error.__cause__))
    return base64.b64encode(cloudpickle.dumps(error)).decode("ascii")


def _picklable(cause: BaseException | None) -> BaseException | None:
    try:
        cloudpickle.loads(cloudpickle.dumps(cause))
        return cause
    except Exception:
        return RuntimeError(f"{type(cause).__name__}: {cause}")


def restoreError(text: str) -> Exception | None:
    """Return the job error a worker transported inside ``text`` (a Spark failure), if any; a
    user function's failure notes the user's frames in the worker, as Python prints no others."""
    match = _PAYLOAD.search(text)
    if match is None:
        return None
    error = cloudpickle.loads(base64.b64decode(match.group(1)))
    if isinstance(error, UserFunctionError) and error.traceback:
        error.add_note(f"Where the user's code raised it, in a Spark worker:\n{error.traceback.rstrip()}")
    return error


def summarizeFailure(text: str) -> str:
    """Return the last ``SomeError: message`` line of a Spark failure, else its first line."""
    matches = _PYTHON_ERROR_LINE.findall(text)
    if matches:
        name, message = matches[-1]
        return f"{name}: {message}"
    return text.strip().splitlines()[0] if text.strip() else "unknown error"
