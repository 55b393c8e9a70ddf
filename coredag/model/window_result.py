"""The results of window aggregation, Jet's ``WindowResult`` and ``KeyedWindowResult``."""

import datetime
from collections.abc import Callable

import attrs

from sparkjet.coredag.model.jet_event import JetEvent


def toLocalTime(millis: int) -> str:
    """Return the local time of epoch milliseconds as Java's ``LocalTime`` prints it."""
    time = datetime.datetime.fromtimestamp(millis / 1000).time()
    if time.microsecond:
        return time.strftime("%H:%M:%S.") + f"{time.microsecond // 1000:03d}"
    return time.strftime("%H:%M:%S" if time.second else "%H:%M")


@attrs.frozen
class WindowResult:
    """The result of a window ``[start, end)``; ``isEarly`` before the window closed."""

    start: int
    end: int
    result: object
    isEarly: bool = False

    def __str__(self) -> str:
        return _printed("WindowResult", self.start, self.end, f"value='{self.result}'", self.isEarly)


@attrs.frozen
class KeyedWindowResult:
    """The result of one key's window ``[start, end)``; ``isEarly`` before the window closed."""

    start: int
    end: int
    key: object
    result: object
    isEarly: bool = False

    def __str__(self) -> str:
        return _printed("KeyedWindowResult", self.start, self.end, f"key='{self.key}', value='{self.result}'", self.isEarly)


def _printed(kind: str, start: int, end: int, fields: str, isEarly: bool) -> str:
    """Return a result as Jet's toString prints it."""
    return f"{kind}{{start={toLocalTime(start)}, end={toLocalTime(end)}, {fields}, isEarly={str(isEarly).lower()}}}"


def windowResult(start: int, end: int, key: object, result: object, isEarly: bool = False) -> WindowResult:
    """Return the ``WindowResult`` of these fields, the key dropped: a global window's output."""
    return WindowResult(start, end, result, isEarly)


@attrs.frozen
class TimestampedAtEnd:
    """Makes ``outputFn``'s item of a window an event timed at the window's last moment
    (``end - 1``), as Jet's pipeline stamps window results, so that a window over them works."""

    outputFn: Callable

    def __call__(self, start: int, end: int, key: object, result: object, isEarly: bool) -> JetEvent:
        return JetEvent(end - 1, self.outputFn(start, end, key, result, isEarly))
