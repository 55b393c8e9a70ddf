"""A full disk, said as such: where a write was, the bytes it needed and those free there; and
the files a failed write had begun aside, removed so the space goes back at once."""

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator

from sparkjet.coredag.errors import NoSpaceError

NO_SPACE = "No space left on device"
"""What the operating system says of a full disk, in Python's and Java's words alike."""
QUOTA_EXCEEDED = "Disk quota exceeded"
FULL = (errno.ENOSPC, errno.EDQUOT)

ADVICE = (
    "free space there and run the job again (a stream job goes on from its last committed micro-batch; "
    "what the failed one wrote aside is removed, committed files stay)"
)


def isFull(error: BaseException) -> bool:
    """Return whether ``error`` says a disk is full or a quota used up, as Python or Java says it."""
    if isinstance(error, OSError) and error.errno in FULL:
        return True
    return NO_SPACE in str(error) or QUOTA_EXCEEDED in str(error)


def freeBytes(path: str) -> int | None:
    """Return the bytes free on the local file system of ``path`` (or of the nearest directory
    above it that exists); None where that cannot be asked."""
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def noSpaceError(doing: str, location: str, needed: str, free: int | None) -> NoSpaceError:
    """Return the error of ``doing`` (what was written) at ``location`` on a full disk: ``needed``
    says the bytes it needed, ``free`` the bytes free there (None: not known)."""
    space = f"{needed}, {free:,} bytes free there" if free is not None else needed
    return NoSpaceError(f"{doing}: no space left on the device of '{location}' ({space}): {ADVICE}")


@contextlib.contextmanager
def removedOnFailure(doing: str, location: str, needed: int, *asides: str) -> Iterator[None]:
    """Run a block that writes the local files ``asides`` (then renames them into place); where
    it fails, remove what of them is left, so a full disk gets its space back at once, and say
    a full disk as a NoSpaceError naming ``location`` and the ``needed`` bytes."""
    try:
        yield
    except OSError as error:
        for aside in asides:
            with contextlib.suppress(OSError):
                os.remove(aside)
        if isFull(error):
            raise noSpaceError(doing, location, f"writing {needed:,} bytes", freeBytes(location)) from None
        raise
