"""What the classic engine's Spark tasks run around a vertex's task (``vertex_tasks.runVertex``,
engine-neutral: values in, values out): what it ends with added to the job's accumulators.
No pyspark here: a Python worker imports this module to run the task."""

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

from sparkjet.coredag.runtime.vertex_tasks import TaskEnd

if TYPE_CHECKING:
    from pyspark import Accumulator


def inClassicTask(
    task: Callable[[int, Iterator], Generator[list, None, TaskEnd]], name: str, counts: "Accumulator",
    states: "Accumulator | None", index: int, partition: Iterator,
) -> Iterator[list]:
    """Run ``task`` over partition ``index`` of vertex ``name``, adding what it ends with to the
    job's accumulators: its figures to ``counts``, the state it saved to ``states``."""
    end = yield from task(index, partition)
    counts.add(end.figures)
    if end.state is not None:
        states.add({(name, index): end.state})
