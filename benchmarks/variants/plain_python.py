"""Plain Python, no Spark: two processes each count half of the bytes with a Counter; merged."""

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Iterator

from benchmarks.words import countWords, summarize

PROCESSES = 2
BLOCK = 16 * 1024 * 1024


def byteRanges(files: list[tuple[str, int]], index: int, count: int) -> list[tuple[str, int, int]]:
    """Return ``(path, start, end)`` of share ``index`` of ``count`` of the files' bytes."""
    total = sum(size for _, size in files)
    low, high = total * index // count, total * (index + 1) // count
    ranges, offset = [], 0
    for path, size in files:
        start, end = max(low - offset, 0), min(high - offset, size)
        if start < end:
            ranges.append((path, start, end))
        offset += size
    return ranges


def linesStartingIn(path: str, start: int, end: int) -> Iterator[str]:
    """Yield the lines whose first byte lies in ``[start, end)``, read in large blocks."""
    with open(path, "rb") as file:
        if start > 0:
            file.seek(start - 1)
            file.readline()
        position = file.tell()
        while position < end:
            block = file.read(min(BLOCK, end - position))
            if not block:
                return
            if not block.endswith(b"\n"):
                block += file.readline()
            position += len(block)
            yield from block.decode("utf-8").splitlines()


def countShare(ranges: list[tuple[str, int, int]]) -> Counter:
    """Count the words of the lines starting in ``ranges``."""
    return countWords(
        line for path, start, end in ranges for line in linesStartingIn(path, start, end)
    )


def measure(directory: str) -> dict:
    """Time the whole count: the pool's start, both halves, the merge."""
    names = sorted(os.listdir(directory))
    files = [
        (path, os.path.getsize(path)) for path in (os.path.join(directory, name) for name in names)
    ]
    started = time.perf_counter()
    with multiprocessing.Pool(PROCESSES) as pool:
        first, *others = pool.map(
            countShare, [byteRanges(files, i, PROCESSES) for i in range(PROCESSES)]
        )
    for other in others:
        first.update(other)
    seconds = time.perf_counter() - started
    return {"jobSeconds": seconds, **summarize(first.items()), "settings": None}
