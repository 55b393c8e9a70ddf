"""Benchmark scale, opt-in: ``SPARKJET_SCALE=1 pytest -m scale tests/faults/test_scale.py``.

A word count of 2 GB of text with 10 million distinct keys, each twice, must complete within
the machine's memory; it takes minutes, so the test suite skips it otherwise.
"""

import os
import shutil

import pytest

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem

pytestmark = [
    pytest.mark.spark,
    pytest.mark.scale,
    pytest.mark.skipif(os.environ.get("SPARKJET_SCALE") != "1", reason="opt-in: SPARKJET_SCALE=1"),
]

KEYS = 10_000_000
FILES = 8
PAYLOAD = "x" * 90
"""Each line is a 9-digit key, a comma and this: 100 bytes with its newline."""


@pytest.fixture
def twoGigabytes(tmp_path):
    """A directory of ``FILES`` files holding every key twice, 2 GB in all; removed after."""
    directory = tmp_path / "input"
    directory.mkdir()
    perFile = KEYS // FILES
    for number in range(FILES):
        keys = range(number * perFile, (number + 1) * perFile)
        with open(directory / f"part-{number}.txt", "w") as file:
            for _ in range(2):
                file.writelines(f"{key:09d},{PAYLOAD}\n" for key in keys)
    yield directory
    shutil.rmtree(directory)


def keyOfLine(line: str) -> str:
    """The key of a line: its first 9 characters."""
    return line[:9]


def countOf(entry: tuple) -> int:
    """The count of a ``(key, count)`` entry."""
    return entry[1]


def test_ten_million_keys_in_two_gigabytes_are_counted(jet, twoGigabytes):
    p = Pipeline.create()
    (
        p.readFrom(Sources.files(str(twoGigabytes)))
        .map(keyOfLine)
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .map(countOf)
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("keysPerCount"))
    )
    jet.newJob(p).join()
    assert jet.getList("keysPerCount") == [(2, KEYS)]
