"""The Spark stages of jobs on a Spark Connect session, as its server reports them. A Connect
client has no status tracker to ask; instead the server sends each operation's stages while it
runs to the session's progress handlers (``registerProgressHandler``), called in the thread
that runs the operation. A job's thread says which job group it runs for (``runningFor``), so
the stages reported in it are that group's. No pyspark.sql.connect here."""

import collections
import contextlib
import threading
from collections.abc import Iterator

from pyspark.status import SparkStageInfo

KEPT_GROUPS, KEPT_STAGES = 100, 1000
"""How many job groups' stages are kept (the latest), and how many stages of each."""

class _Running(threading.local):
    """The job group whose operations this thread runs (None: none of a sparkjet job)."""

    group: str | None = None


_running = _Running()
_lock = threading.Lock()
_groups: "collections.OrderedDict[str, dict[int, tuple[SparkStageInfo, bool]]]" = collections.OrderedDict()


@contextlib.contextmanager
def runningFor(group: str) -> Iterator[None]:
    """Within: the stages the server reports in this thread are job group ``group``'s."""
    before = _running.group
    _running.group = group
    try:
        yield
    finally:
        _running.group = before


def stageProgress(stages, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
    """The progress handler: note the stages of the operation this thread runs (a finished
    operation's are no longer running); the tasks in flight go to its stages not done."""
    group = _running.group
    if group is None:
        return
    with _lock:
        seen = _groups.setdefault(group, {})
        _groups.move_to_end(group)
        for stage in stages or ():
            left = stage.num_tasks - stage.num_completed_tasks
            active = 0 if stage.done or done else min(inflight_tasks, left)
            info = SparkStageInfo(stage.stage_id, 0, "", stage.num_tasks, active, stage.num_completed_tasks, 0)
            seen[stage.stage_id] = (info, not (stage.done or done))
        if done:
            for stageId, (info, _) in list(seen.items()):
                seen[stageId] = (info._replace(numActiveTasks=0), False)
        while len(seen) > KEPT_STAGES:
            seen.pop(min(seen))
        while len(_groups) > KEPT_GROUPS:
            _groups.popitem(last=False)


def runningStages(group: str) -> tuple[list[int], list[SparkStageInfo]]:
    """Return the ids of the stages reported for job group ``group`` and the infos of those running."""
    with _lock:
        seen = dict(_groups.get(group, {}))
    return sorted(seen), [info for info, running in seen.values() if running]
