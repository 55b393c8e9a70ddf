"""The output directory protocol: claim exclusively, commit whole, abort only what was written."""

import os

import pytest

from sparkjet.coredag import OutputError
from sparkjet.coredag.runtime.output_directory import (
    STAGING_PREFIX,
    HadoopOutputDirectory,
    LocalOutputDirectory,
    UrlOutputDirectory,
)


def writeParts(staging: str, parts: dict[str, str]) -> None:
    """Write what Spark's committer leaves in a staging directory."""
    os.makedirs(staging)
    for name, text in parts.items():
        with open(os.path.join(staging, name), "w") as file:
            file.write(text)


PARTS = {"part-00000": "a\n", "part-00001": "b\n", ".part-00000.crc": "x", "_SUCCESS": ""}


def stagingOf(output) -> str:
    """Return the local path of ``output``'s staging directory."""
    if isinstance(output, UrlOutputDirectory):
        return "/" + output.staging
    return output.staging if isinstance(output.staging, str) else output.staging.toUri().getPath()


@pytest.fixture(params=["local", "url", pytest.param("hadoop", marks=pytest.mark.spark)])
def outputFor(request):
    """Make an output directory of any kind: local, at a URL through fsspec, or through the
    JVM's Hadoop file system."""
    if request.param == "local":
        return lambda path: LocalOutputDirectory(str(path), "Sinks.files")
    if request.param == "url":
        return lambda path: UrlOutputDirectory(path.as_uri(), "Sinks.files")
    sc = request.getfixturevalue("spark").sparkContext
    return lambda path: HadoopOutputDirectory(path.as_uri(), "Sinks.files", sc)


def test_a_commit_moves_the_part_files_up_and_removes_the_staging_directory(outputFor, tmp_path):
    output = outputFor(tmp_path / "out")
    output.claim()
    assert os.listdir(tmp_path / "out") == []
    writeParts(stagingOf(output), PARTS)
    output.commit()
    assert sorted(os.listdir(tmp_path / "out")) == sorted(PARTS)
    assert (tmp_path / "out" / "part-00001").read_text() == "b\n"


def test_an_abort_after_a_commit_removes_what_the_job_wrote_and_its_new_parents(outputFor, tmp_path):
    output = outputFor(tmp_path / "new" / "out")
    output.claim()
    writeParts(stagingOf(output), PARTS)
    output.commit()
    output.abort()
    assert os.listdir(tmp_path) == []


def test_an_abort_leaves_what_others_put_in_the_directory(outputFor, tmp_path):
    output = outputFor(tmp_path / "out")
    output.claim()
    writeParts(stagingOf(output), PARTS)
    (tmp_path / "out" / "theirs").write_text("theirs\n")
    output.abort()
    assert os.listdir(tmp_path / "out") == ["theirs"]


def test_a_directory_that_appeared_is_refused_and_an_abort_touches_nothing(outputFor, tmp_path):
    output = outputFor(tmp_path / "out")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "theirs").write_text("theirs\n")
    with pytest.raises(OutputError, match="already exists; choose a new directory"):
        output.claim()
    output.abort()
    assert os.listdir(tmp_path / "out") == ["theirs"]


def test_of_two_claims_on_one_directory_the_second_is_refused(outputFor, tmp_path):
    first, second = outputFor(tmp_path / "out"), outputFor(tmp_path / "out")
    first.claim()
    with pytest.raises(OutputError, match="already exists"):
        second.claim()
    second.abort()
    writeParts(stagingOf(first), PARTS)
    first.commit()
    assert sorted(os.listdir(tmp_path / "out")) == sorted(PARTS)


def test_the_staging_directory_is_hidden_inside_the_claimed_one(tmp_path):
    output = LocalOutputDirectory(str(tmp_path / "out"), "Sinks.files")
    assert os.path.dirname(output.staging) == str(tmp_path / "out")
    assert os.path.basename(output.staging).startswith(STAGING_PREFIX)
    assert output.sparkPath == "file://" + output.staging


@pytest.mark.spark
def test_a_leftover_hadoop_claim_file_is_named(spark, tmp_path):
    (tmp_path / ".out.sparkjet-claim").write_text("")
    output = HadoopOutputDirectory((tmp_path / "out").as_uri(), "Sinks.files", spark.sparkContext)
    with pytest.raises(OutputError, match=r"another sparkjet job is creating it \(if none is, remove the leftover"):
        output.claim()
    assert not (tmp_path / "out").exists()


