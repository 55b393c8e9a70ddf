"""A files sink's output directory on the server of a Spark Connect session: the classic
engine's protocol for a local directory (claimed when the write begins, committed whole, only
what the job wrote removed on failure), each step run by a one-row Spark job on the server,
whose file system it is, never in the client."""

import os
import pickle
from collections.abc import Iterator

import attrs
import cloudpickle
from pyspark.sql import SparkSession

from sparkjet.coredag.runtime.files import makeDirectories
from sparkjet.coredag.runtime.output_directory import LocalOutputDirectory

SUCCESS = "_SUCCESS"
"""The empty file a committed write leaves last, as Hadoop's committer does."""


class ServerOutputDirectory:
    """A job's claim on a new directory of the server's file system, as ``LocalOutputDirectory``
    (whose state travels to the server and back with each step)."""

    def __init__(self, spark: SparkSession, directory: LocalOutputDirectory) -> None:
        self.spark, self._directory = spark, directory

    @property
    def directory(self) -> str:
        """Return the directory as the job's sink names it."""
        return self._directory.directory

    @property
    def staging(self) -> str:
        """Return the directory the job's tasks write their part files into."""
        return self._directory.staging

    def startMicroBatch(self, batch: int) -> None:
        """Write micro-batch ``batch`` of a stream next, into a new staging directory (only named
        now: ``beginWrite`` creates it on the server)."""
        self._directory.startMicroBatch(batch)

    def keepMicroBatch(self) -> None:
        """Keep the files the committed micro-batch moved in: no abort removes them, nor the directory."""
        self._directory.keepMicroBatch()

    def claimOnce(self) -> None:
        """Claim the directory unless this job did (a stream job claims it as its run starts)."""
        self._onServer("claimOnce")

    def beginWrite(self) -> None:
        """Claim the directory unless this job did, and create this write's staging directory in it."""
        self._onServer("beginWrite")

    def commit(self) -> None:
        """Move the part files up into the directory, ``_SUCCESS`` last."""
        self._onServer("commit")

    def abort(self) -> None:
        """Remove what this job created, and nothing else."""
        self._onServer("abort")

    def _onServer(self, step: str) -> None:
        rows = self.spark.range(0, 1, 1, 1).mapInArrow(ServerStep(self._directory, step), "result binary").collect()
        self._directory, error = cloudpickle.loads(rows[0].result)
        if error is not None:
            raise error


@attrs.frozen
class ServerStep:
    """The function of the one-row job that runs ``step`` on ``directory`` on the server and
    hands back the directory, and the error the step raised, if any."""

    directory: LocalOutputDirectory
    step: str

    def __call__(self, recordBatches: Iterator) -> Iterator:
        import pyarrow as pa  # in the worker only

        for _ in recordBatches:
            pass
        error = None
        try:
            if self.step == "commit":
                open(os.path.join(self.directory.staging, SUCCESS), "wb").close()
                self.directory.commit()
            elif self.step == "abort":
                self.directory.abort()
            else:
                self.directory.claimOnce()
                if self.step == "beginWrite":
                    makeDirectories(self.directory.staging, mode=0o777)
        except Exception as raised:
            error = raised
        result = cloudpickle.dumps((self.directory, error), protocol=pickle.HIGHEST_PROTOCOL)
        yield pa.RecordBatch.from_arrays([pa.array([result], pa.binary())], ["result"])
