"""Jet's ``WindowDefinition``: tumbling, sliding and session windows, with an early-results period."""

import attrs

from sparkjet.coredag.model.sliding_window_policy import SlidingWindowPolicy, slidingWinPolicy


@attrs.frozen
class SlidingWindowDefinition:
    """Windows of ``windowSize`` starting every ``slideBy`` (tumbling where they are equal)."""

    windowSize: int
    slideBy: int
    earlyResultsPeriod: int = 0

    def __attrs_post_init__(self) -> None:
        if self.windowSize <= 0:
            raise ValueError("windowSize must be positive")
        if self.slideBy <= 0:
            raise ValueError("slideBy must be positive")
        if self.windowSize % self.slideBy:
            raise ValueError(
                f"windowSize must be integer multiple of slideBy, mod({self.windowSize}, {self.slideBy}) != 0"
            )
        _checkEarlyResultsPeriod(self.earlyResultsPeriod)

    def setEarlyResultsPeriod(self, earlyResultsPeriod: int) -> "SlidingWindowDefinition":
        """Return this definition emitting early results every ``earlyResultsPeriod`` ms."""
        return attrs.evolve(self, earlyResultsPeriod=earlyResultsPeriod)

    def toSlidingWindowPolicy(self) -> SlidingWindowPolicy:
        """Return the frames and windows the processors use."""
        return slidingWinPolicy(self.windowSize, self.slideBy)


@attrs.frozen
class SessionWindowDefinition:
    """Windows of events no further apart than ``sessionTimeout``, per key."""

    sessionTimeout: int
    earlyResultsPeriod: int = 0

    def __attrs_post_init__(self) -> None:
        if self.sessionTimeout <= 0:
            raise ValueError("sessionTimeout must be positive")
        _checkEarlyResultsPeriod(self.earlyResultsPeriod)

    def setEarlyResultsPeriod(self, earlyResultsPeriod: int) -> "SessionWindowDefinition":
        """Return this definition emitting early results every ``earlyResultsPeriod`` ms."""
        return attrs.evolve(self, earlyResultsPeriod=earlyResultsPeriod)


def _checkEarlyResultsPeriod(period: int) -> None:
    if period < 0:
        raise ValueError("earlyResultsPeriod must be zero or positive")


class WindowDefinition:
    """Factories of window definitions, with Jet's names."""

    @staticmethod
    def tumbling(windowSize: int) -> SlidingWindowDefinition:
        """Return back-to-back windows of ``windowSize`` milliseconds of event time."""
        return SlidingWindowDefinition(windowSize, windowSize)

    @staticmethod
    def sliding(windowSize: int, slideBy: int) -> SlidingWindowDefinition:
        """Return windows of ``windowSize`` milliseconds of event time starting every ``slideBy``
        milliseconds; ``windowSize`` must be a multiple of ``slideBy``."""
        return SlidingWindowDefinition(windowSize, slideBy)

    @staticmethod
    def session(sessionTimeout: int) -> SessionWindowDefinition:
        """Return session windows closed after ``sessionTimeout`` milliseconds of event time without
        events."""
        return SessionWindowDefinition(sessionTimeout)
