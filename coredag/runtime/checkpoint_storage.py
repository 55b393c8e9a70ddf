"""Where a stream job's checkpoint keeps its files: a local directory, through ``files.LocalFiles``,
or a URL: through the driver's JVM (Hadoop, which a local path never starts) on a classic
session, through ``files.UrlFiles`` (fsspec) on a Spark Connect client. Each takes names
relative to the checkpoint (``states/batch-000000003.pickle``) and offers list, read, write whole
(aside, then renamed over), remove, and copy to or from a local path. A checkpoint another user
could write is refused, as it holds pickles (see ``permissions``)."""

import contextlib
import os
import posixpath
import shutil
import stat
import urllib.parse
import zlib
from collections.abc import Callable, Iterator

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.processors.full_disk import isFull, noSpaceError
from sparkjet.coredag.processors.output_paths import localPathOf
from sparkjet.coredag.runtime.files import (
    PRIVATE_DIRECTORY,
    WRITING,
    LocalFiles,
    UrlFiles,
    isUrl,
    makeDirectories,
    unreachableScheme,
    withoutPassword,
)
from sparkjet.coredag.runtime.output_directory import javaMessage
from sparkjet.coredag.runtime.permissions import checkPrivate, whyUnsafe
PERMISSIONS = "fs.capability.paths.permissions"
"""The capability of a Hadoop file system that keeps owners and permissions (HDFS, file://; not S3A)."""


class CheckpointError(JobError):
    """A stream job's checkpoint location cannot be reached or written, or others could write it."""


class UnreadableFile(Exception):
    """A checkpoint file that is there but cannot be read (a checksum that does not match, a
    directory in its place): its message says why, for the checkpoint's error to name the file."""


class LocalCheckpointStorage:
    """A checkpoint in a local directory, checked before it is read (see ``checkPrivate``) and made
    by its first write, readable by you alone; its files are ``LocalFiles``, each synced before
    it is renamed into place."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._files = LocalFiles(location, synced=True)
        self._owner = "A stream job"
        self._checked = False
        """Whether the directory exists and was found private; a removed one is checked again."""

    def open(self, owner: str) -> None:
        """Check the directory, if it exists, and those above it (see ``checkPrivate``); errors name ``owner``."""
        self._owner, self._checked = owner, False
        self._check()

    def _check(self, making: bool = False) -> None:
        """Check the directory once it exists (``making``: make it first, private)."""
        if self._checked:
            return
        inTheWay = _fileInTheWay(self.location)
        if inTheWay is not None:
            raise CheckpointError(
                cannotKeep(self._owner, self.location, f"'{inTheWay}' is a file, not a directory: give a directory")
            )
        if making:
            makeDirectories(self.location)
        self._checked = checkPrivate(
            self.location, lambda reason: cannotKeep(self._owner, self.location, reason), CheckpointError
        )

    def url(self, name: str) -> str:
        """Return the path Spark is given for ``name``."""
        return os.path.join(self.location, name)

    def exists(self, name: str) -> bool:
        """Return whether ``name`` exists."""
        self._check()
        return self._files.exists(name)

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist)."""
        self._check()
        return self._files.names(directory)

    def read(self, name: str) -> bytes | None:
        """Return the bytes of file ``name`` (None if there is none)."""
        self._check()
        try:
            return self._files.read(name)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise UnreadableFile(error.strerror or str(error)) from None

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, whole or not at all (see ``LocalFiles.write``)."""
        self._check(making=True)
        try:
            self._files.write(name, data, f"Writing the checkpoint '{self.location}'")
        except OSError as error:
            raise CheckpointError(
                f"Could not write '{self.url(name)}' ({len(data):,} bytes) in the checkpoint '{self.location}': "
                f"{error.strerror or error}; the last whole one stays"
            ) from None

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        self._files.remove(name)

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        self._files.removeTree(name)

    def removeIfEmpty(self) -> None:
        """Remove the checkpoint's directory if nothing is left in it."""
        try:
            os.rmdir(self.location)
        except OSError:
            return
        self._checked = False

    def copyOut(self, name: str, local: str) -> None:
        """Copy ``name`` (a file or a directory) to the new local path ``local``."""
        self._check()
        _copied(self.url(name), local)

    def copyIn(self, local: str, name: str) -> None:
        """Copy the local file or directory ``local`` to ``name``, which does not exist yet."""
        self._check(making=True)
        target = self.url(name)
        makeDirectories(os.path.dirname(target))
        _copied(local, target)


