"""`make wordcount` (.ci/wordcount): the word count over the bundled corpus prints its top words,
draws its plan with the run's figures and writes its report, and says once where each is."""

import os
import subprocess
from collections import Counter

from tests.conftest import PROJECT, tokenize

PLAN = PROJECT / "out" / "word-count-plan.svg"
REPORT = PROJECT / "out" / "word-count-report.html"


def test_the_word_count_command_prints_the_top_words_and_says_once_where_each_file_is():
    done = subprocess.run(
        ["bash", ".ci/wordcount", "--top", "3"], cwd=PROJECT, capture_output=True, text=True,
        env={**os.environ, "SPARKJET_MASTER": "local[2]", "SPARKJET_UI": "0"},
    )
    assert done.returncode == 0, done.stderr
    corpus = (PROJECT / "tutorials" / "data" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    counts = Counter(word for line in corpus.splitlines() for word in tokenize(line))
    top = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))[:3]
    assert done.stdout.splitlines() == [
        "The 3 most frequent words in tutorials/data/tinyshakespeare.txt:",
        *(f"{count:>8}  {word}" for word, count in top),
    ]
    said = done.stdout + done.stderr
    assert said.count(PLAN.name) == 1 and said.count(REPORT.name) == 1
    assert f"with its figures in {PLAN}\n" in done.stderr and f"to {REPORT}\n" in done.stderr
    assert PLAN.is_file() and REPORT.is_file()
