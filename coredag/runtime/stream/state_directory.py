"""sparkjet's state directory (``$SPARKJET_STATE_DIR``, else ``~/.sparkjet/state``), which keeps
jobs' default checkpoints, exported snapshots and the fed sources' files of checkpoints at a URL:
every default path sparkjet chooses, and the one-to-one mapping of a job's or a snapshot's name
to a directory name there."""

import hashlib
import os
import re

from sparkjet.coredag.errors import JobError

STATE_DIRECTORY_VARIABLE = "SPARKJET_STATE_DIR"
"""The environment variable naming the directory of jobs' default checkpoints (else ~/.sparkjet/state)."""

EXPORTED = "exported-snapshots"
"""The directory under the state directory holding the exported snapshots."""
FED_SOURCES = "fed-sources"
"""The directory under the state directory holding the fed sources' files of checkpoints at a URL."""

NAME_BYTES = 255
"""The longest file name most file systems take, in bytes."""


def stateDirectory() -> str:
    """Return the directory of sparkjet's state: ``$SPARKJET_STATE_DIR``, else ``~/.sparkjet/state``."""
    return os.environ.get(STATE_DIRECTORY_VARIABLE) or os.path.join(os.path.expanduser("~"), ".sparkjet", "state")


def defaultCheckpoint(jobName: str) -> str:
    """Return the checkpoint of job ``jobName`` where none is set: named after the job."""
    return os.path.join(stateDirectory(), fileName(jobName, f"Job '{jobName}'"))


def exportedSnapshotDirectory(name: str) -> str:
    """Return the directory of the snapshot exported under ``name``."""
    return os.path.join(stateDirectory(), EXPORTED, fileName(name, f"Snapshot '{name}'"))


def fedSourcesDirectory(checkpoint: str) -> str:
    """Return the local directory of the fed sources' files of the checkpoint at URL ``checkpoint``."""
    return os.path.join(stateDirectory(), FED_SOURCES, directoryName(checkpoint))


def fileName(name: str, owner: str) -> str:
    """Return ``name`` as a directory name of its own: letters, digits, ``_``, ``-`` and ``.``
    as they are (a leading ``.`` escaped), every other character as ``%XX`` of its UTF-8 bytes,
    so two names never share a directory and none climbs out (``..``) or hides. A name that
    cannot be one (empty, with a control character, too long) is a JobError naming ``owner``."""
    if not isinstance(name, str) or not name or any(ord(character) < 32 or ord(character) == 127 for character in name):
        raise JobError(f"{owner}: the name {name!r} cannot name a directory: give one without control characters")
    encoded = "".join(
        character if re.fullmatch(r"[A-Za-z0-9_.-]", character) else "".join(f"%{byte:02X}" for byte in character.encode())
        for character in name
    )
    encoded = "%2E" + encoded[1:] if encoded.startswith(".") else encoded
    if len(encoded) > NAME_BYTES:
        raise JobError(
            f"{owner}: the name {name[:40]!r}... ({len(name)} characters) is too long to name a directory "
            f"({len(encoded)} bytes as a file name, {NAME_BYTES} at most): give a shorter one"
        )
    return encoded


def directoryName(name: str) -> str:
    """Return a directory name of ``name``'s own: ``name`` encoded (``fileName``), or its SHA-256
    in hexadecimal where that is too long (an encoded name has a ``%``: the two never meet)."""
    try:
        return fileName(name, "A directory")
    except JobError:
        return hashlib.sha256(name.encode("utf-8")).hexdigest()


def snapshotName(name: str, owner: str) -> str:
    """Return ``name`` if it can name an exported snapshot's directory (see ``fileName``); else
    raise the JobError naming ``owner``, where the name is given, before anything is done with it."""
    fileName(name, owner)
    return name
