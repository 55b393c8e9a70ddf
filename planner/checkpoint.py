"""A stream job's checkpoint: Spark's query checkpoint (offsets written before a micro-batch,
commits after it), the processors' states saved at the end of each micro-batch, the files of
sources sparkjet feeds, and the output directories the job claimed. A restarted job takes the
states of Spark's last committed micro-batch; Spark runs the next one again with the same input."""

import json
import os
import pickle
import time

from sparkjet.coredag.model.event_time_policy import wallClockMillis
from sparkjet.coredag.model.metrics import SnapshotMetrics

STATES = "states"
QUERY = "query"
CLAIMED = "claimed-outputs.json"


class StreamCheckpoint:
    """The checkpoint directory of one stream job."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    @property
    def queryLocation(self) -> str:
        """Return the directory of Spark's query checkpoint."""
        return os.path.join(self.directory, QUERY)

    def sourceDirectory(self, number: int) -> str:
        """Return the directory of stream source ``number``'s own files."""
        return os.path.join(self.directory, f"source-{number}")

    def lastCommittedBatch(self) -> int | None:
        """Return the last micro-batch Spark committed (None before the first)."""
        commits = os.path.join(self.queryLocation, "commits")
        batches = [int(name) for name in _listed(commits) if name.isdigit()]
        return max(batches, default=None)

    def restoredStates(self) -> dict:
        """Return the processors' states at the end of the last committed micro-batch (none
        before the first)."""
        batch = self.lastCommittedBatch()
        if batch is None:
            return {}
        with open(self._statesPath(batch), "rb") as file:
            return pickle.load(file)

    def saveStates(self, batchId: int, states: dict) -> SnapshotMetrics:
        """Save the processors' states at the end of micro-batch ``batchId``, whole or not at
        all (written aside, then renamed), before Spark commits the micro-batch; return the
        snapshot's figures."""
        started, takenAt = time.perf_counter(), wallClockMillis()
        os.makedirs(os.path.join(self.directory, STATES), exist_ok=True)
        path = self._statesPath(batchId)
        with open(path + ".writing", "wb") as file:
            pickle.dump(states, file)
            file.flush()
            os.fsync(file.fileno())
            size = file.tell()
        os.replace(path + ".writing", path)
        self._removeStatesBefore(batchId - 1)
        return SnapshotMetrics(batchId, takenAt, size, time.perf_counter() - started)

    def _removeStatesBefore(self, batchId: int) -> None:
        """Remove the states older than micro-batch ``batchId``: a restart needs the last
        committed micro-batch's, and the one after it may not be committed yet."""
        for name in _listed(os.path.join(self.directory, STATES)):
            if name.startswith("batch-") and name.endswith(".pickle") and int(name[6:-7]) < batchId:
                os.remove(os.path.join(self.directory, STATES, name))

    def claimedOutputs(self) -> set[str]:
        """Return the output directories an earlier run of the job claimed."""
        path = os.path.join(self.directory, CLAIMED)
        if not os.path.exists(path):
            return set()
        with open(path, encoding="utf-8") as file:
            return set(json.load(file))

    def recordClaims(self, directories: list[str]) -> None:
        """Note the output directories this job claimed, for its restarts."""
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, CLAIMED)
        with open(path + ".writing", "w", encoding="utf-8") as file:
            json.dump(sorted(self.claimedOutputs() | set(directories)), file)
        os.replace(path + ".writing", path)

    def _statesPath(self, batchId: int) -> str:
        return os.path.join(self.directory, STATES, f"batch-{batchId:09d}.pickle")


def _listed(directory: str) -> list[str]:
    return os.listdir(directory) if os.path.isdir(directory) else []
