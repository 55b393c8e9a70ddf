"""The determinism matrix: word count, a hash join, a keyed toList and sorts, at local parallelism
1, 2, 3 and 8, over 1 and 8 files, in drivers started with PYTHONHASHSEED 0 and random, give
the results of an independent computation: the sorts in its order (by a key with ties, the order
of the keys)."""

import functools
import itertools
import json
import os
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter

import pytest

from tests.conftest import PROJECT, run, tokenize
from tests.determinism.matrix_driver import (
    DIGESTS,
    LETTER_TABLE,
    PARALLELISMS,
    listsDigest,
    orderedDigest,
    tieGroupsDigest,
    unorderedDigest,
)

pytestmark = pytest.mark.spark

HASH_SEEDS = ("0", "random")
"""PySpark's own seed for its workers (where none is set), and Python's default, a random one:
two drivers whose workers hash differently is what the matrix needs, and a third JVM beside them
on 2 cores made the drivers' run 205 s where two took 166 s, at a load of 9-20 (by turns)."""
LINES = 4000
"""How many lines of the corpus the matrix reads: the cost is Spark's, per task, not per word."""


def writeSplit(directory, lines: list[str], count: int):
    """Write ``lines`` into ``count`` files of consecutive lines in ``directory``; return it."""
    directory.mkdir()
    share = -(-len(lines) // count)
    for number in range(count):
        chunk = lines[number * share : (number + 1) * share]
        text = "".join(line + "\n" for line in chunk)
        (directory / f"part-{number}.txt").write_text(text, encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def lines(corpusLines) -> list[str]:
    """The lines the matrix reads."""
    return corpusLines[:LINES]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, lines) -> dict[str, str]:
    """The directories of the lines in one file and split into eight, by name."""
    root = tmp_path_factory.mktemp("matrix")
    return {
        "1 file": str(writeSplit(root / "one", lines, 1)),
        "8 files": str(writeSplit(root / "eight", lines, 8)),
    }


def runDriver(directories: tuple[str, ...], seed: str) -> tuple[int, list[dict]]:
    """Run the matrix driver with ``PYTHONHASHSEED=seed``; return its worker hash and records. It
    prints a record per cell: it fails only once it has printed nothing for a long while."""
    env = dict(os.environ, PYTHONHASHSEED=seed, PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(PROJECT))
    done = run([sys.executable, "-m", "tests.determinism.matrix_driver", *directories], env=env, cwd=PROJECT)
    assert done.returncode == 0, f"the driver with PYTHONHASHSEED={seed} failed:\n{done.stderr[-3000:]}"
    first, *records = (json.loads(line) for line in done.stdout.splitlines())
    return first["workerHash"], records


@pytest.fixture(scope="module")
def runs(inputs) -> dict[str, tuple[int, list[dict]]]:
    """The worker hash and records of the drivers, run at the same time, by hash seed."""
    run = functools.partial(runDriver, tuple(inputs.values()))
    with ThreadPoolExecutor(len(HASH_SEEDS)) as pool:
        return dict(zip(HASH_SEEDS, pool.map(run, HASH_SEEDS)))


def expectedDigests(lines: list[str]) -> dict[str, str]:
    """The digest of each pipeline's result, computed here with Counter, dicts and sorted()."""
    words = [word for line in lines for word in tokenize(line)]
    counts = Counter(words)
    table, byLength = defaultdict(list), defaultdict(list)
    for letter, match in LETTER_TABLE:
        table[letter].append(match)
    for word in words:
        byLength[len(word)].append(word)
    return {
        "wordCount": unorderedDigest(counts.items()),
        "hashJoin": unorderedDigest((word, match) for word in words for match in table.get(word[0], [None])),
        "wordsByLength": listsDigest(byLength.items()),
        "sort": orderedDigest(sorted((count, word) for word, count in counts.items())),
        "mostFrequentFirst": orderedDigest(sorted(counts.items(), key=lambda e: (-e[1], e[0]))),
        "sortByCount": tieGroupsDigest(sorted(counts.items(), key=itemgetter(1), reverse=True)),
    }


def test_every_cell_of_the_matrix_ran(runs, inputs):
    cells = sorted(itertools.product(DIGESTS, PARALLELISMS, inputs.values()))
    for seed, (_, records) in runs.items():
        ran = [(r["pipeline"], r["parallelism"], r["input"]) for r in records]
        assert sorted(ran) == cells, f"PYTHONHASHSEED={seed}"


def test_every_result_equals_the_independent_computation(runs, inputs, lines):
    expected = expectedDigests(lines)
    names = {directory: name for name, directory in inputs.items()}
    wrong = [
        f"{r['pipeline']} at parallelism {r['parallelism']} over {names[r['input']]}, PYTHONHASHSEED={seed}"
        for seed, (_, records) in runs.items()
        for r in records
        if r["digest"] != expected[r["pipeline"]]
    ]
    assert not wrong, "Unlike the independent computation:\n" + "\n".join(wrong)


def test_the_python_workers_of_the_drivers_hash_differently(runs):
    hashes = {seed: workerHash for seed, (workerHash, _) in runs.items()}
    assert len(set(hashes.values())) == len(HASH_SEEDS), hashes
