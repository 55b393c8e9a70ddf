"""A Python worker dies in the first attempt of one task: Spark runs the task again, and the job
gives exactly the reference result, closes its processors and writes each line once."""

import functools
import operator
import re
from collections import Counter

import pytest

from sparkjet.coredag import AggregateOperation
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import plan
from tests.faults import DyingLine, DyingOnce, MarkingProcessor, noted

pytestmark = pytest.mark.spark

ITEMS = range(3000)
PARALLELISM = 2


def keyOf(item: int) -> int:
    """The grouping key: one of 7."""
    return item % 7


def increment(item: int) -> int:
    """The map stage's function."""
    return item + 1


def notMultipleOf3(item: int) -> bool:
    """The filter stage's function."""
    return item % 3 != 0


def identity(acc: int) -> int:
    """The export-and-finish function: the sum itself."""
    return acc


def referenceSums() -> dict[int, int]:
    """The sums per key of the pipeline below, computed with a Counter."""
    sums: Counter = Counter()
    for item in map(increment, ITEMS):
        if notMultipleOf3(item):
            sums[keyOf(item)] += item
    return dict(sums)


def marking(markers: str) -> functools.partial:
    """Return the supplier of the processors noting their init and close() into ``markers``."""
    return functools.partial(MarkingProcessor, markers)


def sumsPipeline(markers: str, dyingVertex: str) -> Pipeline:
    """items -> marking -> fused(map, filter) -> sum per key -> list 'sums', all of parallelism
    2; the user function that runs in ``dyingVertex`` kills its worker once."""

    def dying(fn, vertex: str, at: int):
        return DyingOnce(fn, markers, at) if vertex == dyingVertex else fn

    op = (
        AggregateOperation.withCreate(int)
        .andAccumulate(dying(operator.add, "group-and-aggregate-prepare", 100))
        .andCombine(dying(operator.add, "group-and-aggregate", 2))
        .andExportFinish(identity)
    )
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(ITEMS)).setLocalParallelism(PARALLELISM)
        .customTransform("marking", marking(markers)).setLocalParallelism(PARALLELISM)
        .map(dying(increment, "fused(map, filter)", 100)).setLocalParallelism(PARALLELISM)
        .filter(notMultipleOf3).setLocalParallelism(PARALLELISM)
        .groupingKey(keyOf)
        .aggregate(op).setLocalParallelism(PARALLELISM)
        .writeTo(Sinks.list("sums"))
    )
    return p


def assertClosedWhereverTheyRan(markers) -> None:
    """Every processor that started was closed, but in the attempt whose worker died."""
    died = noted(markers, "died")
    assert len(died) == 1
    assert noted(markers, "closed") == noted(markers, "init") - died
    assert {partition for _, partition, _ in noted(markers, "closed")} == {0, 1}


@pytest.mark.parametrize(
    "dyingVertex", ["fused(map, filter)", "group-and-aggregate-prepare", "group-and-aggregate"]
)
def test_a_lost_worker_is_replaced_and_the_result_is_exact(jet, tmp_path, dyingVertex):
    p = sumsPipeline(str(tmp_path), dyingVertex)
    assert dyingVertex in {vertex.name for vertex in plan(p)}
    jet.newJob(p).join()
    assert dict(jet.getList("sums")) == referenceSums()
    assertClosedWhereverTheyRan(tmp_path)


COMMITTED_FILE = re.compile(r"\.?(part-\d+|_SUCCESS)(\.crc)?")


def committedLines(directory) -> Counter:
    """Return the lines of the part files in ``directory``; assert it holds nothing else."""
    assert [path.name for path in directory.iterdir() if not COMMITTED_FILE.fullmatch(path.name)] == []
    return Counter(line for path in directory.glob("part-*") for line in path.read_text().splitlines())


def test_a_files_sink_whose_worker_dies_writes_each_line_once(jet, tmp_path):
    markers, output = tmp_path / "markers", tmp_path / "output"
    markers.mkdir()
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(ITEMS)).setLocalParallelism(PARALLELISM)
        .customTransform("marking", marking(str(markers))).setLocalParallelism(PARALLELISM)
        .map(functools.partial(DyingLine, markers=str(markers))).setLocalParallelism(PARALLELISM)
        .writeTo(Sinks.files(str(output))).setLocalParallelism(PARALLELISM)
    )
    jet.newJob(p).join()
    assert committedLines(output) == Counter(str(item) for item in ITEMS)
    assertClosedWhereverTheyRan(markers)
