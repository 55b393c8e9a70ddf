"""A files sink's output directory on the server of a Spark Connect session: the classic
engine's protocol (claimed when the write begins, committed whole, only what the job wrote
removed on failure) for a directory of the server's file system or at a URL the server reaches
through fsspec, each step run by a one-row Spark job on the server, never in the client."""

import pickle
from collections.abc import Iterator

import attrs
import cloudpickle
from pyspark.sql import SparkSession

from sparkjet.coredag.runtime.files import LocalFiles, UrlFiles
from sparkjet.coredag.runtime.output_directory import FilesOutputDirectory

SUCCESS = "_SUCCESS"
"""The empty file a committed write leaves last, as Hadoop's committer does."""


class ServerOutputDirectory:
    """A job's claim on a new directory the server reaches, as ``LocalOutputDirectory`` or
    ``UrlOutputDirectory`` (whose state travels to the server and back with each step)."""

    def __init__(self, spark: SparkSession, directory: FilesOutputDirectory) -> None:
        self.spark, self._directory = spark, directory

    @property
    def directory(self) -> str:
        """Return the directory as the job's sink names it."""
        return self._directory.directory

    @property
    def files(self) -> LocalFiles | UrlFiles:
        """Return the files the directory and its staging directory are named in."""
        return self._directory.files

    @property
    def staging(self) -> str:
        """Return the directory the job's tasks write their part files into, named in ``files``."""
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

    directory: FilesOutputDirectory
    step: str

    def __call__(self, recordBatches: Iterator) -> Iterator:
        import pyarrow as pa  # in the worker only

        for _ in recordBatches:
            pass
        error = None
        try:
            if self.step == "commit":
                self.directory.files.writer(f"{self.directory.staging}/{SUCCESS}").close()
                self.directory.commit()
            elif self.step == "abort":
                self.directory.abort()
            else:
                self.directory.claimOnce()
                if self.step == "beginWrite":
                    self.directory.createStaging()
        except Exception as raised:
            error = raised
        result = cloudpickle.dumps((self.directory, error), protocol=pickle.HIGHEST_PROTOCOL)
        yield pa.RecordBatch.from_arrays([pa.array([result], pa.binary())], ["result"])