def _fileInTheWay(path: str) -> str | None:
    """Return what stands where local directory ``path``, or the nearest one above it, should
    be and is no directory (None if nothing does); a relative ``path`` is below the working directory."""
    path = os.path.abspath(path)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return None if os.path.isdir(path) else path


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
            permissions = self._fs.hasPathCapability(self._root, PERMISSIONS)
        except Exception as cause:
            self._fs = None
            raise CheckpointError(cannotKeep(owner, self.location, javaMessage(cause))) from None
        if permissions:
            self._checkPrivate(lambda reason: cannotKeep(owner, self.location, reason))

    def _checkPrivate(self, describe: Callable[[str], str]) -> None:
        """Raise a CheckpointError (``describe(reason)``) where another user could plant a file
        in the checkpoint, as ``checkPrivate`` does by the file system's FileStatus: the
        checkpoint or anything in it owned by another user or writable by group or others, a
        directory above it writable by group or others without the sticky bit (their owners are
        not judged: a cluster's superuser has no one name)."""
        you = self._jvm.org.apache.hadoop.security.UserGroupInformation.getCurrentUser().getShortUserName()
        root = self._fs.makeQualified(self._root)
        existing = root
        while not self._fs.exists(existing):
            existing = existing.getParent()
        above, path = [], existing if existing != root else root.getParent()
        while path is not None:
            above.append(path)
            path = path.getParent()
        statuses = [(self._fs.getFileStatus(path), True) for path in reversed(above)]
        if existing == root:
            statuses.append((self._fs.getFileStatus(root), False))
        for status, isAbove in _inside(self._fs, statuses):
            owner = status.getOwner()
            kind = stat.S_IFDIR if status.isDirectory() else stat.S_IFREG
            reason = whyUnsafe(
                status.getPath().toString(), kind | status.getPermission().toShort(),
                None if isAbove or owner == you else owner, lambda: False, isAbove,
            )
            if reason is not None:
                raise CheckpointError(describe(reason))

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
        left the file only there (see ``write``). One the file system cannot read (on ``file://``,
        one changed behind its checksum) is an UnreadableFile."""
        target = self._path(name)
        for path in (target, self._aside(target)):
            if self._fs.exists(path):
                try:
                    stream = self._fs.open(path)
                    try:
                        return bytes(stream.readAllBytes())
                    finally:
                        stream.close()
                except Exception as cause:
                    raise UnreadableFile(javaMessage(cause)) from None
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
        self._makePrivateDirectories(target.getParent())
        try:
            stream = self._fs.create(aside, True)
            try:
                stream.write(data)
            finally:
                stream.close()
        except Exception as error:
            with contextlib.suppress(Exception):  # the write's own failure is what the job says
                self._fs.delete(aside, False)
            if isFull(error):
                raise noSpaceError(
                    f"Writing the checkpoint '{withoutPassword(self.location)}'", withoutPassword(target.toString()),
                    f"writing {len(data):,} bytes", self._fs.getStatus(target).getRemaining(),
                ) from None
            raise
        if self._fs.exists(target):
            self._fs.delete(target, False)
        self._move(aside, target)

    def _makePrivateDirectories(self, path) -> None:
        """Make directory ``path`` and those missing above it, each readable by you alone."""
        missing = []
        while path is not None and not self._fs.exists(path):
            missing.append(path)
            path = path.getParent()
        for directory in reversed(missing):
            self._fs.mkdirs(directory, self._jvm.org.apache.hadoop.fs.permission.FsPermission(f"{PRIVATE_DIRECTORY:o}"))

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
        """Copy ``name`` (a file or a directory) to the new local path ``local``, but the files
        Spark's query is still writing (``IN_FLIGHT``: one listed may be gone, renamed, when it
        is read; Hadoop's FTP client then fails with "Null InputStream")."""
        path = self._path(name)
        if not self._fs.getFileStatus(path).isDirectory():
            self._fs.copyToLocalFile(False, path, self._localPath(local), True)
            return
        makeDirectories(local)
        names = [child.getPath().getName() for child in self._fs.listStatus(path)]
        for childName in sorted(set(names) - IN_FLIGHT(local, names)):
            self.copyOut(f"{name}/{childName}", os.path.join(local, childName))

    def copyIn(self, local: str, name: str) -> None:
        """Copy the local file or directory ``local`` to ``name``, which does not exist yet."""
        self._makePrivateDirectories(self._path(name).getParent())
        self._fs.copyFromLocalFile(False, True, self._localPath(local), self._path(name))

    def _path(self, name: str):
        return self._Path(self._root, name) if name else self._root

    def _aside(self, target):
        return self._Path(target.getParent(), target.getName() + WRITING)

    def _localPath(self, local: str):
        return self._Path(self._jvm.java.io.File(local).toURI())


