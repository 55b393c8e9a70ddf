"""The paths a user gives sparkjet (a checkpoint location, a source's or a sink's directory, a
glob), checked where they are given, as Jet checks its arguments: a str or a path, and without
the one character no file system takes in a path, NUL, which Python refuses at its first use
with a bare ``ValueError: embedded null byte`` and Spark's JVM mangles."""

import os
import urllib.parse


def checkedPath(path, who: str, argument: str, error: type[Exception]) -> str:
    """Return ``path`` (a str or path-like) as a str; one of another type, or holding a NUL
    character, is ``error`` naming ``who`` (the call) and its ``argument``."""
    try:
        given = os.fspath(path)
    except TypeError:
        given = None
    if not isinstance(given, str):
        raise error(f"{who}: expected the {argument} as a str or a path, got {type(path).__name__} {path!r}")
    if "\0" in given:
        raise error(
            f"{who}: the {argument} {given!r} holds a NUL character (at index {given.index(chr(0))}), which no "
            "file system takes in a path: give it without one"
        )
    return given


def isHadoopUrl(directory: str) -> bool:
    """Return whether ``directory`` is a URL (``hdfs://``, ``s3a://``, ``file://`` ...), which
    Spark's reader reads, rather than a local path (a one-letter scheme is a drive letter)."""
    return len(urllib.parse.urlsplit(directory).scheme) > 1
