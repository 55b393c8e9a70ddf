"""A watched directory's files, without Spark: the driver's checks of each micro-batch's files
(deleted, still being written, changed after they were read: one warning per file) and the
workers' reading of their lines (decoded as Sources.files decodes them, no line too long)."""

import logging
import os

import pytest

from sparkjet import InputError, PipelineError, Sources
from sparkjet.coredag.errors import shorten
from sparkjet.coredag.processors import sources
from sparkjet.coredag.processors.stream_sources import (
    FileWatcherP,
    ListedFile,
    WatchedFileLines,
    fileStatus,
    missingFileOf,
)


def watcher(directory, **options) -> FileWatcherP:
    return FileWatcherP(str(directory), sourceId="fileWatcherSource(in/*)", **options)


def listed(path) -> ListedFile:
    """The file as Spark lists it now."""
    return ListedFile(path.as_uri(), *fileStatus(str(path)))


def warnings(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]


@pytest.fixture
def logged(caplog):
    with caplog.at_level(logging.WARNING, logger="sparkjet"):
        yield caplog


def test_the_files_of_a_micro_batch_go_to_the_workers_with_their_size_and_no_warning(tmp_path, logged):
    whole = tmp_path / "whole.txt"
    whole.write_bytes(b"one\ntwo\n")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    files = [listed(whole), listed(empty)]
    assert watcher(tmp_path).checkedFiles(files) == files
    assert warnings(logged) == []


def test_a_file_deleted_before_it_is_read_is_skipped_with_a_warning_naming_it(tmp_path, logged):
    gone, kept = tmp_path / "gone12.txt", tmp_path / "kept.txt"
    gone.write_bytes(b"x\n")
    kept.write_bytes(b"y\n")
    files = [listed(gone), listed(kept)]
    gone.unlink()
    assert watcher(tmp_path).checkedFiles(files) == files[1:]
    assert warnings(logged) == [
        f"Sources.fileWatcher: skipped '{gone}': it was deleted after it appeared in '{tmp_path}' and before "
        "it was read (Sources.fileWatcher(directory, ignoreMissingFiles=False) makes this an error)"
    ]


def test_a_file_deleted_before_it_is_read_fails_the_job_naming_it_unless_missing_files_are_ignored(tmp_path):
    gone = tmp_path / "gone12.txt"
    gone.write_bytes(b"x\n")
    files = [listed(gone)]
    gone.unlink()
    with pytest.raises(InputError) as raised:
        watcher(tmp_path, ignoreMissingFiles=False).checkedFiles(files)
    assert str(raised.value) == (
        f"Sources.fileWatcher: '{gone}' was deleted after it appeared in '{tmp_path}' and before it was read; "
        "keep files there until they are read, or skip such files: "
        "Sources.fileWatcher(directory, ignoreMissingFiles=True), the default"
    )


def test_a_file_that_grew_after_spark_listed_it_is_reported_once(tmp_path, logged):
    growing = tmp_path / "growing.txt"
    growing.write_bytes(b"1\n" * 101)
    files = [listed(growing)]
    with growing.open("ab") as file:
        file.write(b"2\n" * 99)
    source = watcher(tmp_path)
    assert source.checkedFiles(files) == files
    source.checkedFiles([])
    assert warnings(logged) == [
        f"Sources.fileWatcher: '{growing}' changed after Spark listed it, before it was read (202 bytes then, "
        "400 now): it was still being written, and what was written after that is never read, as Spark's "
        f"file stream source reads each file once; write each file elsewhere, then move it into '{tmp_path}' "
        "whole (a rename)"
    ]


def test_a_file_that_changed_after_it_was_read_is_reported_at_the_next_micro_batch(tmp_path, logged):
    growing, other = tmp_path / "growing.txt", tmp_path / "other.txt"
    growing.write_bytes(b"1\n" * 101)
    source = watcher(tmp_path)
    source.checkedFiles([listed(growing)])
    with growing.open("ab") as file:
        file.write(b"2\n" * 99)
    other.write_bytes(b"3\n")
    source.checkedFiles([listed(other)])
    source.checkedFiles([])
    assert warnings(logged) == [
        f"Sources.fileWatcher: '{growing}' changed after it was read (202 bytes then, 400 now): it was still "
        "being written, and what was written after it was read is never read, as Spark's file stream source "
        f"reads each file once; write each file elsewhere, then move it into '{tmp_path}' whole (a rename)"
    ]