class UrlCheckpointStorage:
    """A checkpoint at a URL reached in this process through fsspec (``files.UrlFiles``), as a
    Spark Connect client reaches one: the Spark server writes its query checkpoint there
    through Hadoop, and keeps on ``file://`` a hidden checksum beside each file it writes
    (``.name.crc``). As Hadoop does, a listing hides those checksums, a read checks the file
    against its own, and a file's checksum goes with the file; this storage writes none (a
    file without one is read unchecked, by Hadoop too)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._files = UrlFiles(location)

    def open(self, owner: str) -> None:
        """Reach the file system (asking it whether the directory exists; the first write makes
        it), and check a ``file:`` URL's directory as a local one (see ``checkPrivate``); a
        scheme fsspec cannot reach here, or a file system that does not answer, is a
        CheckpointError naming ``owner``."""
        unreachable = unreachableScheme(self.location)
        if unreachable is not None:
            scheme = urllib.parse.urlsplit(self.location).scheme
            raise CheckpointError(
                cannotKeep(
                    owner, self.location,
                    f"a Spark Connect client reaches it through fsspec, which says: {unreachable}. Install the "
                    f"library of '{scheme}://' file systems where the client runs (s3fs for s3a://, pyarrow and "
                    "Hadoop's libhdfs for hdfs://), or keep the checkpoint in a directory path",
                )
            )
        try:
            self._files.exists()
        except Exception as cause:
            raise CheckpointError(cannotKeep(owner, self.location, f"{type(cause).__name__}: {cause}")) from None
        local = localPathOf(self.location)
        if local is not None:
            checkPrivate(local, lambda reason: cannotKeep(owner, self.location, reason), CheckpointError)

    def url(self, name: str) -> str:
        """Return the URL Spark is given for ``name``: the checkpoint's as given, and ``name``."""
        return f"{self.location.rstrip('/')}/{name}" if name else self.location

    def exists(self, name: str) -> bool:
        """Return whether ``name`` exists."""
        return self._files.exists(name)

    def names(self, directory: str = "") -> list[str]:
        """Return the names in ``directory`` (none if it does not exist), but Hadoop's checksums."""
        return [name for name in self._files.names(directory) if not isChecksum(name)]

    def read(self, name: str) -> bytes | None:
        """Return the bytes of file ``name`` (None if there is none): the one aside if a crash
        left the file only there (see ``write``). One that cannot be read, or that its Hadoop
        checksum does not match, is an UnreadableFile."""
        for candidate in (name, name + WRITING):
            try:
                data = self._files.read(candidate)
                checksum = self._checksum(candidate)
            except FileNotFoundError:
                continue
            except Exception as cause:
                said = cause.strerror if isinstance(cause, OSError) else None
                raise UnreadableFile(said or f"{type(cause).__name__}: {cause}") from None
            wrong = None if checksum is None else checksumMismatch(data, checksum)
            if wrong is not None:
                raise UnreadableFile(f"{wrong}, in '{withoutPassword(self.url(checksumName(candidate)))}'")
            return data
        return None

    def _checksum(self, name: str) -> bytes | None:
        """Return the checksum Hadoop keeps beside file ``name`` (None if there is none)."""
        try:
            return self._files.read(checksumName(name))
        except FileNotFoundError:
            return None

    def write(self, name: str, data: bytes) -> None:
        """Make ``data`` file ``name``, whole or not at all, as ``HadoopCheckpointStorage.write``
        does (a rename does not overwrite on every file system): written aside, the old file
        and its checksum deleted, the new one renamed into place; ``read`` takes one a crash
        left aside, and the next ``write`` first moves it into place."""
        fileSystem, target = self._files.reach(name)
        aside = target + WRITING
        if fileSystem.exists(aside) and not fileSystem.exists(target):
            self._move(name)  # the write a crash interrupted after its delete
        self._makeDirectories(posixpath.dirname(name))
        try:
            fileSystem.pipe_file(aside, data)
        except Exception as error:
            with contextlib.suppress(Exception):  # the write's own failure is what the job says
                fileSystem.rm_file(aside)
            if isFull(error):
                raise noSpaceError(
                    f"Writing the checkpoint '{withoutPassword(self.location)}'", self._files.where(name),
                    f"writing {len(data):,} bytes", None,
                ) from None
            raise
        self._removeFile(name)
        self._move(name)

    def _move(self, name: str) -> None:
        """Rename file ``name`` written aside into place."""
        try:
            self._files.move(name + WRITING, name)
        except Exception as cause:
            raise CheckpointError(
                f"Could not move '{self._files.where(name + WRITING)}' to '{self._files.where(name)}' in the checkpoint "
                f"'{withoutPassword(self.location)}': {type(cause).__name__}: {cause}"
            ) from None

    def _makeDirectories(self, directory: str) -> None:
        """Make ``directory`` of the checkpoint and those missing above it (a local one's
        readable by you alone, as Hadoop makes them)."""
        if localPathOf(self.location) is not None:
            makeDirectories(self._files.reach(directory)[1])
        else:
            self._files.makeDirectories(directory)

    def _removeFile(self, name: str) -> None:
        """Remove file ``name``, if it is there, and its checksum."""
        for removed in (name, checksumName(name)):
            fileSystem, path = self._files.reach(removed)
            if fileSystem.exists(path):  # FTP's delete of a missing file fails with a permission error
                fileSystem.rm_file(path)

    def remove(self, name: str) -> None:
        """Remove file ``name``."""
        self._removeFile(name)

    def removeTree(self, name: str) -> None:
        """Remove file or directory ``name`` with all it holds (nothing if it is not there)."""
        self._files.removeTree(name)
        self._files.removeTree(checksumName(name))

    def removeIfEmpty(self) -> None:
        """Remove the checkpoint's directory if nothing is left in it."""
        fileSystem, root = self._files.reach()
        with contextlib.suppress(Exception):
            if fileSystem.isdir(root) and not fileSystem.ls(root, detail=False):
                fileSystem.rmdir(root)

    def copyOut(self, name: str, local: str) -> None:
        """Copy ``name`` (a file or a directory) to the new local path ``local``, its files
        checked against their checksums and without them, but the files Spark's query is
        still writing (``IN_FLIGHT``), as ``HadoopCheckpointStorage.copyOut`` does."""
        fileSystem, path = self._files.reach(name)
        if not fileSystem.isdir(path):
            data = self.read(name)
            if data is None:
                raise FileNotFoundError(self._files.where(name))
            with open(local, "wb") as file:
                file.write(data)
            return
        makeDirectories(local)
        names = self.names(name)
        for childName in sorted(set(names) - IN_FLIGHT(local, names)):
            self.copyOut(f"{name}/{childName}", os.path.join(local, childName))

    def copyIn(self, local: str, name: str) -> None:
        """Copy the local file or directory ``local`` to ``name``, which does not exist yet,
        without the local checksums (as Hadoop's copy leaves them: they are a file system's own)."""
        if os.path.isdir(local):
            self._makeDirectories(name)
            for childName in sorted(os.listdir(local)):
                if not isChecksum(childName):
                    self.copyIn(os.path.join(local, childName), f"{name}/{childName}")
            return
        fileSystem, path = self._files.reach(name)
        self._makeDirectories(posixpath.dirname(name))
        with open(local, "rb") as file:
            fileSystem.pipe_file(path, file.read())


