"""Jet's ``JobConfig`` and ``ProcessingGuarantee``: a job's name, the guarantee its stream keeps
across a restart, where its checkpoint lives and the exported snapshot it starts from.

Unlike sparkjet's values, a ``JobConfig`` is mutable, as Jet's is: Jet's users write
``config.setProcessingGuarantee(...)`` and expect the config changed."""

import os

from sparkjet.coredag.api.processor import ProcessingGuarantee
from sparkjet.coredag.model.user_paths import checkedPath
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.stream.state_directory import defaultCheckpoint, snapshotName


class JobConfig:
    """A job's name, processing guarantee, checkpoint location and initial snapshot."""

    def __init__(self) -> None:
        self._name: str | None = None
        self._guarantee = ProcessingGuarantee.NONE
        self._checkpointLocation: str | None = None
        self._initialSnapshotName: str | None = None

    def setName(self, name: str) -> "JobConfig":
        """Name the job (a restarted stream job finds its checkpoint by it)."""
        self._name = name
        return self

    def getName(self) -> str | None:
        """Return the job's name, None if unset."""
        return self._name

    def setProcessingGuarantee(self, guarantee: ProcessingGuarantee) -> "JobConfig":
        """Set what a stream job guarantees across a restart (default NONE: it restarts empty)."""
        if not isinstance(guarantee, ProcessingGuarantee):
            raise TypeError(f"setProcessingGuarantee takes a ProcessingGuarantee, got {guarantee!r}")
        self._guarantee = guarantee
        return self

    def getProcessingGuarantee(self) -> ProcessingGuarantee:
        """Return the processing guarantee."""
        return self._guarantee

    def setSnapshotIntervalMillis(self, millis: int) -> "JobConfig":
        """Accept Jet's snapshot interval, checked; a sparkjet stream job snapshots at the end of
        every micro-batch instead, so the interval changes nothing."""
        if not isinstance(millis, int) or millis < 0:
            raise ValueError(f"setSnapshotIntervalMillis takes 0 or more milliseconds, got {millis!r}")
        return self

    def setCheckpointLocation(self, directory: "str | os.PathLike | None") -> "JobConfig":
        """Keep the stream job's checkpoint (Spark's offsets and commits, the processors'
        snapshots) in ``directory``: a local path, or a Hadoop URL (``hdfs://``, ``s3a://``,
        ``file://`` ...) reached through Spark's JVM as Spark reaches its own checkpoint there;
        the files of sources sparkjet feeds stay local (see ``sparkjet.coredag.runtime.stream.checkpoint``).
        None keeps it under ``$SPARKJET_STATE_DIR`` (see ``checkpointLocation``); one that is not a
        str or a path, is empty or holds a NUL character is a CheckpointError."""
        if directory is None:
            self._checkpointLocation = None
            return self
        location = checkedPath(directory, "JobConfig.setCheckpointLocation", "checkpoint location", CheckpointError)
        if not location.strip():
            raise CheckpointError(
                "JobConfig.setCheckpointLocation: the checkpoint location is empty: give a directory, or None "
                "to keep the checkpoint under $SPARKJET_STATE_DIR"
            )
        self._checkpointLocation = location
        return self

    def checkpointLocation(self, jobName: str) -> str:
        """Return the checkpoint directory: the one set, else one named after the job under
        ``$SPARKJET_STATE_DIR`` (default ``~/.sparkjet/state``)."""
        if self._checkpointLocation is not None:
            return self._checkpointLocation
        return defaultCheckpoint(jobName)

    def setInitialSnapshotName(self, name: str | None) -> "JobConfig":
        """Start the stream job from the snapshot exported under ``name`` (``Job.exportSnapshot``),
        also when it runs without a guarantee, as in Jet; a restart before its own first
        snapshot starts from it again. A name that cannot name a directory (empty, with a control
        character, too long) is a JobError."""
        self._initialSnapshotName = None if name is None else snapshotName(name, "JobConfig.setInitialSnapshotName")
        return self

    def getInitialSnapshotName(self) -> str | None:
        """Return the name of the exported snapshot the job starts from, None if unset."""
        return self._initialSnapshotName
