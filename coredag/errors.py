"""The errors of the Core DAG layer, and where in the user's code they point."""

import concurrent.futures
import os
import reprlib
import sys
import sysconfig
import traceback as tracebacks
import types

import attrs

_item_repr = reprlib.Repr()
_item_repr.maxstring = _item_repr.maxother = 80
_item_repr.maxlist = _item_repr.maxtuple = _item_repr.maxdict = 6

_NOT_USER_PACKAGES = frozenset(
    {"sparkjet"}
    | {"pyspark", "py4j", "attr", "attrs", "cloudpickle", "graphviz", "toolz", "tlz", "cytoolz"}
)
"""sparkjet's own packages, and those it runs on."""
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
_THIRD_PARTY = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def shorten(item: object) -> str:
    """Return a repr of ``item`` short enough for one line of an error message."""
    return _item_repr.repr(item)


def isUserCode(frame: types.FrameType) -> bool:
    """Whether ``frame`` runs the user's code: not sparkjet's, its dependencies' (Spark's...)
    or Python's own library."""
    module = frame.f_globals.get("__name__") or ""
    if module.partition(".")[0] in _NOT_USER_PACKAGES:
        return False
    path = frame.f_code.co_filename
    isStdlib = path.startswith(_STDLIB) and not any(part in path for part in _THIRD_PARTY)
    return not (isStdlib or path.startswith(("<frozen ", "<attrs generated")))


@attrs.frozen
class SourceLocation:
    """A line of the user's code; prints as ``wordcount.py:12``."""

    path: str
    line: int

    @classmethod
    def ofUserCall(cls) -> "SourceLocation | None":
        """Return the line of the user's code that is calling into sparkjet, if any."""
        frame = sys._getframe(1)
        while frame is not None and not isUserCode(frame):
            frame = frame.f_back
        return None if frame is None else cls(frame.f_code.co_filename, frame.f_lineno)

    def __str__(self) -> str:
        return f"{os.path.basename(self.path)}:{self.line}"


def describeStage(name: str, definedAt: SourceLocation | None) -> str:
    """Return how errors name a stage: ``Stage 'flat-map' (defined at wordcount.py:12)``."""
    return f"Stage '{name}'" if definedAt is None else f"Stage '{name}' (defined at {definedAt})"


class StageName(str):
    """A stage's name as processors report it: equal to the plain name, and knowing where the
    user defined the stage."""

    definedAt: SourceLocation | None

    def __new__(cls, name: str, definedAt: SourceLocation | None = None) -> "StageName":
        stageName = super().__new__(cls, name)
        stageName.definedAt = definedAt
        return stageName

    def __reduce__(self):
        return (StageName, (str(self), self.definedAt))


def userTraceback(error: BaseException) -> str:
    """Return the frames of the user's code that ``error`` went through, as Python prints them."""
    frames = [(frame, line) for frame, line in tracebacks.walk_tb(error.__traceback__) if isUserCode(frame)]
    return "".join(tracebacks.StackSummary.extract(frames).format())


_HINTS = (
    (TypeError, "object is not iterable", "flatMap's function must return an iterable (a list, a generator...)"),
    (TypeError, "unhashable type", "a key must be hashable (a str, a number, a tuple...)"),
    (TypeError, "not supported between instances", "sort needs items, or keys, that compare with each other"),
)


def hintFor(cause: BaseException) -> str:
    """Return what to do about ``cause`` when sparkjet raised it on what a user function returned."""
    frames = list(tracebacks.walk_tb(cause.__traceback__))
    if not frames or isUserCode(frames[-1][0]):
        return ""
    return next((hint for kind, text, hint in _HINTS if isinstance(cause, kind) and text in str(cause)), "")


class SparkjetError(Exception):
    """The base class of every error sparkjet raises about what it was asked to do."""


class PipelineError(SparkjetError, ValueError):
    """A pipeline or an aggregate operation was defined wrongly: names the stage and what to change."""


class DagError(SparkjetError, ValueError):
    """A Core DAG has a wrong shape: its vertices, edges, ordinals or parallelisms."""


