"""Where a stream job's checkpoint keeps its files: a local directory, through Python's file API,
or a Hadoop URL (``hdfs://``, ``s3a://``, ``file://`` ... any scheme Hadoop's FileSystem knows),
through the driver's JVM, as Spark keeps its own query checkpoint there. Both take names
relative to the checkpoint (``states/batch-000000003.pickle``) and offer the same few operations:
list, read, write whole (aside, then renamed over), remove, and copy to or from a local path.

A local path never starts Spark's JVM; a Hadoop URL needs the SparkContext running in this process."""

import os
import shutil

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.processors.sources import isHadoopUrl
from sparkjet.coredag.runtime.output_directory import javaMessage

WRITING = ".writing"
"""The suffix of a file being written, renamed to its name once whole."""


class CheckpointError(JobError):
    """A stream job's checkpoint location cannot be reached or written."""


class LocalCheckpointStorage:
    """A checkpoint in a local directory."""

    def __init__(self, location: str) -> None:
        self.location = location

    def open(self, owner: str) -> None:
        """Nothing to reach: the directory is made by its first write."""

    def url(self, name: str) -> str:
        """Return the path Spark is given for ``name``."""
        return os.path.join(self.location, name)

    def exists(self, name: str) -> bool:
        """Return whether ``name`` exists."""
        return os.path.exists(self.url(name))

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""
        path = self.url(directory)
        return os.listdir(path) if os.path.isdir(path) else []

    def read(self, name: str) -> bytes | None:
        """Return the bytes of file ``name`` (None if there is none)."""
        try:
            with open(self.url(name), "rb") as file:
                return file.read()
        except FileNotFoundError:
            return None

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, whole or not at all: written aside, synced, then renamed
        over the old one (``os.replace`` is atomic)."""
        path = self.url(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + WRITING, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(path + WRITING, path)

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        os.remove(self.url(name))

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        path = self.url(name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)

    def removeIfEmpty(self) -> None:
        """Remove the checkpoint's directory if nothing is left in it."""
        try:
            os.rmdir(self.location)
        except OSError:
            pass

    def copyOut(self, name: str, local: str) -> None:
        """Copy ``name`` (a file or a directory) to the new local path ``local``."""
        _copied(self.url(name), local)

    def copyIn(self, local: str, name: str) -> None:
        """Copy the local file or directory ``local`` to ``name``, which does not exist yet."""
        target = self.url(name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _copied(local, target)


IN_FLIGHT = shutil.ignore_patterns("*.tmp", "*.tmp.crc")
"""The files Spark's query is still writing (``.1.<uuid>.tmp``, renamed once whole): a copy
leaves them out, as a reader of its logs does, for they may be gone before they are read."""


def _copied(source: str, target: str) -> None:
    """Copy the local file or directory ``source`` to the new path ``target``."""
    if os.path.isdir(source):
        shutil.copytree(source, target, ignore=IN_FLIGHT)
    else:
        shutil.copy2(source, target)


class HadoopCheckpointStorage:
    """A checkpoint at a Hadoop URL, read and written through Hadoop's FileSystem in the
    driver's JVM (what Spark's ``checkpointLocation`` takes, and how Spark writes its own logs
    there). On ``file://`` Hadoop keeps a hidden ``.crc`` checksum beside each file, and hides it
    from listings."""

    def __init__(self, location: str, sparkContext) -> None:
        self.location = location
        self._jvm = sparkContext._jvm
        self._Path = self._jvm.org.apache.hadoop.fs.Path
        self._conf = sparkContext._jsc.hadoopConfiguration()
        self._root = self._fs = None

    def open(self, owner: str) -> None:
        """Reach the file system (asking it whether the directory exists; the first write makes
        it); a malformed URL, an unknown scheme or an unreachable file system is a
        CheckpointError naming ``owner``."""
        try:
            self._root = self._Path(self.location)
            self._fs = self._root.getFileSystem(self._conf)
            self._fs.exists(self._root)
        except Exception as cause:
            self._fs = None
            raise CheckpointError(cannotKeep(owner, self.location, javaMessage(cause))) from None

    def url(self, name: str) -> str:
        """Return the URL Spark is given for ``name``."""
        return self._path(name).toString()

    def exists(self, name: str) -> bool:
        """Return whether ``name`` exists."""
        return bool(self._fs.exists(self._path(name)))

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""
        path = self._path(directory)
        if not self._fs.exists(path):
            return []
        return [status.getPath().getName() for status in self._fs.listStatus(path)]

    def read(self, name: str) -> bytes | None:
        """Return the bytes of file ``name`` (None if there is none): the one aside if a crash
        left the file only there (see ``write``)."""
        target = self._path(name)
        for path in (target, self._aside(target)):
            if self._fs.exists(path):
                stream = self._fs.open(path)
                try:
                    return bytes(stream.readAllBytes())
                finally:
                    stream.close()
        return None

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, whole or not at all: written aside, then renamed. Hadoop's
        rename does not overwrite, so the old file is deleted first, once the new one is whole
        aside: a crash between the two leaves the file only aside, complete, which ``read``
        takes and the next ``write`` first moves into place. Closed, not synced: as durable as
        Spark's own offset and commit logs beside it, written the same way."""
        target = self._path(name)
        aside = self._aside(target)
        if self._fs.exists(aside) and not self._fs.exists(target):
            self._move(aside, target)  # the write a crash interrupted after its delete
        stream = self._fs.create(aside, True)
        try:
            stream.write(data)
        finally:
            stream.close()
        if self._fs.exists(target):
            self._fs.delete(target, False)
        self._move(aside, target)

    def _move(self, source, target) -> None:
        if not self._fs.rename(source, target):
            raise CheckpointError(
                f"Could not move '{source.toString()}' to '{target.toString()}' in the checkpoint '{self.location}'"
            )

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        self._fs.delete(self._path(name), False)

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        self._fs.delete(self._path(name), True)

    def removeIfEmpty(self) -> None:
        """Remove the checkpoint's directory if nothing is left in it."""
        if self._fs is not None and self._fs.exists(self._root) and not self._fs.listStatus(self._root):
            self._fs.delete(self._root, False)

    def copyOut(self, name: str, local: str) -> None:
        """Copy ``name`` (a file or a directory) to the new local path ``local`` (no checksums)."""
        self._fs.copyToLocalFile(False, self._path(name), self._localPath(local), True)

    def copyIn(self, local: str, name: str) -> None:
        """Copy the local file or directory ``local`` to ``name``, which does not exist yet."""
        self._fs.copyFromLocalFile(False, True, self._localPath(local), self._path(name))

    def _path(self, name: str):
        return self._Path(self._root, name) if name else self._root

    def _aside(self, target):
        return self._Path(target.getParent(), target.getName() + WRITING)

    def _localPath(self, local: str):
        return self._Path(self._jvm.java.io.File(local).toURI())


def cannotKeep(owner: str, location: str, reason: str) -> str:
    """Return the message for a checkpoint location ``owner`` cannot use, and why."""
    return f"{owner}: cannot keep its checkpoint in '{location}': {reason}"


def checkpointStorage(location: str, owner: str) -> LocalCheckpointStorage | HadoopCheckpointStorage:
    """Return the storage of the checkpoint at ``location``, opened: a local path's, or a Hadoop
    URL's through this process's SparkContext. A location that cannot be used is a
    CheckpointError naming ``owner`` (a job) and the location."""
    if not isHadoopUrl(location):
        storage = LocalCheckpointStorage(location)
    else:
        from pyspark import SparkContext

        sparkContext = SparkContext._active_spark_context
        if sparkContext is None:
            raise CheckpointError(
                cannotKeep(owner, location, "a Hadoop URL is reached through Spark's JVM, and no SparkSession runs yet")
            )
        storage = HadoopCheckpointStorage(location, sparkContext)
    storage.open(owner)
    return storage
