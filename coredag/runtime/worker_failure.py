"""A Spark task whose Python worker process died in every attempt: what Spark's failure says
of it, and the error that tells the user which stages it ran and what to check."""

import re

import attrs

from sparkjet.coredag.errors import WorkerCrashError, describeStages

_ABORTED = re.compile(r"Task (\d+) in stage (\d+)\.\d+ failed (\d+) times?")
_LAST_FAILURE = re.compile(r"most recent failure: (.*)")
_CRASHED = "Python worker exited unexpectedly (crashed)"
_DIAGNOSTICS = re.compile(re.escape(_CRASHED) + r"(?::| -) *(\S.*)")
_SUGGESTS_FAULT_HANDLER = "faulthandler.enabled"

CHECKS = (
    "Check whether a native extension crashes (a segmentation fault), a user function ends the "
    "process (os._exit, os.abort) or the worker runs out of memory (the kernel's out-of-memory "
    "killer, see dmesg)"
)
FAULT_HANDLER = "setting spark.python.worker.faulthandler.enabled to true shows where a crash happens"


@attrs.frozen
class CrashedTask:
    """A Spark task that failed the job because its Python worker died, in its last attempt."""

    task: int
    stage: int
    attempts: int
    diagnostics: str
    """What Spark says of the crash beyond that it happened (a fault handler's first line)."""
    faultHandlerOff: bool

    @classmethod
    def parse(cls, text: str) -> "CrashedTask | None":
        """Return the task whose worker's crash failed the Spark job, as ``text`` (Spark's
        failure) says, if it does."""
        aborted, lastFailure = _ABORTED.search(text), _LAST_FAILURE.search(text)
        if aborted is None or lastFailure is None or _CRASHED not in lastFailure.group(1):
            return None
        diagnostics = _DIAGNOSTICS.search(lastFailure.group(1))
        task, stage, attempts = map(int, aborted.groups())
        return cls(
            task, stage, attempts, diagnostics.group(1).strip() if diagnostics else "",
            _SUGGESTS_FAULT_HANDLER in lastFailure.group(1),
        )

    def error(self, jobName: str, stageNames: list) -> WorkerCrashError:
        """Return the error of job ``jobName``, whose task ran the stages ``stageNames`` (as
        ``StageName``s, which know where they were defined; none if not known)."""
        running = f"running {describeStages(stageNames)} " if stageNames else ""
        attempts = f"in each of the {self.attempts} attempts" if self.attempts > 1 else "in its only attempt"
        diagnostics = f" ({self.diagnostics})" if self.diagnostics else ""
        advice = f"{CHECKS}; {FAULT_HANDLER}" if self.faultHandlerOff else CHECKS
        return WorkerCrashError(
            f"Job '{jobName}' failed: the Python worker {running}died {attempts} of Spark task "
            f"{self.task} of stage {self.stage}{diagnostics}. {advice}"
        )
