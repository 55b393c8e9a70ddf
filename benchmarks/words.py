"""The one tokenization every variant uses, and the summary that proves two counts equal."""

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Iterable

_CHUNK = 100_000


def split(line: str) -> list[str]:
    """Split a line into lower-case words, as tutorial 01 does; empty strings remain."""
    return re.split(r"\W+", line.lower())


def countWords(lines: Iterable[str]) -> Counter:
    """Count the non-empty words of ``lines`` with C-level iterators: the plain-Python idiom."""
    return Counter(filter(None, itertools.chain.from_iterable(map(split, lines))))


def summarize(items: Iterable[tuple[str, int]]) -> dict:
    """Return the total, the number of distinct words and a SHA-256 of the sorted items."""
    ordered = sorted(items)
    digest = hashlib.sha256()
    for start in range(0, len(ordered), _CHUNK):
        chunk = ordered[start : start + _CHUNK]
        digest.update("".join(f"{word}\t{count}\n" for word, count in chunk).encode())
    return {
        "total": sum(count for _, count in ordered),
        "distinct": len(ordered),
        "digest": digest.hexdigest(),
    }
