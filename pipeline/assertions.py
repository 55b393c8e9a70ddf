"""Jet's testing helpers: ``AssertionSinks`` end a stage with an assertion over what it emitted,
``Assertions`` put one beside a stage (``stage.apply(Assertions.assertAnyOrder(expected))``)
and return the stage. The driver runs them over the items collected: a failed assertion fails the
job with its ``AssertionError``; ``assertCollectedEventually`` ends a stream job with
``AssertionCompletedException`` once it passes."""

from collections import Counter
from collections.abc import Callable, Iterable

import attrs

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.model.assertion import AssertionCheck
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction
from sparkjet.pipeline.sinks import Sink


@attrs.frozen
class AssertionSink(Sink):
    """A sink whose items the driver checks with ``check``."""

    check: AssertionCheck


def _prefixed(message: str | None, text: str) -> str:
    return f"{message}, {text}" if message else text


def _assertEquals(message: str | None, expected: object, actual: object) -> None:
    """Jet's ``assertEquals``: raise naming both values unless they are equal."""
    if expected != actual:
        raise AssertionError(_prefixed(message, f"expected:<{expected}> but was:<{actual}>"))


@attrs.frozen
class Ordered:
    """Asserts the items are exactly ``expected``, in order."""

    message: str | None
    expected: list

    def __call__(self, received: list) -> None:
        _assertEquals(self.message, self.expected, received)


@attrs.frozen
class AnyOrder:
    """Asserts the items are ``expected`` in any order, each as many times."""

    message: str | None
    expected: Counter

    def __call__(self, received: list) -> None:
        text = (
            "Expected and received did not match. The items are printed in the format of a map as "
            "follows: {<item>=<num occurrences>}"
        )
        _assertEquals(_prefixed(self.message, text), dict(self.expected), dict(Counter(received)))


@attrs.frozen
class Contains:
    """Asserts every item of ``expected`` was among the items."""

    message: str | None
    expected: frozenset

    def __call__(self, received: list) -> None:
        missing = self.expected.difference(received)
        if missing:
            raise AssertionError(_prefixed(self.message, f"the following items have not been observed: {sorted(missing, key=repr)}"))


def _sink(name: str, assertFn: Callable[[list], None], timeoutSeconds: float | None = None) -> AssertionSink:
    checkFunction(assertFn, name, "assertFn")
    return AssertionSink(name, AssertionCheck(name, assertFn, timeoutSeconds))


def _expected(name: str, expected: Iterable) -> list:
    if isinstance(expected, str | bytes) or not isinstance(expected, Iterable):
        raise PipelineError(
            f"{name} (called at {SourceLocation.ofUserCall()}): expected is a collection of items, got {expected!r}"
        )
    return list(expected)


class AssertionSinks:
    """Sinks that assert what the stage before them emitted (Jet's ``AssertionSinks``)."""

    @staticmethod
    def assertOrdered(expected: Iterable, message: str | None = None) -> AssertionSink:
        """Assert the stage emitted exactly ``expected``, in order (one upstream processor)."""
        return _sink("assertOrdered", Ordered(message, _expected("assertOrdered", expected)))

    @staticmethod
    def assertAnyOrder(expected: Iterable, message: str | None = None) -> AssertionSink:
        """Assert the stage emitted ``expected`` in any order, and nothing else."""
        return _sink("assertAnyOrder", AnyOrder(message, Counter(_expected("assertAnyOrder", expected))))

    @staticmethod
    def assertContains(expected: Iterable, message: str | None = None) -> AssertionSink:
        """Assert the stage emitted every item of ``expected`` (and perhaps others)."""
        return _sink("assertContains", Contains(message, frozenset(_expected("assertContains", expected))))

    @staticmethod
    def assertCollected(assertFn: Callable[[list], None]) -> AssertionSink:
        """Run ``assertFn(items)`` over everything the stage emitted, once its input is consumed."""
        return _sink("assertCollected", assertFn)

    @staticmethod
    def assertCollectedEventually(timeoutSeconds: float, assertFn: Callable[[list], None]) -> AssertionSink:
        """Run ``assertFn(items so far)`` after every item of a stream: once it passes, the job
        ends with ``AssertionCompletedException``; its ``AssertionError`` is ignored until
        ``timeoutSeconds`` have passed, then fails the job."""
        if isinstance(timeoutSeconds, bool) or not isinstance(timeoutSeconds, int | float) or timeoutSeconds <= 0:
            raise PipelineError(
                f"assertCollectedEventually (called at {SourceLocation.ofUserCall()}): timeoutSeconds must be "
                f"a positive number, got {timeoutSeconds!r}"
            )
        return _sink("assertCollectedEventually", assertFn, timeoutSeconds)


def _beside(sink: AssertionSink) -> Callable:
    """Return the function ``stage.apply`` takes: it writes the stage to ``sink`` and returns the stage."""

    def asserting(stage):
        stage.writeTo(sink)
        return stage

    return asserting


class Assertions:
    """Assertions to ``apply`` to a stage: each adds an assertion sink beside the stage and
    returns the stage, so the pipeline goes on (Jet's ``Assertions``)."""

    @staticmethod
    def assertOrdered(expected: Iterable, message: str | None = None) -> Callable:
        """See ``AssertionSinks.assertOrdered``."""
        return _beside(AssertionSinks.assertOrdered(expected, message))

    @staticmethod
    def assertAnyOrder(expected: Iterable, message: str | None = None) -> Callable:
        """See ``AssertionSinks.assertAnyOrder``."""
        return _beside(AssertionSinks.assertAnyOrder(expected, message))

    @staticmethod
    def assertContains(expected: Iterable, message: str | None = None) -> Callable:
        """See ``AssertionSinks.assertContains``."""
        return _beside(AssertionSinks.assertContains(expected, message))

    @staticmethod
    def assertCollected(assertFn: Callable[[list], None]) -> Callable:
        """See ``AssertionSinks.assertCollected``."""
        return _beside(AssertionSinks.assertCollected(assertFn))

    @staticmethod
    def assertCollectedEventually(timeoutSeconds: float, assertFn: Callable[[list], None]) -> Callable:
        """See ``AssertionSinks.assertCollectedEventually``."""
        return _beside(AssertionSinks.assertCollectedEventually(timeoutSeconds, assertFn))
