"""The one file layer of sparkjet's own files (a checkpoint's, its state files, an exported
snapshot's): a ``Files`` under a root, a local directory through Python's file API or a URL of
any other scheme (``hdfs://``, ``s3a://``, ``ftp://`` ...) through fsspec's file system for that
scheme, in this process. Names are relative to the root (``state/counts/0/3-ab12.base``). Each
file is written whole or not at all (aside, then renamed over), its missing directories made
first. The driver and the tasks use it alike; Hadoop stays where Spark itself is given a path
(the query checkpoint, and the driver's checkpoint at a Hadoop URL: ``checkpoint_storage``).
No pyspark here."""

import contextlib
import functools
import os
import shutil
import urllib.parse
from typing import Protocol

from sparkjet.coredag.model.user_paths import isHadoopUrl
from sparkjet.coredag.processors.full_disk import isFull, noSpaceError, removedOnFailure
from sparkjet.coredag.processors.output_paths import localPathOf

WRITING = ".writing"
"""The suffix of a file being written, renamed to its name once whole."""
PRIVATE_DIRECTORY = 0o700
PRIVATE_FILE = 0o600


def isUrl(location: str) -> bool:
    """Return whether ``location`` is a URL (``hdfs://``, ``file://`` ...) rather than a local
    path (a one-letter scheme is a drive letter)."""
    return isHadoopUrl(location)


def withoutPassword(location: str) -> str:
    """Return ``location`` as a message shows it: a URL without the password it may hold."""
    split = urllib.parse.urlsplit(location)
    if "@" not in split.netloc or ":" not in split.netloc.rsplit("@", 1)[0]:
        return location
    user, host = split.netloc.rsplit("@", 1)
    return urllib.parse.urlunsplit(split._replace(netloc=f"{user.split(':', 1)[0]}@{host}"))


HADOOP_PATH_CHARACTERS = frozenset("/_-!.~'()*,;:$&+=@")
"""The ASCII characters besides letters and digits that a Hadoop path's URI keeps as they are
(``java.net.URI``'s unreserved, punctuation and path characters)."""


def hadoopFileUrl(directory: str) -> str:
    """Return the URL by which Hadoop names the local absolute path ``directory``, as its
    ``Path.makeQualified`` does: ``file://`` and the path, each character a URI may not hold
    quoted (``file:///tmp/a%25b`` for ``/tmp/a%b``); other Unicode characters are kept."""
    kept = (
        character if character.isascii() and (character.isalnum() or character in HADOOP_PATH_CHARACTERS)
        or not character.isascii() and character.isprintable() and not character.isspace()
        else urllib.parse.quote(character, safe="")
        for character in os.path.normpath(directory)
    )
    return "file://" + "".join(kept)


def makeDirectories(path: str, mode: int = PRIVATE_DIRECTORY, made: list[str] | None = None) -> None:
    """Make the local directory ``path`` and those missing above it, each with ``mode``; note in
    ``made`` each this call made, from the top down, as it goes (so a failure midway still says
    them; one made meanwhile by another is not noted)."""
    missing = []
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        missing.append(path)
        path = os.path.dirname(path)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            continue
        if made is not None:
            made.append(directory)


class Files(Protocol):
    """Files under one root, by name relative to it."""

    root: str
    checkEvery: float
    """How often a watcher asks whether the root exists (see ``live_processors``)."""

    def where(self, name: str) -> str:
        """Return where file ``name`` is, for a message (a URL without its password)."""

    def exists(self, name: str = "") -> bool:
        """Return whether ``name`` (the root itself by default) exists."""

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""

    def size(self, name: str) -> int:
        """Return the bytes of file ``name`` (FileNotFoundError if there is none)."""

    def read(self, name: str) -> bytes:
        """Return the contents of file ``name`` (FileNotFoundError if there is none)."""

    def write(self, name: str, data: bytes, doing: str) -> None:
        """Make ``data`` file ``name``, whole or not at all: its directories made, written aside,
        then renamed over; a full disk is a NoSpaceError saying ``doing`` (what was written)."""

    def remove(self, name: str) -> None:
        """Remove file ``name``."""

    def writer(self, name: str):
        """Return file ``name`` opened to be written as it goes, in binary (its directory exists)."""

    def makeDirectory(self, name: str) -> None:
        """Make directory ``name``, whose parent exists; FileExistsError if ``name`` exists."""

    def makeDirectories(self, name: str = "") -> None:
        """Make directory ``name`` (the root itself by default) and those missing above it."""

    def move(self, name: str, to: str) -> None:
        """Rename file ``name`` to ``to``, replacing a file there."""

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""

    def removeIfEmpty(self, name: str) -> None:
        """Remove directory ``name`` if it is empty; leave it otherwise (or if it is not there)."""


