"""Who could plant a file in sparkjet's own directories (a checkpoint, the state directory, an
exported snapshot), which hold pickles that run code when they are read: a directory another
user owns or could write is refused (docs/internals/stream-state.md). The same judgement serves
a local path (``checkPrivate``) and a Hadoop FileStatus (``checkpoint_storage``)."""

import functools
import grp
import itertools
import os
import pwd
import stat
from collections.abc import Callable, Iterator

from sparkjet.coredag.errors import JobError


def checkPrivate(path: str, describe: Callable[[str], str], error: type[JobError]) -> bool:
    """Raise ``error`` (its message ``describe(reason)``) where another user could plant a file
    in the local directory ``path``: it or anything in it owned by another user than you (or
    root), or writable by group or others; a directory above it writable by group or others
    without the sticky bit, or owned by another user. A path not made yet is judged by the
    directory it would be made in. Return whether ``path`` exists (and was checked)."""
    real = os.path.realpath(path)
    existing = real
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    above = _directoriesAbove(real) if existing == real else [*_directoriesAbove(existing), existing]
    inside = _localEntries(real) if existing == real else ()
    privateGroup = functools.cache(_privateGroup)
    for entry, isAbove in itertools.chain(((path, True) for path in above), ((path, False) for path in inside)):
        status = os.lstat(entry)
        reason = whyUnsafe(
            entry, status.st_mode, _foreignOwner(status.st_uid),
            lambda: privateGroup(status.st_gid, status.st_uid), isAbove,
        )
        if reason is not None:
            raise error(describe(reason))
    return existing == real


def _directoriesAbove(path: str) -> list[str]:
    """Return the directories above ``path``, from the root down."""
    above = []
    while os.path.dirname(path) != path:
        path = os.path.dirname(path)
        above.append(path)
    return above[::-1]


def _localEntries(root: str) -> Iterator[str]:
    """Yield ``root`` and everything under it (symbolic links not followed)."""
    yield root
    for directory, subdirectories, files in os.walk(root):
        for name in subdirectories + files:
            yield os.path.join(directory, name)


def _foreignOwner(uid: int) -> str | None:
    """Return the name of user ``uid`` unless that is you or root (None)."""
    if uid in (os.getuid(), 0):
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _privateGroup(gid: int, uid: int) -> bool:
    """Whether group ``gid`` has user ``uid`` as its one member (a user private group, whose
    write permission Debian's ssh accepts too)."""
    try:
        members, owner = set(grp.getgrgid(gid).gr_mem), pwd.getpwuid(uid).pw_name
    except KeyError:
        return False
    primary = {user.pw_uid for user in pwd.getpwall() if user.pw_gid == gid}
    return bool(primary | members) and primary <= {uid} and members <= {owner}


def whyUnsafe(path: str, mode: int, foreignOwner: str | None, privateGroup: Callable[[], bool], above: bool) -> str | None:
    """Return why another user could plant a file in or as ``path`` (None if none could), and
    what to do: ``foreignOwner`` names its owner if another user; ``above``: a directory above
    the checkpoint, which the sticky bit keeps (others cannot move or remove what is yours)."""
    planted = "so another user could plant pickles there, which run code when they are read"
    if foreignOwner is not None:
        return f"'{path}' belongs to user '{foreignOwner}', {planted}: use a directory of your own"
    if stat.S_ISLNK(mode) or (above and mode & stat.S_ISVTX):
        return None
    if mode & stat.S_IWOTH or (mode & stat.S_IWGRP and not privateGroup()):
        writers = "every user" if mode & stat.S_IWOTH else "its group"
        fix = f"chmod go-w '{path}'" + ("" if above else " if you trust what is in it, else remove it")
        return f"'{path}' is writable by {writers} ({stat.filemode(mode)}), {planted}: {fix}"
    return None