def test_a_file_not_ending_with_a_line_end_is_reported_once(tmp_path, logged):
    cut = tmp_path / "cut.txt"
    cut.write_bytes(b"one\ntw")
    source = watcher(tmp_path)
    source.checkedFiles([listed(cut)])
    with cut.open("ab") as file:
        file.write(b"o\n")
    source.checkedFiles([])
    assert warnings(logged) == [
        f"Sources.fileWatcher: '{cut}' does not end with a line end: it may have been read while still being "
        "written (its last line cut short, what followed never read); write each file elsewhere, then move "
        f"it into '{tmp_path}' whole (a rename)"
    ]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_a_file_ending_with_any_line_end_is_whole(tmp_path, logged, ending):
    whole = tmp_path / "whole.txt"
    whole.write_bytes(b"one" + ending)
    watcher(tmp_path).checkedFiles([listed(whole)])
    assert warnings(logged) == []


def reading(directory, maxLineBytes: int = 1 << 20, ignoreMissingFiles: bool = True) -> WatchedFileLines:
    return watcher(directory, maxLineBytes=maxLineBytes, ignoreMissingFiles=ignoreMissingFiles).rowConverter()


def test_the_workers_read_the_lines_starting_in_the_size_spark_listed(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\nfour")
    assert reading(tmp_path)([(path.as_uri(), 14, 0)]) == ["one", "two", "three"]
    assert reading(tmp_path)([(path.as_uri(), 22, 0)]) == ["one", "two", "three", "four"]


def test_undecodable_bytes_fail_as_in_the_batch_source_naming_file_line_and_byte(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good\nbad \xff here\n")
    with pytest.raises(InputError) as raised:
        reading(tmp_path)([(path.as_uri(), 17, 0)])
    assert str(raised.value) == (
        f"Sources.fileWatcher: '{path}' line 2 is not valid utf-8: invalid start byte at byte 9 of the file; "
        "if the files are in another charset, name it: Sources.fileWatcher(directory, charset='latin-1')"
    )
    with pytest.raises(InputError) as batch:
        list(sources.lineBatchesStartingIn(str(path), 0, 17, "utf-8"))
    assert str(batch.value).replace("Sources.files", "Sources.fileWatcher") == str(raised.value)


def test_a_watched_file_in_another_charset_reads_when_the_charset_is_named(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("café\n".encode("latin-1"))
    lines = FileWatcherP(str(tmp_path), "*", "latin-1", sourceId="w").rowConverter()
    assert lines([(path.as_uri(), 5, 0)]) == ["café"]


@pytest.mark.parametrize("where", ["inside a chunk", "across chunks"])
def test_a_line_longer_than_the_limit_fails_naming_the_file_the_line_and_its_size(tmp_path, monkeypatch, where):
    if where == "inside a chunk":
        monkeypatch.setattr(sources, "READ_CHUNK", 1 << 16)
    else:
        monkeypatch.setattr(sources, "READ_CHUNK", 100)
    path = tmp_path / "long.txt"
    path.write_bytes(b"short\n" + b"x" * 5_000 + b"\nshort\n")
    with pytest.raises(InputError) as raised:
        reading(tmp_path, maxLineBytes=1_000)([(path.as_uri(), path.stat().st_size, 0)])
    assert str(raised.value) == (
        f"Sources.fileWatcher: '{path}' line 2 is 5,000 bytes long, more than the 1,000 bytes a line may have "
        "(a line is one item, held whole in memory); if such lines are expected, raise the limit: "
        "Sources.fileWatcher(directory, maxLineBytes=5000)"
    )


def test_a_line_as_long_as_the_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "READ_CHUNK", 100)
    path = tmp_path / "long.txt"
    path.write_bytes(b"x" * 1_000 + b"\r\n" + b"y" * 1_000)
    assert reading(tmp_path, maxLineBytes=1_000)([(path.as_uri(), 2_002, 0)]) == ["x" * 1_000, "y" * 1_000]


def test_a_long_line_fails_before_it_is_held_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "READ_CHUNK", 100)
    gathered = []
    decode = sources._decodeLines

    def decoding(path, offset, data, *rest):
        gathered.append(len(data))
        return decode(path, offset, data, *rest)

    monkeypatch.setattr(sources, "_decodeLines", decoding)
    path = tmp_path / "long.txt"
    path.write_bytes(b"x" * 100_000 + b"\n")
    with pytest.raises(InputError, match="line 1 is 100,000 bytes long"):
        reading(tmp_path, maxLineBytes=1_000)([(path.as_uri(), 100_001, 0)])
    assert gathered == []


def test_a_file_deleted_before_the_worker_reads_it_is_skipped_with_a_warning(tmp_path, caplog):
    kept = tmp_path / "kept.txt"
    kept.write_bytes(b"y\n")
    gone = tmp_path / "gone 12.txt"
    with caplog.at_level(logging.WARNING, logger="sparkjet.fileWatcher"):
        assert reading(tmp_path)([(gone.as_uri(), 2, 0), (kept.as_uri(), 2, 0)]) == ["y"]
    assert [record.getMessage() for record in caplog.records] == [
        f"Sources.fileWatcher: skipped '{gone}': it was deleted after it appeared in '{tmp_path}' and before "
        "it was read (Sources.fileWatcher(directory, ignoreMissingFiles=False) makes this an error)"
    ]
    with pytest.raises(InputError, match=r"'.*gone 12\.txt' was deleted after it appeared"):
        reading(tmp_path, ignoreMissingFiles=False)([(gone.as_uri(), 2, 0)])


class JavaError:
    """A Java exception as py4j shows it: Spark's errors have a condition and parameters."""

    def __init__(self, condition=None, parameters=None, cause=None):
        self.condition, self.parameters, self.cause = condition, parameters, cause

    def getCondition(self):
        if self.condition is None:
            raise AttributeError("not one of Spark's errors")
        return self.condition

    def getMessageParameters(self):
        return self.parameters

    def getCause(self):
        return self.cause


class Py4JJavaError(Exception):
    def __init__(self, javaException):
        self.java_exception = javaException


def test_the_file_spark_did_not_find_is_read_from_its_error_or_its_causes():
    missing = JavaError("FAILED_READ_FILE.FILE_NOT_EXIST", {"path": "file:///in/gone%2012.txt"})
    assert missingFileOf(Py4JJavaError(missing)) == "file:///in/gone%2012.txt"
    assert missingFileOf(Py4JJavaError(JavaError(cause=missing))) == "file:///in/gone%2012.txt"
    assert missingFileOf(Py4JJavaError(JavaError("FAILED_READ_FILE.NO_HINT", {"path": "x"}))) is None
    assert missingFileOf(ValueError("not Spark's")) is None


@pytest.mark.parametrize(
    "options, message",
    [
        ({"ignoreMissingFiles": "yes"}, "ignoreMissingFiles must be True or False, got 'yes'"),
        ({"maxLineBytes": 0}, "maxLineBytes must be a positive number of bytes, got 0"),
        ({"maxLineBytes": 1.5}, "maxLineBytes must be a positive number of bytes, got 1.5"),
        ({"charset": "utf-16"}, "cannot read files in the charset 'utf-16' line by line"),
    ],
)
def test_bad_options_of_a_watched_directory_are_refused_naming_the_call(options, message):
    from sparkjet.pipeline.stream_sources import fileWatcher

    where = r"Sources\.fileWatcher \(called at test_watched_files\.py:\d+\): "
    with pytest.raises(PipelineError, match=where + message):
        fileWatcher("in", **options)


def test_a_watched_directory_keeps_its_options():
    from sparkjet.pipeline.stream_sources import fileWatcher

    source = fileWatcher("in", "*.txt", "latin-1", ignoreMissingFiles=False, maxLineBytes=1_000)
    assert (source.charset, source.ignoreMissingFiles, source.maxLineBytes) == ("latin-1", False, 1_000)
    assert Sources.fileWatcher("in").ignoreMissingFiles is True
    assert os.path.basename(source.name) == "*.txt)"


def test_the_plan_keeps_the_watchers_charset_missing_files_choice_and_line_limit(tmp_path):
    from sparkjet import Pipeline, Sinks, Sources
    from sparkjet.planner import plan

    p = Pipeline.create()
    watcher = Sources.fileWatcher(str(tmp_path), charset="latin-1", ignoreMissingFiles=False, maxLineBytes=10)
    p.readFrom(watcher).withoutTimestamps().writeTo(Sinks.noop())
    supplier = next(vertex.processorSupplier for vertex in plan(p).dag if vertex.name.startswith("fileWatcher"))
    assert (supplier.charset, supplier.ignoreMissingFiles, supplier.maxLineBytes) == ("latin-1", False, 10)


def test_the_line_a_failed_stage_shows_is_found_in_the_files_the_micro_batch_read(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b b.txt"
    first.write_bytes(b"10 one\n20 two\n")
    second.write_bytes(b"30 three\nno time here\n" + b"x" * 200 + b"\n")
    source = watcher(tmp_path)
    source.checkedFiles([listed(first), listed(second)])
    assert source.lineOf(shorten("no time here")) == f"line 2 of '{second}'"
    assert source.lineOf(shorten("x" * 200)) == f"line 3 of '{second}'"
    assert source.lineOf(shorten("20 two")) == f"line 2 of '{first}'"
    assert source.lineOf(shorten("not there")) is None
    source.checkedFiles([])
    assert source.lineOf(shorten("20 two")) is None, "only the last micro-batch's files"