class LocalFiles:
    """Files in a local directory (a file system every machine mounts, on a cluster), readable
    by you alone; ``synced``: each write is on the disk before it is renamed into place."""

    checkEvery = 0.0

    def __init__(self, root: str, synced: bool = False) -> None:
        self.root, self.synced = root, synced

    def path(self, name: str) -> str:
        """Return the local path of ``name``."""
        return os.path.join(self.root, name) if name else self.root

    def where(self, name: str) -> str:
        """Return where file ``name`` is, for a message."""
        return self.path(name)

    def exists(self, name: str = "") -> bool:
        """Return whether ``name`` (the root itself by default) exists."""
        return os.path.exists(self.path(name))

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""
        path = self.path(directory)
        return os.listdir(path) if os.path.isdir(path) else []

    def size(self, name: str) -> int:
        """Return the bytes of file ``name`` (FileNotFoundError if there is none)."""
        return os.path.getsize(self.path(name))

    def read(self, name: str) -> bytes:
        """Return the contents of file ``name`` (FileNotFoundError if there is none)."""
        with open(self.path(name), "rb") as file:
            return file.read()

    def write(self, name: str, data: bytes, doing: str) -> None:
        """Make ``data`` file ``name``, whole or not at all (``os.replace`` is atomic)."""
        path = self.path(name)
        aside = path + WRITING
        with removedOnFailure(doing, path, len(data), aside):
            makeDirectories(os.path.dirname(path))
            with open(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "wb") as file:
                file.write(data)
                if self.synced:
                    file.flush()
                    os.fsync(file.fileno())
            os.replace(aside, path)

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        os.remove(self.path(name))

    def writer(self, name: str):
        """Return file ``name`` opened to be written as it goes, in binary."""
        return open(self.path(name), "wb")

    def makeDirectory(self, name: str, mode: int = 0o777) -> None:
        """Make directory ``name`` with ``mode``; FileExistsError if ``name`` exists."""
        os.mkdir(self.path(name), mode)

    def makeDirectories(self, name: str = "") -> None:
        """Make directory ``name`` (the root itself by default) and those missing above it, readable by you alone."""
        makeDirectories(self.path(name))

    def move(self, name: str, to: str) -> None:
        """Rename file ``name`` to ``to``, replacing a file there."""
        os.rename(self.path(name), self.path(to))

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        path = self.path(name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)

    def removeIfEmpty(self, name: str) -> None:
        """Remove directory ``name`` if it is empty; leave it otherwise (or if it is not there)."""
        with contextlib.suppress(OSError):
            os.rmdir(self.path(name))


