"""A job's output directory: refused when unsafe or taken, claimed when the write begins,
committed whole, and on failure only what the job itself wrote is removed.

The protocol, the same for a local path and a Hadoop URL: the job creates the directory
itself (exclusively, so of two jobs racing for it one wins and the other touches nothing),
Spark writes into a hidden staging directory inside it (readers skip hidden names, as
Hadoop's do), and the commit moves the part files up, ``_SUCCESS`` last. An abort removes the
staging directory, the files the commit moved, the directory if it is still empty, and the
parents the job created, if empty: never anything the job did not create.
"""

import os
import shutil
import urllib.parse
import uuid

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.processors.output_paths import alreadyExists, localPathOf

STAGING_PREFIX = ".sparkjet-staging-"
"""The name of the hidden directory Spark writes into, inside the claimed output directory."""

_LAST = ("_SUCCESS", "._SUCCESS.crc")
"""Moved last by a commit: a reader that waits for ``_SUCCESS`` sees every part file."""


class LocalOutputDirectory:
    """A job's claim on a new local directory: what it created, so an abort removes just that."""

    def __init__(self, directory: str, origin: str) -> None:
        self.directory, self.origin = directory, origin
        self.target = localPathOf(directory)
        self.staging = os.path.join(self.target, STAGING_PREFIX + uuid.uuid4().hex)
        self._createdParents: list[str] = []
        self._claimed = False
        self._moved: list[str] = []

    @property
    def sparkPath(self) -> str:
        """Return the URL Spark writes the part files to: the staging directory."""
        return "file://" + urllib.parse.quote(self.staging)

    def claim(self) -> None:
        """Create the directory, and its missing parents; refuse one that appeared meanwhile."""
        try:
            self._createParents(os.path.dirname(self.target))
            os.mkdir(self.target)
        except FileExistsError:
            raise OutputError(alreadyExists(self.directory, self.origin, meanwhile=True)) from None
        except OSError as cause:
            raise OutputError(self._cannotCreate(cause)) from cause
        self._claimed = True

    def _createParents(self, path: str) -> None:
        missing = []
        while not os.path.isdir(path):
            missing.append(path)
            path = os.path.dirname(path)
        for parent in reversed(missing):
            try:
                os.mkdir(parent)
            except FileExistsError:
                continue
            self._createdParents.append(parent)

    def _cannotCreate(self, cause: OSError) -> str:
        where = f" ('{cause.filename}')" if cause.filename and cause.filename != self.target else ""
        return (
            f"{self.origin}: cannot create the output directory '{self.directory}': "
            f"{cause.strerror or cause}{where}"
        )

    def commit(self) -> None:
        """Move the part files Spark wrote up into the directory, ``_SUCCESS`` last."""
        names = sorted(os.listdir(self.staging), key=lambda name: name in _LAST)
        for name in names:
            if name.startswith("_temporary"):
                continue
            os.rename(os.path.join(self.staging, name), os.path.join(self.target, name))
            self._moved.append(name)
        shutil.rmtree(self.staging)

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        if self._claimed:
            shutil.rmtree(self.staging, ignore_errors=True)
            for name in self._moved:
                _removeQuietly(os.remove, os.path.join(self.target, name))
            _removeQuietly(os.rmdir, self.target)
        for parent in reversed(self._createdParents):
            _removeQuietly(os.rmdir, parent)


def _removeQuietly(remove, path: str) -> None:
    """Remove ``path``; leave it if it went or is not empty (what is in it is not the job's)."""
    try:
        remove(path)
    except OSError:
        pass


class HadoopOutputDirectory:
    """A job's claim on a new directory of a Hadoop file system (``hdfs://``, ``s3a://``,
    ``file://`` ...), through the driver's JVM: the same protocol as a local directory, the
    exclusive creation made by a claim file beside the directory (Hadoop's mkdirs is not
    exclusive)."""

    def __init__(self, directory: str, origin: str, sparkContext) -> None:
        self.directory, self.origin = directory, origin
        jvm = sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self.target = self._Path(directory)
        self._fs = self.target.getFileSystem(sparkContext._jsc.hadoopConfiguration())
        self.staging = self._Path(self.target, STAGING_PREFIX + uuid.uuid4().hex)
        self._createdParents: list = []
        self._claimed = False
        self._moved: list = []

    @property
    def sparkPath(self) -> str:
        """Return the URL Spark writes the part files to: the staging directory."""
        return self.staging.toString()

    def claim(self) -> None:
        """Create the directory, and its missing parents; refuse one that exists."""
        parent = self.target.getParent()
        marker = self._Path(parent, f".{self.target.getName()}.sparkjet-claim")
        try:
            self._createdParents = self._missingAncestors(parent)
            if not self._fs.createNewFile(marker):
                raise OutputError(
                    f"{alreadyExists(self.directory, self.origin)}; another sparkjet job is creating "
                    f"it (if none is, remove the leftover '{marker.toString()}')"
                )
            try:
                if self._fs.exists(self.target):
                    raise OutputError(alreadyExists(self.directory, self.origin))
                self._fs.mkdirs(self.target)
                self._claimed = True
            finally:
                self._fs.delete(marker, False)
        except OutputError:
            raise
        except Exception as cause:
            raise OutputError(
                f"{self.origin}: cannot create the output directory '{self.directory}': "
                f"{javaMessage(cause)}"
            ) from None

    def _missingAncestors(self, path) -> list:
        missing = []
        while path is not None and not self._fs.exists(path):
            missing.append(path)
            path = path.getParent()
        return missing

    def commit(self) -> None:
        """Move the part files Spark wrote up into the directory, ``_SUCCESS`` last."""
        statuses = sorted(self._fs.listStatus(self.staging), key=lambda s: s.getPath().getName() in _LAST)
        for status in statuses:
            source = status.getPath()
            if source.getName().startswith("_temporary"):
                continue
            destination = self._Path(self.target, source.getName())
            if not self._fs.rename(source, destination):
                raise OutputError(
                    f"{self.origin}: could not move '{source.toString()}' to "
                    f"'{destination.toString()}' while committing '{self.directory}'"
                )
            self._moved.append(destination)
        self._fs.delete(self.staging, True)

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        if self._claimed:
            self._quietly(lambda: self._fs.delete(self.staging, True))
            for path in self._moved:
                self._quietly(lambda: self._fs.delete(path, False))
        for path in ([self.target] if self._claimed else []) + self._createdParents:
            self._quietly(lambda: self._deleteIfEmpty(path))

    def _deleteIfEmpty(self, path) -> None:
        if self._fs.exists(path) and not self._fs.listStatus(path):
            self._fs.delete(path, False)

    @staticmethod
    def _quietly(action) -> None:
        try:
            action()
        except Exception:
            pass


def javaMessage(error: Exception) -> str:
    """Return the Java exception behind a py4j error as ``Class: message``, else ``error``."""
    java = getattr(error, "java_exception", None)
    return str(error) if java is None else java.toString()
