"""A job's output directory: refused when unsafe or taken, claimed when the write begins,
committed whole, and on failure only what the job itself wrote is removed. A stream job claims
the directory once and commits each micro-batch's part files into it under names of their own.
The protocol, the same for a local path and a Hadoop URL: docs/internals/core-dag-on-spark.md."""

import os
import shutil
import urllib.parse
import uuid

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.processors.full_disk import freeBytes
from sparkjet.coredag.processors.output_paths import alreadyExists, localPathOf
from sparkjet.coredag.runtime.files import makeDirectories

STAGING_PREFIX = ".sparkjet-staging-"
"""The name of the hidden directory Spark writes into, inside the claimed output directory."""

_LAST = ("_SUCCESS", "._SUCCESS.crc")
"""Moved last by a commit: a reader that waits for ``_SUCCESS`` sees every part file."""


def microBatchName(name: str, batch: int) -> str:
    """Return the name part file (or checksum) ``name`` of micro-batch ``batch`` takes in the directory."""
    return name.replace("part-", f"part-{batch:05d}-", 1)


class OutputDirectoryClaim:
    """What a local and a Hadoop output directory share: a claim made once, a staging directory
    per write, and the micro-batch whose part files a stream's commit names."""

    def __init__(self, directory: str, origin: str, resumes: bool = False) -> None:
        self.directory, self.origin, self._resumes = directory, origin, resumes
        self._claimed = False
        self._kept = False
        """Whether a committed micro-batch (this run's or an earlier run's) wrote here: the
        directory then stays whatever happens."""
        self._batch: int | None = None
        self._moved: list = []

    def startMicroBatch(self, batch: int) -> None:
        """Write micro-batch ``batch`` of a stream next: a new staging directory; an abort then
        removes only its files (and the directory, if still empty)."""
        self._batch, self._moved = batch, []
        self.staging = self._stagingPath()

    def keepMicroBatch(self) -> None:
        """Keep the files the current micro-batch moved in for good: it committed, so no abort
        removes them, nor the directory."""
        self._moved, self._kept = [], True

    def claimOnce(self) -> None:
        """Claim the directory unless this job already did (a stream's later micro-batches, or
        a restarted stream job's earlier run: then the directory is taken as it is)."""
        if self._claimed:
            return
        if self._resumes and self._exists():
            self._claimed = self._kept = True
            self._removeLeftStaging()
        else:
            self.claim()

    def _staleOfBatch(self, names, committed: set[str]) -> list[str]:
        """Return the files among ``names`` an earlier run of this micro-batch committed and this
        one does not write (it ran on more processors, or found a partition empty that was not):
        they go, or their lines would be there twice. Only this job writes such names here."""
        if self._batch is None:
            return []
        own = (microBatchName("part-", self._batch), "." + microBatchName("part-", self._batch))
        return [name for name in names if name.startswith(own) and name not in committed]

    def _committedName(self, name: str, emptyParts: set[str]) -> str | None:
        """Return the name a staged file takes when committed, None for one a micro-batch drops
        (``_SUCCESS``, the ``emptyParts`` and their checksums)."""
        if self._batch is None:
            return name
        if name in _LAST or name in emptyParts or (name.endswith(".crc") and name[1:-4] in emptyParts):
            return None
        return microBatchName(name, self._batch)


