"""The results of window aggregation, Jet's ``WindowResult`` and ``KeyedWindowResult``."""

import datetime

import attrs


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
        return (
            f"WindowResult{{start={toLocalTime(self.start)}, end={toLocalTime(self.end)}, "
            f"value='{self.result}', isEarly={str(self.isEarly).lower()}}}"
        )


@attrs.frozen
class KeyedWindowResult:
    """The result of one key's window ``[start, end)``; ``isEarly`` before the window closed."""

    start: int
    end: int
    key: object
    result: object
    isEarly: bool = False

    def __str__(self) -> str:
        return (
            f"KeyedWindowResult{{start={toLocalTime(self.start)}, end={toLocalTime(self.end)}, "
            f"key='{self.key}', value='{self.result}', isEarly={str(self.isEarly).lower()}}}"
        )


def windowResult(start: int, end: int, key: object, result: object, isEarly: bool = False) -> WindowResult:
    """Return the ``WindowResult`` of these fields, the key dropped: a global window's output."""
    return WindowResult(start, end, result, isEarly)