def test_a_leftover_claim_file_is_named_at_a_url_as_through_hadoop(tmp_path):
    (tmp_path / ".out.sparkjet-claim").write_text("")
    output = UrlOutputDirectory((tmp_path / "out").as_uri(), "Sinks.files")
    with pytest.raises(OutputError) as raised:
        output.claim()
    assert str(raised.value) == (
        f"Sinks.files: the output directory '{(tmp_path / 'out').as_uri()}' already exists; choose a new "
        "directory or remove this one (it was left untouched); another sparkjet job is creating it (if none is, "
        f"remove the leftover '{(tmp_path / '.out.sparkjet-claim').as_uri()}')"
    )
    output.abort()
    assert os.listdir(tmp_path) == [".out.sparkjet-claim"]


def test_a_url_whose_scheme_fsspec_cannot_reach_is_refused_before_anything_is_written(tmp_path):
    output = UrlOutputDirectory("nosuch://jet:secret@host/out", "Sinks.files('nosuch://jet:secret@host/out')")
    with pytest.raises(OutputError) as raised:
        output.claim()
    assert str(raised.value) == (
        "Sinks.files('nosuch://jet:secret@host/out'): cannot write the output directory 'nosuch://jet@host/out': "
        "the tasks write its part files through fsspec, which says: Protocol not known: nosuch. Install fsspec and "
        "the library of 'nosuch://' file systems where the job runs (pyarrow and Hadoop's libhdfs for hdfs://, "
        "s3fs for s3a://), or write to a directory of that machine's file system"
    )


class RefusedWrite:
    """An RDD whose write the file system refuses, as an S3 bucket without permission does."""

    def __init__(self, message: str) -> None:
        self.message = message

    def mapPartitions(self, function):
        return self

    def saveAsTextFile(self, path: str):
        raise RuntimeError(self.message.format(path=path))


def test_a_write_the_file_system_refuses_names_the_directory_and_the_cause(tmp_path):
    from sparkjet.coredag.runtime.terminal_outputs import saveAsTextFiles as _saveAsTextFiles

    output = LocalOutputDirectory(str(tmp_path / "out"), "Sinks.files")
    refusal = "An error occurred while calling o62.saveAsTextFile.\njava.nio.file.AccessDeniedException: {path}/_temporary: Permission denied"
    with pytest.raises(OutputError) as raised:
        _saveAsTextFiles(RefusedWrite(refusal), output)
    assert str(raised.value) == (
        f"Sinks.files: writing the output directory '{tmp_path / 'out'}' failed: "
        f"java.nio.file.AccessDeniedException: {output.sparkPath}/_temporary: Permission denied"
    )
    output.abort()
    assert os.listdir(tmp_path) == []


def test_a_failure_that_does_not_name_the_directory_is_left_as_it_is(tmp_path):
    from sparkjet.coredag.runtime.terminal_outputs import saveAsTextFiles as _saveAsTextFiles

    output = LocalOutputDirectory(str(tmp_path / "out"), "Sinks.files")
    with pytest.raises(RuntimeError, match="^Job aborted due to stage failure"):
        _saveAsTextFiles(RefusedWrite("Job aborted due to stage failure: Python worker exited"), output)


def test_a_micro_batch_run_again_on_fewer_processors_leaves_none_of_its_first_runs_files(outputFor, tmp_path):
    """Killed after its files were committed and before Spark committed it, micro-batch 3 runs
    again on one processor instead of three: its first run's other part files go, or their lines
    would be there twice; other micro-batches' files stay."""
    output = outputFor(tmp_path / "out")
    output.claim()
    for batch, parts in ((2, {"part-00000": "x\n"}), (3, {"part-00000": "a\n", "part-00001": "b\n", "part-00002": "c\n"})):
        output.startMicroBatch(batch)
        writeParts(stagingOf(output), {**parts, **{f".{name}.crc": "x" for name in parts}})
        output.commit()
    output.startMicroBatch(3)
    writeParts(stagingOf(output), {"part-00000": "a\nb\nc\n", ".part-00000.crc": "y"})
    output.commit()
    assert sorted(os.listdir(tmp_path / "out")) == [
        ".part-00002-00000.crc", ".part-00003-00000.crc", "part-00002-00000", "part-00003-00000"
    ]
    assert (tmp_path / "out" / "part-00003-00000").read_text() == "a\nb\nc\n"