def isChecksum(name: str) -> bool:
    """Return whether ``name`` is a checksum Hadoop keeps beside a file (``.name.crc``)."""
    return name.startswith(".") and name.endswith(".crc")


def checksumName(name: str) -> str:
    """Return the name of the checksum Hadoop keeps beside file ``name``."""
    directory, _, base = name.rpartition("/")
    return f"{directory}/.{base}.crc" if directory else f".{base}.crc"


CHECKSUM_HEADER = b"crc\0"
"""How Hadoop's checksum file starts (ChecksumFileSystem's CHECKSUM_VERSION), followed by the
bytes each checksum covers (a big-endian int) and a big-endian CRC-32 of each such chunk."""


def checksumMismatch(data: bytes, checksum: bytes) -> str | None:
    """Return why ``data`` does not match Hadoop's ``checksum`` of it (None if it does), as
    Hadoop's read of the file would find."""
    if not checksum.startswith(CHECKSUM_HEADER) or len(checksum) < 8:
        return "Hadoop's checksum beside it is not one"
    chunk = int.from_bytes(checksum[4:8], "big")
    expected = b"".join(zlib.crc32(data[start:start + chunk]).to_bytes(4, "big") for start in range(0, len(data), chunk))
    if checksum[8:] != expected:
        return f"Checksum error: its {len(data):,} bytes do not match Hadoop's checksum of them"
    return None


