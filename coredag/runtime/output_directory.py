"""A job's output directory: refused when unsafe or taken, claimed when the write begins,
committed whole, and on failure only what the job itself wrote is removed. A stream job claims
the directory once and commits each micro-batch's part files into it under names of their own.
The protocol, the same for a local path, a Hadoop URL and a URL reached through fsspec:
docs/internals/core-dag-on-spark.md."""

import os
import urllib.parse
import uuid

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.processors.full_disk import freeBytes
from sparkjet.coredag.processors.output_paths import alreadyExists, localPathOf
from sparkjet.coredag.runtime.files import LocalFiles, UrlFiles, makeDirectories, unreachableScheme, withoutPassword

STAGING_PREFIX = ".sparkjet-staging-"
"""The name of the hidden directory Spark writes into, inside the claimed output directory."""

_LAST = ("_SUCCESS", "._SUCCESS.crc")
"""Moved last by a commit: a reader that waits for ``_SUCCESS`` sees every part file."""


def microBatchName(name: str, batch: int) -> str:
    """Return the name part file (or checksum) ``name`` of micro-batch ``batch`` takes in the directory."""
    return name.replace("part-", f"part-{batch:05d}-", 1)


class OutputDirectoryClaim:
    """What every output directory shares: a claim made once, a staging directory
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

    def _claimedByAnother(self, marker: str) -> OutputError:
        """Return the error of a claim whose claim file ``marker`` (beside the directory) exists."""
        return OutputError(
            f"{alreadyExists(self.directory, self.origin)}; another sparkjet job is creating it (if none is, "
            f"remove the leftover '{marker}')"
        )

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


class FilesOutputDirectory(OutputDirectoryClaim):
    """What a local directory and one at a URL reached through fsspec share: the steps of the
    protocol through a ``Files`` (``files``), the directory and its staging directory named in it."""

    def __init__(self, directory: str, origin: str, resumes: bool, files: LocalFiles | UrlFiles, target: str) -> None:
        super().__init__(directory, origin, resumes)
        self.files, self.target = files, target
        self.staging = self._stagingPath()
        self._createdParents: list[str] = []

    def _stagingPath(self) -> str:
        return _inside(self.target, STAGING_PREFIX + uuid.uuid4().hex)

    def _exists(self) -> bool:
        return self.files.exists(self.target)

    def _removeLeftStaging(self) -> None:
        """Remove the staging directories a killed earlier run left (hidden, never read)."""
        for name in self.files.names(self.target):
            if name.startswith(STAGING_PREFIX):
                self.files.removeTree(_inside(self.target, name))

    def createStaging(self) -> None:
        """Create this write's staging directory in the claimed directory."""
        self.files.makeDirectory(self.staging)

    def commit(self) -> None:
        """Move the part files written into the staging directory up into the directory, ``_SUCCESS`` last."""
        names = sorted(self.files.names(self.staging), key=lambda name: name in _LAST)
        empty = {name for name in names if self.files.size(_inside(self.staging, name)) == 0}
        moves = {
            name: committed for name in names
            if not name.startswith("_temporary") and (committed := self._committedName(name, empty)) is not None
        }
        for stale in self._staleOfBatch(self.files.names(self.target), set(moves.values())):
            self.files.remove(_inside(self.target, stale))
        for name, committed in moves.items():
            self.files.move(_inside(self.staging, name), _inside(self.target, committed))
            self._moved.append(committed)
        self.files.removeTree(self.staging)

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        if self._claimed:
            _quietly(self.files.removeTree, self.staging)
            for name in self._moved:
                _quietly(self.files.remove, _inside(self.target, name))
            if not self._kept:
                _quietly(self.files.removeIfEmpty, self.target)
        for parent in reversed(self._createdParents):
            _quietly(self.files.removeIfEmpty, parent)


def _inside(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name


def _parentOf(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name.strip("/") else ""


def _quietly(remove, name: str) -> None:
    """Remove ``name``; leave it if that fails (it went, or what is in it is not the job's)."""
    try:
        remove(name)
    except Exception:
        pass


class LocalOutputDirectory(FilesOutputDirectory):
    """A job's claim on a new local directory: what it created, so an abort removes just that."""

    def __init__(self, directory: str, origin: str, resumes: bool = False) -> None:
        super().__init__(directory, origin, resumes, LocalFiles("/"), localPathOf(directory))

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

    def freeSpace(self) -> int | None:
        """Return the bytes free on the directory's file system."""
        return freeBytes(self.target)


class UrlOutputDirectory(FilesOutputDirectory):
    """A job's claim on a new directory at a URL (``hdfs://``, ``ftp://`` ...) that the
    processes running the job reach through fsspec (``UrlFiles``): the protocol of
    ``HadoopOutputDirectory``, whose claim it makes the same way, with the same messages."""

    def __init__(self, directory: str, origin: str, resumes: bool = False) -> None:
        split = urllib.parse.urlsplit(directory)
        files = UrlFiles(f"{split.scheme}://{split.netloc}/")
        super().__init__(directory, origin, resumes, files, split.path.strip("/"))

    def claim(self) -> None:
        """Create the directory, and its missing parents; refuse one that exists. A claim file
        beside it, created exclusively, keeps two jobs from both creating it; a scheme fsspec
        does not reach here is refused before anything is written."""
        self._refuseUnreachable()
        parent = _parentOf(self.target)
        marker = _inside(parent, f".{self.target.rsplit('/', 1)[-1]}.sparkjet-claim")
        try:
            self._makeParents(parent)
            try:
                self.files.makeDirectory(marker)
            except FileExistsError:
                raise self._claimedByAnother(self.files.where(marker)) from None
            try:
                if self.files.exists(self.target):
                    raise OutputError(alreadyExists(self.directory, self.origin))
                self.files.makeDirectory(self.target)
                self._claimed = True
            finally:
                self.files.removeTree(marker)
        except OutputError:
            raise
        except Exception as cause:
            raise OutputError(
                f"{self.origin}: cannot create the output directory '{self.directory}': "
                f"{type(cause).__name__}: {cause}"
            ) from None

    def _makeParents(self, directory: str) -> None:
        """Make ``directory`` and the directories missing above it; note in ``_createdParents``
        those this job made, from the top down, as it goes (one made meanwhile by another is not noted)."""
        missing = []
        while directory and not self.files.exists(directory):
            missing.append(directory)
            directory = _parentOf(directory)
        for directory in reversed(missing):
            try:
                self.files.makeDirectory(directory)
            except FileExistsError:
                continue
            self._createdParents.append(directory)

    def _refuseUnreachable(self) -> None:
        try:
            unreachable = unreachableScheme(self.directory)
        except ImportError as error:
            unreachable = str(error)
        if unreachable is not None:
            scheme = urllib.parse.urlsplit(self.directory).scheme
            raise OutputError(
                f"{self.origin}: cannot write the output directory '{withoutPassword(self.directory)}': the tasks "
                f"write its part files through fsspec, which says: {unreachable}. Install fsspec and the library "
                f"of '{scheme}://' file systems where the job runs (pyarrow and Hadoop's libhdfs for hdfs://, "
                "s3fs for s3a://), or write to a directory of that machine's file system"
            )


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
                raise self._claimedByAnother(marker.toString())
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
