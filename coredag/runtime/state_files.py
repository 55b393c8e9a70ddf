"""The files of a stream job's state directory as its tasks reach them: a local directory through
Python's file API, a URL of any other scheme (``hdfs://``, ``s3a://``, ``ftp://`` ...) through
fsspec's file system for that scheme, in the task's own process. Each file is written aside and
then renamed, so a reader finds it whole or not at all. No pyspark here."""

import contextlib
import functools
import os
import urllib.parse

import fsspec

from sparkjet.coredag.processors.full_disk import isFull, noSpaceError, removedOnFailure
from sparkjet.coredag.model.user_paths import isHadoopUrl

WRITING = ".writing"
"""The suffix of a file being written, renamed to its name once whole."""
SAVING = "A task saving its processor's state"


def withoutPassword(location: str) -> str:
    """Return ``location`` as a message shows it: a URL without the password it may hold."""
    split = urllib.parse.urlsplit(location)
    if "@" not in split.netloc or ":" not in split.netloc.rsplit("@", 1)[0]:
        return location
    user, host = split.netloc.rsplit("@", 1)
    return urllib.parse.urlunsplit(split._replace(netloc=f"{user.split(':', 1)[0]}@{host}"))


class LocalStateFiles:
    """State files in a local directory (a file system every machine mounts, on a cluster),
    readable by you alone."""

    checkEvery = 0.0
    """How often a watcher asks whether the directory exists: as often as it looks."""

    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, name: str) -> str:
        """Return where file ``name`` is."""
        return os.path.join(self.root, name)

    def where(self, name: str) -> str:
        """Return where file ``name`` is, for a message."""
        return self.path(name)

    def size(self, name: str) -> int:
        """Return the bytes of file ``name`` (FileNotFoundError if there is none)."""
        return os.path.getsize(self.path(name))

    def read(self, name: str) -> bytes:
        """Return the contents of file ``name`` (FileNotFoundError if there is none)."""
        with open(self.path(name), "rb") as file:
            return file.read()

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, aside and then renamed."""
        path = self.path(name)
        aside = path + WRITING
        with removedOnFailure(SAVING, path, len(data), aside):
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as file:
                file.write(data)
            os.replace(aside, path)

    def exists(self) -> bool:
        """Return whether the directory exists (a job that ended took it away)."""
        return os.path.isdir(self.root)


class RemoteStateFiles:
    """State files under a URL, through fsspec's file system for its scheme, which keeps one
    per process and thread (a connection serves one thread at a time)."""

    checkEvery = 10.0
    """How often a watcher asks whether the directory exists: each time is a request to a server."""

    def __init__(self, root: str) -> None:
        self.root = root

    def where(self, name: str) -> str:
        """Return where file ``name`` is, for a message: its URL without a password."""
        return f"{withoutPassword(self.root)}/{name}"

    def size(self, name: str) -> int:
        """Return the bytes of file ``name`` (FileNotFoundError if there is none)."""
        return self._missingOr(name, lambda fileSystem, path: fileSystem.size(path))

    def read(self, name: str) -> bytes:
        """Return the contents of file ``name`` (FileNotFoundError if there is none)."""
        return self._missingOr(name, lambda fileSystem, path: fileSystem.cat_file(path))

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, aside and then renamed."""
        fileSystem, path = self._reach(name)
        try:
            fileSystem.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            fileSystem.pipe_file(path + WRITING, data)
            fileSystem.mv(path + WRITING, path)
        except Exception as error:
            with contextlib.suppress(Exception):
                fileSystem.rm_file(path + WRITING)
            if isFull(error):
                raise noSpaceError(SAVING, self.where(name), f"writing {len(data):,} bytes", None) from None
            raise

    def exists(self) -> bool:
        """Return whether the directory exists (a job that ended took it away)."""
        fileSystem, root = fsspec.core.url_to_fs(self.root)
        return fileSystem.isdir(root)

    def _reach(self, name: str) -> tuple[fsspec.AbstractFileSystem, str]:
        """Return the file system and file ``name``'s path in it."""
        fileSystem, root = fsspec.core.url_to_fs(self.root)
        return fileSystem, f"{root.rstrip('/')}/{name}"

    def _missingOr(self, name: str, reach):
        """Return ``reach(fileSystem, path)`` of file ``name``; a file system that fails for a
        file it does not have fails with FileNotFoundError, as a local one does."""
        fileSystem, path = self._reach(name)
        try:
            return reach(fileSystem, path)
        except FileNotFoundError:
            raise
        except Exception:
            if not fileSystem.exists(path):
                raise FileNotFoundError(path) from None
            raise


@functools.lru_cache(maxsize=16)
def stateFiles(root: str) -> LocalStateFiles | RemoteStateFiles:
    """Return the state files under ``root``, a local directory or a URL (one per root and process)."""
    return RemoteStateFiles(root) if isHadoopUrl(root) else LocalStateFiles(root)
