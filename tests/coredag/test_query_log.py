"""The files of Spark's query checkpoint, checked without Spark before a restarted query reads
them: the files as Spark 4 writes them pass, and a broken one is refused saying what is wrong
(tests/streaming/test_restart_checks.py breaks a real checkpoint's and restarts its job)."""

import pytest

from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.stream.checkpoint import StreamCheckpoint
from sparkjet.coredag.runtime.stream.query_log import (
    BrokenFile,
    checkCommit,
    checkOffsets,
    checkQueryMetadata,
    checkSourceLog,
)

METADATA = b'{"id":"2897fc99-345e-4e0f-ab98-809356891b54"}'
OFFSETS = b'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1796172106924,"conf":{"spark.sql.shuffle.partitions":"8"}}\n{"logOffset":2}\n-'
COMMIT = b'v1\n{"nextBatchWatermarkMs":0}'
FILE_SOURCE_LOG = b'v1\n{"path":"file:///in/a.txt","timestamp":1796172103124,"batchId":0}\n{"path":"file:///in/b.txt","timestamp":1796172103125,"batchId":0}'
RATE_SOURCE_LOG = b"v1\n1796172103124"


@pytest.mark.parametrize(
    "check, data",
    [
        (checkQueryMetadata, METADATA),
        (checkOffsets, OFFSETS),
        (checkOffsets, b"v1\n\n-"),
        (checkCommit, COMMIT),
        (checkCommit, b"v1"),
        (checkSourceLog, FILE_SOURCE_LOG),
        (checkSourceLog, RATE_SOURCE_LOG),
        (checkSourceLog, b"v1\n"),
    ],
)
def test_the_files_spark_writes_pass(check, data):
    check(data)


@pytest.mark.parametrize(
    "check, data, reason",
    [
        (checkCommit, b"", r"^it is empty$"),
        (checkCommit, b"v1\n\xff\xfe", r"^it is not UTF-8 text: byte 0xff at offset 3$"),
        (checkCommit, b"1\n{}", r"^its first line '1' is not a version such as 'v1'$"),
        (checkCommit, b"v0\n{}", r"is not a version"),
        (checkCommit, COMMIT[:12], r"^line 2, the commit's metadata, is not JSON \(.*\): '\{\"nextBat'$"),
        (checkCommit, b"v1\n[0]", r"^line 2 is not the commit's metadata, a JSON object"),
        (checkCommit, b'v1\n{"nextBatchWatermarkMs":"soon"}', r"^line 2 is not the commit's metadata"),
        (checkOffsets, b"v1", r"^it ends after its version line$"),
        (checkOffsets, OFFSETS[:40], r"^line 2, the batch's metadata, is not JSON"),
        (checkOffsets, b"v1\n[]\n-", r"^line 2 is not the batch's metadata, a JSON object$"),
        (checkOffsets, OFFSETS.rsplit(b"\n", 2)[0], r"^it ends before the sources' offsets$"),
        (checkOffsets, OFFSETS[:-4], r"^line 3, a source's offset, is not JSON"),
        (checkQueryMetadata, METADATA[:10], r"^line 1, the query's id, is not JSON"),
        (checkQueryMetadata, b'{"name":"counts"}', r"^it is not the query's id"),
        (checkSourceLog, FILE_SOURCE_LOG[:50], r"^line 2, an entry, is not JSON"),
        (checkSourceLog, b'v1\n{"path":"file:///in/a.txt"}', r"^line 2 is not an entry of a source's log"),
        (checkSourceLog, b"v1\n1\n[1]", r"^line 3 is not an entry of a source's log"),
    ],
)
def test_a_broken_file_is_refused_saying_what_is_wrong(check, data, reason):
    with pytest.raises(BrokenFile, match=reason):
        check(data)


def writeQuery(root, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / "query" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


WHOLE_QUERY = {
    "metadata": METADATA,
    **{f"offsets/{batch}": OFFSETS for batch in range(3)},
    **{f"commits/{batch}": COMMIT for batch in range(2)},
    "sources/0/9.compact": FILE_SOURCE_LOG,
    **{f"sources/0/{batch}": FILE_SOURCE_LOG for batch in (8, 10, 11)},
    "sources/1/0": RATE_SOURCE_LOG,
}


@pytest.mark.parametrize("file", ["metadata", "offsets/2", "offsets/1", "commits/1", "sources/0/9.compact", "sources/0/11", "sources/1/0"])
def test_a_broken_file_spark_reads_on_a_restart_is_a_checkpoint_error_naming_it(tmp_path, file):
    writeQuery(tmp_path, {**WHOLE_QUERY, file: b"\xff\xfe"})
    with pytest.raises(CheckpointError, match=(
        rf"^The checkpoint file '{tmp_path}/query/{file}' cannot be read \(it is not UTF-8 text: byte 0xff at offset 0; "
        rf"2 bytes\): it was cut short or changed from outside; restore it, or remove the checkpoint '{tmp_path}' to "
        r"start the job over, empty: that loses the job's state and where it was in its sources$"
    )):
        StreamCheckpoint(str(tmp_path)).checkQueryLog()


@pytest.mark.parametrize("file", ["offsets/0", "commits/0", "sources/0/8", "sources/0/.11.0c5e.tmp", "commits/.1.crc"])
def test_a_file_spark_does_not_read_on_a_restart_is_not_checked(tmp_path, file):
    """Spark reads its last two offsets, its last commit and a source's log since its last compaction."""
    writeQuery(tmp_path, {**WHOLE_QUERY, file: b"\xff\xfe"})
    StreamCheckpoint(str(tmp_path)).checkQueryLog()


def test_a_checkpoint_with_no_query_yet_passes(tmp_path):
    StreamCheckpoint(str(tmp_path / "new")).checkQueryLog()
