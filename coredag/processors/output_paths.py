"""Output directories as a sink names them: which paths are never safe to write, where a path or
``file:`` URL points, and why a local target cannot be written (it exists, or a file is in the way)."""

import os
import urllib.parse

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.model.user_paths import isHadoopUrl


def localPathOf(directory: str) -> str | None:
    """Return the absolute local path ``directory`` names: a plain path or a ``file:`` URL;
    None for a URL of another file system."""
    if not isHadoopUrl(directory):
        return os.path.abspath(directory)
    url = urllib.parse.urlsplit(directory)
    if url.scheme != "file" or url.netloc not in ("", "localhost"):
        return None
    return os.path.abspath(urllib.parse.unquote(url.path) or "/")


def unsafeOutputReason(directory: str) -> str | None:
    """Return why ``directory`` may never be a job's output directory, or None if it may.

    An empty path, a file system's root, the working directory, its ancestors and the home
    directory always exist and hold what the job did not write."""
    if not directory.strip():
        return "it is empty"
    if isHadoopUrl(directory) and localPathOf(directory) is None:
        path = urllib.parse.urlsplit(directory).path
        return "it is the root of its file system" if path.strip("/") == "" else None
    path = localPathOf(directory)
    if os.path.dirname(path) == path:
        return "it is the root of the file system"
    working = os.getcwd()
    if path == working:
        return "it is the working directory"
    if _isAncestor(path, working):
        return "it is an ancestor of the working directory"
    if path == os.path.expanduser("~"):
        return "it is the home directory"
    return None


def _isAncestor(path: str, of: str) -> bool:
    return os.path.commonpath([path, of]) == path and path != of


def checkLocalTarget(directory: str, origin: str) -> None:
    """Refuse a local output directory that exists (a dangling symbolic link included) or
    whose nearest existing ancestor is not a directory; say what was found."""
    path = localPathOf(directory)
    if os.path.islink(path) and not os.path.exists(path):
        raise OutputError(
            f"{origin}: the output directory '{directory}' is a symbolic link to "
            f"'{os.readlink(path)}', which does not exist; choose a new directory or remove the "
            "link (it was left untouched)"
        )
    if os.path.lexists(path):
        raise OutputError(alreadyExists(directory, origin))
    ancestor = _nearestExisting(path)
    if not os.path.isdir(ancestor):
        raise OutputError(
            f"{origin}: cannot create the output directory '{directory}': '{ancestor}' is a "
            "file, not a directory"
        )


def alreadyExists(directory: str, origin: str, meanwhile: bool = False) -> str:
    """Return the message for an output directory that exists: the same at submission and,
    with a note, when it appeared after it."""
    message = (
        f"{origin}: the output directory '{directory}' already exists; choose a new directory "
        "or remove this one (it was left untouched)"
    )
    return f"{message}. It appeared after the job was submitted" if meanwhile else message


def _nearestExisting(path: str) -> str:
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    return path


def unsafeOutputMessage(who: str, directory: str, reason: str) -> str:
    """Return the message refusing ``directory`` as an output directory for ``reason``; ``who``
    is the sink's factory, and where it was called if known."""
    return (
        f"{who}: refusing the output directory '{directory}': {reason}. A job writes into a "
        "new directory it creates (and removes it if the job fails): name one, such as 'output'"
    )
