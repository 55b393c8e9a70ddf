"""The errors of the Core DAG layer."""

import reprlib

_item_repr = reprlib.Repr()
_item_repr.maxstring = _item_repr.maxother = 80
_item_repr.maxlist = _item_repr.maxtuple = _item_repr.maxdict = 6


def shorten(item: object) -> str:
    """Return a repr of ``item`` short enough for one line of an error message."""
    return _item_repr.repr(item)


class DagError(ValueError):
    """A Core DAG is malformed or cannot run as it is."""


class JobError(RuntimeError):
    """A job failed while it ran."""


class InputError(JobError):
    """A job's input could not be read; the message names the file and line."""


class UserFunctionError(JobError):
    """A user function raised inside a running job; names the stage and the item."""

    def __init__(self, stageName: str, itemRepr: str, cause: BaseException, traceback: str = ""):
        self.stageName = stageName
        self.itemRepr = itemRepr
        self.traceback = traceback
        super().__init__(
            f"Stage '{stageName}' failed on item {itemRepr}: {type(cause).__name__}: {cause}"
        )
        self.__cause__ = cause

    def __reduce__(self):
        return (UserFunctionError, (self.stageName, self.itemRepr, self.__cause__, self.traceback))
