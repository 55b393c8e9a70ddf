"""Output directories: existing, unsafe, racing, given as URLs, unwritable; standard JSON."""

import json
import os
import re

import pytest

from sparkjet.coredag import JobError, OutputError, UserFunctionError
from sparkjet.pipeline import Pipeline, PipelineError, Sinks, Sources
from tests.conftest import here

THIS_FILE = os.path.basename(__file__)


def test_an_existing_output_directory_is_refused_at_submission_and_left_untouched(submitter, tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    (output / "part-00000").write_text("an earlier result\n")
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).writeTo(Sinks.files(str(output)))
    with pytest.raises(OutputError) as raised:
        submitter.newJob(p)
    assert str(raised.value) == (
        f"Sinks.files: the output directory '{output}' already exists; choose a new directory or "
        "remove this one (it was left untouched)"
    )
    assert os.listdir(output) == ["part-00000"]
    assert (output / "part-00000").read_text() == "an earlier result\n"


# Unsafe directories: refused where the sink is defined.

UNSAFE = [
    ("", "it is empty"),
    ("  ", "it is empty"),
    (".", "it is the working directory"),
    ("./", "it is the working directory"),
    ("..", "it is an ancestor of the working directory"),
    ("/", "it is the root of the file system"),
    ("file:///", "it is the root of the file system"),
    ("hdfs://namenode:8020/", "it is the root of its file system"),
    ("~", None),
]


@pytest.mark.parametrize("factory", [Sinks.files, Sinks.json], ids=["files", "json"])
@pytest.mark.parametrize("directory, reason", UNSAFE, ids=[repr(d) for d, _ in UNSAFE])
def test_an_unsafe_output_directory_is_refused_where_the_sink_is_defined(factory, directory, reason, monkeypatch):
    if directory == "~":
        directory, reason = os.path.expanduser("~"), "it is the home directory"
        monkeypatch.chdir("/")
    origin = f"Sinks.{factory.__name__}"
    with pytest.raises(PipelineError) as raised:
        factory(directory)
    line = here() - 1
    assert str(raised.value) == (
        f"{origin} (called at {THIS_FILE}:{line}): refusing the output directory '{directory}': "
        f"{reason}. A job writes into a new directory it creates (and removes it if the job "
        "fails): name one, such as 'output'"
    )


def test_the_working_directory_by_its_absolute_path_and_its_ancestors_are_refused(tmp_path, monkeypatch):
    working = tmp_path / "work" / "here"
    working.mkdir(parents=True)
    monkeypatch.chdir(working)
    for directory, reason in [
        (str(working), "it is the working directory"),
        (str(tmp_path / "work"), "it is an ancestor of the working directory"),
        ("out/..", "it is the working directory"),
    ]:
        with pytest.raises(PipelineError, match=f"'{re.escape(directory)}': {reason}\\."):
            Sinks.files(directory)
    assert Sinks.files("out").directory == "out"


# A failed job removes only what it wrote.


@pytest.mark.spark
def test_a_failed_job_removes_its_part_files_and_leaves_what_another_program_put_in_its_directory(jet, tmp_path):
    output = tmp_path / "out"

    def writeBesideTheJob(n: int) -> int:
        if n == 0:
            (output / "another-programs-file").write_text("not the job's\n")
        if n == 99:
            raise ValueError("the last item fails the job")
        return n

    p = Pipeline.create()
    p.readFrom(Sources.items(range(100))).map(writeBesideTheJob).writeTo(Sinks.files(str(output)))
    with pytest.raises(UserFunctionError):
        jet.newJob(p).join()
    assert os.listdir(output) == ["another-programs-file"]
    assert (output / "another-programs-file").read_text() == "not the job's\n"


@pytest.mark.spark
def test_an_output_directory_that_appears_after_submission_is_refused_and_left_untouched(jet, tmp_path):
    output = tmp_path / "out"

    def createTheOutputDirectory(n: int) -> int:
        output.mkdir(exist_ok=True)
        (output / "someone-elses").write_text("theirs\n")
        return n

    p = Pipeline.create()
    numbers = p.readFrom(Sources.items(range(10)))
    numbers.map(createTheOutputDirectory).writeTo(Sinks.list("first"))  # runs before the write
    numbers.rebalance().map(str).writeTo(Sinks.files(str(output)))
    job = jet.newJob(p)
    with pytest.raises(OutputError) as raised:
        job.join()
    assert str(raised.value) == (
        f"Sinks.files: the output directory '{output}' already exists; choose a new directory or "
        "remove this one (it was left untouched). It appeared after the job was submitted"
    )
    assert os.listdir(output) == ["someone-elses"]
    assert (output / "someone-elses").read_text() == "theirs\n"


