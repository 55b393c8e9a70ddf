"""An output directory that already exists."""

import os

import pytest

from coredag import DagError
from pipeline import Pipeline, Sinks, Sources


def test_an_existing_output_directory_is_refused_at_submission_and_left_untouched(submitter, tmp_path):
    output = tmp_path / "out"
    output.mkdir()
    (output / "part-00000").write_text("an earlier result\n")
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 2])).writeTo(Sinks.files(str(output)))
    with pytest.raises(DagError) as raised:
        submitter.newJob(p)
    assert str(raised.value) == (
        f"Sinks.files: the output directory '{output}' already exists; choose a new directory or "
        "remove this one (it was left untouched)"
    )
    assert os.listdir(output) == ["part-00000"]
    assert (output / "part-00000").read_text() == "an earlier result\n"