class ProcessorContractError(SparkjetError, RuntimeError):
    """A processor broke the contract of Jet's Processor API: an outbox misused, an ordinal it does
    not handle, no progress."""


class OutputError(SparkjetError, ValueError):
    """A job cannot write where it was asked to: the output exists, or cannot be created."""


class SessionError(SparkjetError, RuntimeError):
    """sparkjet cannot run on the Spark session it was asked for."""


class Interrupted(SparkjetError, concurrent.futures.CancelledError, KeyboardInterrupt):
    """Ctrl-C stopped sparkjet: a job was cancelled (and left no output), or a session's start
    interrupted. A CancelledError (caught as such in a notebook) and a KeyboardInterrupt."""


class JobError(SparkjetError, RuntimeError):
    """A job failed while it ran."""


class StoppedByShutdown(JobError):
    """``Jet.shutdown()`` stopped a stream job after its last snapshot, as Jet's graceful member
    shutdown does: its checkpoint is kept, and the job submitted again with the same name (and
    checkpoint location) goes on from there. What ``join()`` raises; its status is NOT_RUNNING."""


class InputError(JobError):
    """A job's input cannot be read: a missing directory, no matching file, an unreadable file or
    charset, a line that does not decode; the message names the file and, where known, the line."""


class UserFunctionError(JobError):
    """A user function raised inside a running job; names the stage, where the user defined
    it, the item and, where it can, what to do.

    ``stageName`` may be a ``StageName``; ``traceback`` (the user's frames and the original
    exception) and ``hint`` are read from ``cause`` unless given, as they are when unpickled.
    """

    def __init__(
        self, stageName: str, itemRepr: str, cause: BaseException,
        traceback: str | None = None, hint: str | None = None,
    ):
        self.stageName = str(stageName)
        self.definedAt: SourceLocation | None = getattr(stageName, "definedAt", None)
        self.itemRepr = itemRepr
        self.traceback = _causeTraceback(cause) if traceback is None else traceback
        self.hint = hintFor(cause) if hint is None else hint
        stage = describeStage(self.stageName, self.definedAt)
        advice = f"; {self.hint}" if self.hint else ""
        super().__init__(f"{stage} failed on item {itemRepr}: {type(cause).__name__}: {cause}{advice}")
        self.__cause__ = cause

    def withCause(self, cause: BaseException) -> "UserFunctionError":
        """Return this error with another cause (one that pickles, say)."""
        return UserFunctionError(*self._arguments(cause))

    def __reduce__(self):
        return (UserFunctionError, self._arguments(self.__cause__))

    def _arguments(self, cause: BaseException) -> tuple:
        stageName = StageName(self.stageName, self.definedAt)
        return (stageName, self.itemRepr, cause, self.traceback, self.hint)


def _causeTraceback(cause: BaseException) -> str:
    frames = userTraceback(cause)
    return frames + "".join(tracebacks.format_exception_only(cause)) if frames else ""


def reducedTraceback(error: BaseException) -> str:
    """Return what a user needs of ``error``'s traceback: for a user function's failure, the
    frames of the user's code in the worker and the original exception; else the user's frames."""
    if isinstance(error, UserFunctionError) and error.traceback:
        return error.traceback
    return userTraceback(error)


class NoSpaceError(JobError):
    """A job's write found its disk full (or its quota used up); names where, the bytes the write
    needed and those free there. What the failed job wrote aside is removed, what it committed stays."""


class WorkerCrashError(JobError):
    """A Spark task's Python worker process died in each of the task's attempts (a crash, an
    exit, the out-of-memory killer); names the stages the task ran and what to check."""


class UnpicklableItemError(JobError):
    """An item a stage emitted cannot be pickled to cross to the next stage; names the stage,
    where the user defined it, the item's type and what to do."""


def describeStages(stageNames: list) -> str:
    """Return how errors name several stages: ``Stage 'a' (defined at x.py:3) and Stage 'b'``."""
    described = [describeStage(str(name), getattr(name, "definedAt", None)) for name in stageNames]
    return " and ".join(described) if len(described) < 3 else ", ".join(described[:-1]) + " and " + described[-1]