class LocalOutputDirectory(OutputDirectoryClaim):
    """A job's claim on a new local directory: what it created, so an abort removes just that."""

    def __init__(self, directory: str, origin: str, resumes: bool = False) -> None:
        super().__init__(directory, origin, resumes)
        self.target = localPathOf(directory)
        self.staging = self._stagingPath()
        self._createdParents: list[str] = []

    def _stagingPath(self) -> str:
        return os.path.join(self.target, STAGING_PREFIX + uuid.uuid4().hex)

    def _exists(self) -> bool:
        return os.path.isdir(self.target)

    def _removeLeftStaging(self) -> None:
        """Remove the staging directories a killed earlier run left (hidden, never read)."""
        for name in os.listdir(self.target):
            if name.startswith(STAGING_PREFIX):
                shutil.rmtree(os.path.join(self.target, name), ignore_errors=True)

    @property
    def sparkPath(self) -> str:
        """Return the URL Spark writes the part files to: the staging directory."""
        return "file://" + urllib.parse.quote(self.staging)

    def claim(self) -> None:
        """Create the directory, and its missing parents; refuse one that appeared meanwhile."""
        try:
            makeDirectories(os.path.dirname(self.target), mode=0o777, made=self._createdParents)
            os.mkdir(self.target)
        except FileExistsError:
            raise OutputError(alreadyExists(self.directory, self.origin, meanwhile=True)) from None
        except OSError as cause:
            raise OutputError(self._cannotCreate(cause)) from cause
        self._claimed = True

    def _cannotCreate(self, cause: OSError) -> str:
        where = f" ('{cause.filename}')" if cause.filename and cause.filename != self.target else ""
        return (
            f"{self.origin}: cannot create the output directory '{self.directory}': "
            f"{cause.strerror or cause}{where}"
        )

    def commit(self) -> None:
        """Move the part files Spark wrote up into the directory, ``_SUCCESS`` last."""
        names = sorted(os.listdir(self.staging), key=lambda name: name in _LAST)
        empty = {name for name in names if os.path.getsize(os.path.join(self.staging, name)) == 0}
        moves = {
            name: committed for name in names
            if not name.startswith("_temporary") and (committed := self._committedName(name, empty)) is not None
        }
        for stale in self._staleOfBatch(os.listdir(self.target), set(moves.values())):
            os.remove(os.path.join(self.target, stale))
        for name, committed in moves.items():
            os.rename(os.path.join(self.staging, name), os.path.join(self.target, committed))
            self._moved.append(committed)
        shutil.rmtree(self.staging)

    def freeSpace(self) -> int | None:
        """Return the bytes free on the directory's file system."""
        return freeBytes(self.target)

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        if self._claimed:
            shutil.rmtree(self.staging, ignore_errors=True)
            for name in self._moved:
                _removeQuietly(os.remove, os.path.join(self.target, name))
            if not self._kept:
                _removeQuietly(os.rmdir, self.target)
        for parent in reversed(self._createdParents):
            _removeQuietly(os.rmdir, parent)


def _removeQuietly(remove, path: str) -> None:
    """Remove ``path``; leave it if it went or is not empty (what is in it is not the job's)."""
    try:
        remove(path)
    except OSError:
        pass


class HadoopOutputDirectory(OutputDirectoryClaim):
    """A job's claim on a new directory of a Hadoop file system (``hdfs://``, ``s3a://``,
    ``file://`` ...), through the driver's JVM: the same protocol as a local directory, the
    exclusive creation made by a claim file beside the directory (Hadoop's mkdirs is not
    exclusive)."""

    def __init__(self, directory: str, origin: str, sparkContext, resumes: bool = False) -> None:
        super().__init__(directory, origin, resumes)
        jvm = sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self.target = self._Path(directory)
        self._fs = self.target.getFileSystem(sparkContext._jsc.hadoopConfiguration())
        self.staging = self._stagingPath()
        self._createdParents: list = []

    def _stagingPath(self):
        return self._Path(self.target, STAGING_PREFIX + uuid.uuid4().hex)

    def _exists(self) -> bool:
        return bool(self._fs.exists(self.target))

    def _removeLeftStaging(self) -> None:
        """Remove the staging directories a killed earlier run left (hidden, never read)."""
        for status in self._fs.listStatus(self.target):
            if status.getPath().getName().startswith(STAGING_PREFIX):
                self._fs.delete(status.getPath(), True)

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
        empty = {status.getPath().getName() for status in statuses if status.getLen() == 0}
        moves = {
            status.getPath(): committed for status in statuses
            if not status.getPath().getName().startswith("_temporary")
            and (committed := self._committedName(status.getPath().getName(), empty)) is not None
        }
        present = [status.getPath().getName() for status in self._fs.listStatus(self.target)]
        for stale in self._staleOfBatch(present, set(moves.values())):
            self._fs.delete(self._Path(self.target, stale), False)
        for source, committed in moves.items():
            destination = self._Path(self.target, committed)
            if self._batch is not None and self._fs.exists(destination):
                self._fs.delete(destination, False)  # a re-run micro-batch's own file, written again
            if not self._fs.rename(source, destination):
                raise OutputError(
                    f"{self.origin}: could not move '{source.toString()}' to "
                    f"'{destination.toString()}' while committing '{self.directory}'"
                )
            self._moved.append(destination)
        self._fs.delete(self.staging, True)

    def freeSpace(self) -> int | None:
        """Return the bytes free on the directory's file system, as it says (None where it cannot)."""
        try:
            return self._fs.getStatus(self.target).getRemaining()
        except Exception:
            return None

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        if self._claimed:
            self._quietly(lambda: self._fs.delete(self.staging, True))
            for path in self._moved:
                self._quietly(lambda: self._fs.delete(path, False))
        for path in ([self.target] if self._claimed and not self._kept else []) + self._createdParents:
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
    from py4j.protocol import Py4JJavaError  # here: a module a worker imports without any JVM

    return error.java_exception.toString() if isinstance(error, Py4JJavaError) else str(error)
