"""The driver's side of a job's assertion sinks: each check gets the items its sink collected,
a micro-batch at a time in a stream job, and fails or ends the job as Jet's assertion sinks do."""

import time
from collections.abc import Callable, Mapping

from sparkjet.coredag.model.assertion import AssertionCheck, AssertionCompletedException
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.processors.sinks import CollectForAssertion
from sparkjet.coredag.runtime.physical_plan import terminalOutputOf


class AssertionRun:
    """One check over the items collected so far; its timeout counts from when its sink started."""

    def __init__(self, check: AssertionCheck, clock: Callable[[], float] = time.monotonic) -> None:
        self.check, self._clock = check, clock
        self.collected: list = []
        self.lastError: AssertionError | None = None
        self._started: float | None = None

    def start(self) -> None:
        """Note that the sink has started, unless it already had: an eventual check's timeout
        counts from then, as Jet's starts when its sink processor is created."""
        if self._started is None:
            self._started = self._clock()

    def receive(self, items: list) -> None:
        """Collect ``items``; an eventual check runs after each and ends the job once it passes."""
        self.start()
        if self.check.timeoutSeconds is None:
            self.collected.extend(items)
            return
        for item in items:
            self.collected.append(item)
            try:
                self.check.assertFn(self.collected)
            except AssertionError as error:
                self.lastError = error
                continue
            raise AssertionCompletedException("Assertion passed successfully")

    def checkTimeout(self) -> None:
        """Fail an eventual check whose timeout passed, with its last error."""
        timeout = self.check.timeoutSeconds
        if timeout is not None and self._started is not None and self._clock() - self._started > timeout:
            raise AssertionError(
                f"{self.check.name}: the assertion did not pass within {timeout} s: {self.lastError}"
            ) from self.lastError

    def complete(self) -> None:
        """Run the check over every item, the input being consumed."""
        self.check.assertFn(self.collected)


class JobAssertions:
    """The assertion sinks of one job. They start when the job's run first asks for their
    timeouts (its stream is running) or gives them items, not when the job is submitted: starting
    Spark and the query does not count against a timeout."""

    def __init__(self, dag: DAG, clock: Callable[[], float] = time.monotonic) -> None:
        outputs = (terminalOutputOf(vertex.processorSupplier) for vertex in dag)
        self._runs = {
            output.check: AssertionRun(output.check, clock) for output in outputs if isinstance(output, CollectForAssertion)
        }

    def listItems(self, collected: Mapping[object, list]) -> dict[str, list]:
        """Return the items list sinks collected, without the assertion sinks'."""
        return {key: items for key, items in collected.items() if key not in self._runs}

    def receive(self, collected: Mapping[object, list]) -> None:
        """Give each check the items its sink collected."""
        for key, items in collected.items():
            if key in self._runs:
                self._runs[key].receive(items)

    def checkTimeouts(self) -> None:
        """Fail the job if an eventual check's timeout passed."""
        for run in self._runs.values():
            run.start()
            run.checkTimeout()

    def complete(self) -> None:
        """Run every check over all its items: the job's input is consumed."""
        for run in self._runs.values():
            run.complete()