class UrlFiles:
    """Files under a URL, through fsspec's file system for its scheme, which keeps one per
    process and thread (a connection serves one thread at a time)."""

    checkEvery = 10.0
    """Each time is a request to a server."""

    def __init__(self, root: str) -> None:
        self.root = root

    def where(self, name: str) -> str:
        """Return where file ``name`` is, for a message: its URL without a password."""
        return f"{withoutPassword(self.root).removesuffix('/')}/{name}" if name else withoutPassword(self.root)

    def exists(self, name: str = "") -> bool:
        """Return whether ``name`` (the root itself by default) exists."""
        fileSystem, path = self.reach(name)
        return fileSystem.exists(path)

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""
        fileSystem, path = self.reach(directory)
        if not fileSystem.isdir(path):
            return []
        return [entry.rstrip("/").rsplit("/", 1)[-1] for entry in fileSystem.ls(path, detail=False)]

    def size(self, name: str) -> int:
        """Return the bytes of file ``name`` (FileNotFoundError if there is none)."""
        return self._missingOr(name, lambda fileSystem, path: fileSystem.size(path))

    def read(self, name: str) -> bytes:
        """Return the contents of file ``name`` (FileNotFoundError if there is none)."""
        return self._missingOr(name, lambda fileSystem, path: fileSystem.cat_file(path))

    def write(self, name: str, data: bytes, doing: str) -> None:
        """Make ``data`` file ``name``, whole or not at all."""
        fileSystem, path = self.reach(name)
        try:
            fileSystem.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            fileSystem.pipe_file(path + WRITING, data)
            fileSystem.mv(path + WRITING, path)
        except Exception as error:
            with contextlib.suppress(Exception):
                fileSystem.rm_file(path + WRITING)
            if isFull(error):
                raise noSpaceError(doing, self.where(name), f"writing {len(data):,} bytes", None) from None
            raise

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        fileSystem, path = self.reach(name)
        fileSystem.rm_file(path)

    def writer(self, name: str):
        """Return file ``name`` opened to be written as it goes, in binary (its directory exists)."""
        fileSystem, path = self.reach(name)
        return fileSystem.open(path, "wb")

    def makeDirectories(self, name: str = "") -> None:
        """Make directory ``name`` (the root itself by default) and those missing above it."""
        fileSystem, path = self.reach(name)
        fileSystem.makedirs(path, exist_ok=True)

    def makeDirectory(self, name: str) -> None:
        """Make directory ``name``, whose parent exists; FileExistsError if ``name`` exists
        (exclusive where the file system's own call is, as FTP's and HDFS's are)."""
        fileSystem, path = self.reach(name)
        try:
            fileSystem.mkdir(path, create_parents=False)
        except Exception:
            if fileSystem.exists(path):
                raise FileExistsError(self.where(name)) from None
            raise

    def move(self, name: str, to: str) -> None:
        """Rename file ``name`` to ``to``, replacing a file there."""
        fileSystem, path = self.reach(name)
        destination = self.reach(to)[1]
        if fileSystem.exists(destination):
            fileSystem.rm_file(destination)
        fileSystem.mv(path, destination)

    def removeIfEmpty(self, name: str) -> None:
        """Remove directory ``name`` if it is empty; leave it otherwise (or if it is not there)."""
        fileSystem, path = self.reach(name)
        if fileSystem.isdir(path) and not fileSystem.ls(path, detail=False):
            fileSystem.rmdir(path)

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        fileSystem, path = self.reach(name)
        if fileSystem.isdir(path):
            fileSystem.rm(path, recursive=True)
        elif fileSystem.exists(path):
            fileSystem.rm_file(path)

    def reach(self, name: str = ""):
        """Return the file system and ``name``'s path in it: a ``file:`` URL's local path as
        Hadoop reads it (``file:///tmp/a%20b`` is ``/tmp/a b``); a listing asked again asks the server again (others
        write there: Spark's query, the tasks)."""
        import fsspec  # here: a driver keeping its checkpoint locally never loads it

        local = localPathOf(self.root)
        if local is not None:
            fileSystem, root = fsspec.filesystem("file"), local
        else:
            fileSystem, root = fsspec.core.url_to_fs(self.root, use_listings_cache=False)
        return fileSystem, f"{root.rstrip('/')}/{name}" if name else root

    def _missingOr(self, name: str, reach):
        """Return ``reach(fileSystem, path)`` of file ``name``; a file system that fails for a
        file it does not have fails with FileNotFoundError, as a local one does."""
        fileSystem, path = self.reach(name)
        try:
            return reach(fileSystem, path)
        except FileNotFoundError:
            raise
        except Exception:
            if not fileSystem.exists(path):
                raise FileNotFoundError(path) from None
            raise


def unreachableScheme(url: str) -> str | None:
    """Return what fsspec says of ``url``'s scheme where it has no file system for it here (its
    library not installed, or no such scheme), else None."""
    import fsspec

    try:
        fsspec.get_filesystem_class(urllib.parse.urlsplit(url).scheme)
    except (ImportError, ValueError) as error:
        return str(error)
    return None


@functools.lru_cache(maxsize=16)
def filesAt(root: str) -> LocalFiles | UrlFiles:
    """Return the files under ``root``, a local directory or a URL (one per root and process)."""
    return UrlFiles(root) if isUrl(root) else LocalFiles(root)