def _inside(fs, statuses: list) -> Iterator[tuple[object, bool]]:
    """Yield each of ``statuses`` (FileStatus, whether above the checkpoint), and after the
    checkpoint's own everything in it."""
    for status, isAbove in statuses:
        yield status, isAbove
        if not isAbove and status.isDirectory():
            yield from _inside(fs, [(child, False) for child in fs.listStatus(status.getPath())])


def cannotKeep(owner: str, location: str, reason: str) -> str:
    """Return the message for a checkpoint location ``owner`` cannot use, and why."""
    return f"{owner}: cannot keep its checkpoint in '{withoutPassword(location)}': {reason}"


def checkpointStorage(
    location: str, owner: str
) -> LocalCheckpointStorage | HadoopCheckpointStorage | UrlCheckpointStorage:
    """Return the storage of the checkpoint at ``location``, opened: a local path's; a URL's
    through this process's SparkContext (Hadoop in the driver's JVM), or through fsspec on a
    Spark Connect client, which has no JVM. A location that cannot be used is a
    CheckpointError naming ``owner`` (a job) and the location."""
    if not isUrl(location):
        storage = LocalCheckpointStorage(location)
    else:
        from pyspark import SparkContext
        from pyspark.sql.utils import is_remote

        sparkContext = SparkContext._active_spark_context
        if is_remote():
            storage = UrlCheckpointStorage(location)
        elif sparkContext is None:
            raise CheckpointError(
                cannotKeep(owner, location, "a Hadoop URL is reached through Spark's JVM, and no SparkSession runs yet")
            )
        else:
            storage = HadoopCheckpointStorage(location, sparkContext)
    storage.open(owner)
    return storage
