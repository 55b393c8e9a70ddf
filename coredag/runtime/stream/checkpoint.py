"""A stream job's checkpoint: Spark's query checkpoint (offsets written before a micro-batch,
commits after it), the processors' states saved at the end of each micro-batch, the files of
sources sparkjet feeds, and the output directories the job claimed. A restarted job takes the
states of Spark's last committed micro-batch; Spark runs the next one again with the same input.

The checkpoint is a local directory or a Hadoop URL (see ``checkpoint_storage``). The files of
the sources sparkjet feeds stay in a local directory either way: the sources write them with
Python's file API from the driver (a built source's feeder a file every tenth of a second, a
finite stream its files with the modification times that order Spark's reading), and Spark's
file source reads them where the driver wrote them. Under a Hadoop URL, that directory is
``$SPARKJET_STATE_DIR/fed-sources/<the URL as a file name>``, found again by a job restarted on
the same machine; one restarted on another machine finds its fed sources empty."""

import contextlib
import hashlib
import json
import logging
import os
import pickle
import shutil
import time

from sparkjet.coredag.errors import JobError
from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.model.metrics import SnapshotMetrics
from sparkjet.coredag.processors.sources import isHadoopUrl
from sparkjet.coredag.runtime.checkpoint_storage import WRITING, CheckpointError, checkpointStorage
from sparkjet.coredag.runtime.stream.state_directory import fileName, stateRoot

STATES = "states"
QUERY = "query"
CLAIMED = "claimed-outputs.json"
SOURCE_PREFIX = "source-"
FED_SOURCES = "fed-sources"
"""The directory under sparkjet's state directory holding the fed sources' files of checkpoints at a Hadoop URL."""

logger = logging.getLogger("sparkjet")


class StreamCheckpoint:
    """The checkpoint of one stream job, at ``location``: a local path or a Hadoop URL. Its
    storage is reached on first use, or by ``open`` with the job's name for the error."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.sourcesDirectory = (
            os.path.join(stateRoot(), FED_SOURCES, urlDirectoryName(location)) if isHadoopUrl(location) else location
        )
        """The local directory of the fed sources' files."""
        self._storage = None

    def open(self, jobName: str) -> "StreamCheckpoint":
        """Reach the checkpoint's storage now; one that cannot be reached (an unknown scheme, a
        file system that does not answer) is a CheckpointError naming the job and the location."""
        self._storage = checkpointStorage(self.location, f"Job '{jobName}'")
        return self

    @property
    def storage(self):
        """Return the checkpoint's storage, reached now if not yet."""
        if self._storage is None:
            self._storage = checkpointStorage(self.location, "A stream job")
        return self._storage

    @property
    def queryLocation(self) -> str:
        """Return the path or URL of Spark's query checkpoint."""
        return self.storage.url(QUERY)

    def sourceDirectory(self, number: int) -> str:
        """Return the local directory of stream source ``number``'s own files."""
        return os.path.join(self.sourcesDirectory, f"{SOURCE_PREFIX}{number}")

    def sourceNames(self) -> list[str]:
        """Return the names of the fed sources' directories."""
        entries = os.listdir(self.sourcesDirectory) if os.path.isdir(self.sourcesDirectory) else []
        return [name for name in entries if name.startswith(SOURCE_PREFIX)]

    def lastCommittedBatch(self) -> int | None:
        """Return the last micro-batch Spark committed (None before the first)."""
        batches = [int(name) for name in self.storage.names(f"{QUERY}/commits") if name.isdigit()]
        return max(batches, default=None)

    def restoredStates(self) -> dict:
        """Return the processors' states at the end of the last committed micro-batch (none
        before the first)."""
        batch = self.lastCommittedBatch()
        if batch is None:
            return {}
        saved = self.storage.read(statesName(batch))
        if saved is None:
            raise CheckpointError(
                f"The checkpoint '{self.location}' has no states of micro-batch {batch}, which Spark committed: "
                "it was changed from outside; remove it to start the job empty"
            )
        return pickle.loads(saved)

    def saveStates(self, batchId: int, states: dict) -> SnapshotMetrics:
        """Save the processors' states at the end of micro-batch ``batchId``, whole or not at
        all (written aside, then renamed), before Spark commits the micro-batch; return the
        snapshot's figures."""
        started, takenAt = time.perf_counter(), wallClockMillis()
        data = pickle.dumps(states)
        self.storage.write(statesName(batchId), data)
        self._removeStatesBefore(batchId - 1)
        return SnapshotMetrics(batchId, takenAt, len(data), time.perf_counter() - started)

    def _removeStatesBefore(self, batchId: int) -> None:
        """Remove the states older than micro-batch ``batchId``: a restart needs the last
        committed micro-batch's, and the one after it may not be committed yet."""
        for name in self.storage.names(STATES):
            if name.startswith("batch-") and name.endswith(".pickle") and int(name[6:-7]) < batchId:
                self.storage.remove(f"{STATES}/{name}")

    def claimedOutputs(self) -> set[str]:
        """Return the output directories an earlier run of the job claimed. A checkpoint not
        reachable yet has none to read here: a Hadoop URL before this process's SparkSession
        started, or a bad location, whose job then fails on ``open`` before it runs."""
        try:
            claims = self.storage.read(CLAIMED)
        except CheckpointError:
            return set()
        return set() if claims is None else set(json.loads(claims))

    def recordClaims(self, directories: list[str]) -> None:
        """Note the output directories this job claimed, for its restarts."""
        claims = sorted(self.claimedOutputs() | set(directories))
        self.storage.write(CLAIMED, json.dumps(claims).encode("utf-8"))

    def remove(self) -> None:
        """Remove what the job keeps in its checkpoint (the fed sources' files included), then
        the directory if that left it empty: never anything else found there, a files sink's
        output or the user's own files."""
        try:
            for name in self.storage.names():
                if isCheckpointEntry(name):
                    self.storage.removeTree(name)
            self.storage.removeIfEmpty()
        except Exception as error:  # what is left stays; the job's own outcome counts
            logger.warning("Could not remove the checkpoint '%s': %s", self.location, error)
        for name in self.sourceNames():
            shutil.rmtree(os.path.join(self.sourcesDirectory, name), ignore_errors=True)
        if self.sourcesDirectory != self.location:
            with contextlib.suppress(OSError):
                os.rmdir(self.sourcesDirectory)


def isCheckpointEntry(name: str) -> bool:
    """Return whether ``name``, in a checkpoint's directory, is the job's own (what ``remove`` removes)."""
    return name in (QUERY, STATES, CLAIMED, CLAIMED + WRITING) or name.startswith(SOURCE_PREFIX)


def urlDirectoryName(url: str) -> str:
    """Return a directory name of ``url``'s own: the URL encoded (``fileName``), or its SHA-256
    in hexadecimal where that is too long (an encoded URL has a ``%``: the two never meet)."""
    try:
        return fileName(url, "The checkpoint")
    except JobError:
        return hashlib.sha256(url.encode("utf-8")).hexdigest()


def statesName(batchId: int) -> str:
    """Return the name of the states saved at the end of micro-batch ``batchId``."""
    return f"{STATES}/batch-{batchId:09d}.pickle"
