"""Faults, load and cancellation: Python workers that die, many jobs at once, jobs cancelled.

The functions and processors here run in Spark's Python workers. They note what happened as
empty files named ``event-stage-partition-attempt`` in a directory of markers, which the test
reads afterwards: local workers share the driver's file system.
"""

import collections
import os
import pathlib

import attrs
from pyspark import TaskContext

from sparkjet.coredag import AbstractProcessor

_calls: collections.Counter = collections.Counter()
"""Calls of ``dieInFirstAttempt`` per task attempt of this Python worker."""


def note(markers: str, event: str) -> None:
    """Note ``event`` of the running task attempt in the directory ``markers``."""
    context = TaskContext.get()
    name = f"{event}-{context.stageId()}-{context.partitionId()}-{context.attemptNumber()}"
    pathlib.Path(markers, name).touch()


def noted(markers: pathlib.Path, event: str) -> set[tuple[int, int, int]]:
    """Return the ``(stage, partition, attempt)`` of every task attempt that noted ``event``."""
    prefix = f"{event}-"
    return {
        tuple(int(part) for part in path.name[len(prefix) :].split("-"))
        for path in markers.iterdir()
        if path.name.startswith(prefix)
    }


def dieInFirstAttempt(markers: str, at: int) -> None:
    """At the ``at``-th call in the first attempt of partition 0's task, note 'died' and end
    this Python worker at once, as a crash or the kernel's out-of-memory killer would."""
    context = TaskContext.get()
    if context.partitionId() != 0 or context.attemptNumber() != 0:
        return
    _calls[context.taskAttemptId()] += 1
    if _calls[context.taskAttemptId()] == at:
        note(markers, "died")
        os._exit(1)


@attrs.frozen
class DyingOnce:
    """A user function: ``fn``, after ``dieInFirstAttempt(markers, at)``."""

    fn: object
    markers: str
    at: int

    def __call__(self, *args):
        dieInFirstAttempt(self.markers, self.at)
        return self.fn(*args)


@attrs.frozen
class DyingLine:
    """An item whose line (``str``, which the files sink calls) kills its worker once."""

    value: int
    markers: str

    def __str__(self) -> str:
        dieInFirstAttempt(self.markers, 100)
        return str(self.value)


class MarkingProcessor(AbstractProcessor):
    """Passes every item on; notes 'init' and 'closed' per task attempt."""

    def __init__(self, markers: str) -> None:
        self._markers = markers

    def onInit(self, context) -> None:
        """Note that the processor started."""
        note(self._markers, "init")

    def tryProcess(self, ordinal=None, item=None) -> bool:
        """Emit ``item``; alone, the idle hook."""
        return True if ordinal is None else self.tryEmit(item)

    def close(self) -> None:
        """Note that the processor was closed."""
        note(self._markers, "closed")