@pytest.mark.spark
def test_of_two_jobs_writing_one_new_directory_exactly_one_writes_it_and_its_output_stays(jet, tmp_path):
    for attempt in range(3):
        output = tmp_path / f"out{attempt}"
        jobs, refused = {}, []
        for owner in ("a", "b"):
            p = Pipeline.create()
            lines = p.readFrom(Sources.items(range(2000))).map(lambda n, owner=owner: f"{owner}{n}")
            lines.writeTo(Sinks.files(str(output)))
            try:
                jobs[owner] = jet.newJob(p, name=f"race-{attempt}-{owner}")
            except OutputError as error:
                refused.append(error)
        winners = []
        for owner, job in jobs.items():
            try:
                job.join()
                winners.append(owner)
            except OutputError as error:
                refused.append(error)
        assert len(winners) == 1 and len(refused) == 1
        assert str(refused[0]).startswith(
            f"Sinks.files: the output directory '{output}' already exists; choose a new directory "
            "or remove this one (it was left untouched)"
        )
        assert sorted(readLines(output)) == sorted(f"{winners[0]}{n}" for n in range(2000))


# Where the output goes.


@pytest.mark.spark
def test_a_file_url_is_written_where_it_points_and_an_existing_one_is_refused(jet, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "deep" / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items(range(50))).writeTo(Sinks.files(output.as_uri()))
    jet.newJob(p).join()
    assert sorted(readLines(output), key=int) == [str(n) for n in range(50)]
    assert not (tmp_path / "file:").exists()
    assert sorted(name for name in os.listdir(output) if not name.startswith(".")) == [
        "_SUCCESS", *sorted(name for name in os.listdir(output) if name.startswith("part-"))
    ]
    with pytest.raises(OutputError, match=f"^Sinks.files: the output directory '{output.as_uri()}' already exists"):
        jet.newJob(p)


def submissionError(submitter, output) -> str:
    """Return the message of the OutputError that refuses a job writing to ``output``."""
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).writeTo(Sinks.files(str(output)))
    with pytest.raises(OutputError) as raised:
        submitter.newJob(p)
    return str(raised.value)


def test_a_dangling_symbolic_link_is_refused_at_submission_naming_it(submitter, tmp_path):
    output = tmp_path / "out"
    output.symlink_to(tmp_path / "nowhere")
    assert submissionError(submitter, output) == (
        f"Sinks.files: the output directory '{output}' is a symbolic link to '{tmp_path / 'nowhere'}', "
        "which does not exist; choose a new directory or remove the link (it was left untouched)"
    )
    assert output.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_parent_that_is_a_file_is_refused_at_submission_naming_it(submitter, tmp_path):
    (tmp_path / "results").write_text("a file\n")
    output = tmp_path / "results" / "2024" / "out"
    assert submissionError(submitter, output) == (
        f"Sinks.files: cannot create the output directory '{output}': '{tmp_path / 'results'}' is a "
        "file, not a directory"
    )
    assert (tmp_path / "results").read_text() == "a file\n"


@pytest.mark.spark
def test_a_directory_the_job_may_not_create_fails_naming_it_and_the_cause(jet):
    output = "/sys/sparkjet-output"  # refused even to root
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).writeTo(Sinks.files(output))
    with pytest.raises(OutputError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Sinks.files: cannot create the output directory '{output}': Operation not permitted"
    )


@pytest.mark.spark
def test_a_failed_job_removes_the_parents_it_created(jet, tmp_path):
    output = tmp_path / "new" / "parents" / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(lambda n: 1 // (n - 9)).writeTo(Sinks.files(str(output)))
    with pytest.raises(UserFunctionError):
        jet.newJob(p).join()
    assert os.listdir(tmp_path) == []


# JSON


@pytest.mark.spark
def test_json_refuses_nan_and_infinity_naming_the_stage_and_the_item(jet, tmp_path):
    output = tmp_path / "out"
    p = Pipeline.create()
    p.readFrom(Sources.items([{"x": 1.0}, {"x": float("nan")}])).writeTo(Sinks.json(str(output)))
    line = here() - 1
    with pytest.raises(JobError) as raised:
        jet.newJob(p).join()
    assert str(raised.value) == (
        f"Stage 'jsonSink({output})' (defined at {THIS_FILE}:{line}): cannot write {{'x': nan}} as "
        "JSON: NaN and infinities are not standard JSON; write them as null with "
        "Sinks.json(directory, nonFiniteAsNull=True)"
    )
    assert not output.exists()


@pytest.mark.spark
def test_json_writes_nan_and_infinity_as_null_when_asked(jet, tmp_path):
    output = tmp_path / "out"
    items = [{"x": 1.5, "y": [float("inf"), -float("inf")]}, {"x": float("nan"), "y": []}]
    p = Pipeline.create()
    p.readFrom(Sources.items(items)).writeTo(Sinks.json(str(output), nonFiniteAsNull=True))
    jet.newJob(p).join()
    written = [json.loads(line) for line in readLines(output)]
    assert sorted(written, key=str) == sorted([{"x": 1.5, "y": [None, None]}, {"x": None, "y": []}], key=str)


def readLines(directory) -> list[str]:
    """Return the lines of the part files in ``directory``."""
    names = sorted(name for name in os.listdir(directory) if name.startswith("part-"))
    return [line for name in names for line in open(os.path.join(directory, name), encoding="utf-8").read().splitlines()]
