"""A full disk is said as such, naming where (issue 25, point 10): a checkpoint write that fails
leaves no ``.writing`` file and keeps the last whole one; a files sink whose write Spark fails with
'No space left on device' says so, naming its directory, where PySpark said only
'An error occurred while calling o54.saveAsTextFile.'."""

import errno
import os

import pytest

from sparkjet.coredag.errors import OutputError
from sparkjet.coredag.runtime import terminal_outputs
from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError, checkpointStorage
from sparkjet.coredag.runtime.output_directory import LocalOutputDirectory


def test_a_checkpoint_write_on_a_full_disk_keeps_the_last_whole_file_and_leaves_nothing_aside(tmp_path, monkeypatch):
    storage = checkpointStorage(str(tmp_path / "cp"), "Job 'j'")
    storage.write("states/batch-000000001.pickle", b"whole")

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(CheckpointError, match=r"Could not write '.*batch-000000001.pickle' \(3 bytes\) in the "
                       r"checkpoint '.*cp': No space left on device; the last whole one stays"):
        storage.write("states/batch-000000001.pickle", b"new")
    assert os.listdir(tmp_path / "cp" / "states") == ["batch-000000001.pickle"]
    assert storage.read("states/batch-000000001.pickle") == b"whole"


class FullDisk:
    """An RDD whose write fails as Spark's does on a full disk: a py4j error naming no path."""

    def mapPartitions(self, fn):
        return self

    def saveAsTextFile(self, path):
        raise RuntimeError(
            "An error occurred while calling o54.saveAsTextFile.\n: org.apache.spark.SparkException: Job aborted "
            "due to stage failure: java.io.IOException: No space left on device\n\tat java.base/..."
        )


def test_a_files_sink_on_a_full_disk_says_so_naming_its_directory(tmp_path):
    output = LocalOutputDirectory(str(tmp_path / "out"), "Sinks.files('out')")
    with pytest.raises(OutputError, match=r"Sinks.files\('out'\): writing the output directory '.*out' failed: "
                       r"No space left on device \(where Spark writes it, or in its scratch directory"):
        terminal_outputs.saveAsTextFiles(FullDisk(), output)
