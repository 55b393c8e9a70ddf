"""Count the words of a text with a sparkjet pipeline and print the most frequent ones.

It runs wherever sparkjet is installed: ``python -m sparkjet.examples.word_count [PATH] [--top N]``,
``sparkjet run -m sparkjet.examples.word_count`` (``sparkjet plan -m ...`` draws its plan). Without
PATH it reads the opening of Shakespeare's Coriolanus that ships beside it (data/README.md).
"""

import argparse
import pathlib
import re
from glob import escape as escapeGlob

from sparkjet import AggregateOperations, Jet, JobStatus, Pipeline, Sinks, Sources, wholeItem

BUNDLED_TEXT = pathlib.Path(__file__).resolve().parent / "data" / "coriolanus.txt"
"""The text the example counts when given no PATH: about 4 KB of Coriolanus."""


def tokenize(line: str) -> list[str]:
    """Split a line into lower-case words; empty strings remain for the filter to drop."""
    return re.split(r"\W+", line.lower())


def wordCountPipeline(inputDirectory: str, glob: str = "*") -> Pipeline:
    """Return the pipeline counting words of the files in ``inputDirectory`` into list 'counts'."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.files(inputDirectory, glob))
        .flatMap(tokenize)
        .filter(lambda word: word != "")
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("counts"))
    )
    return p


def filesAt(path: pathlib.Path) -> tuple[str, str]:
    """Return the directory and glob that read ``path``: the file alone, or every file of a directory."""
    if path.is_dir():
        return str(path), "*"
    return str(path.parent), escapeGlob(path.name)


def main(argv: list[str] | None = None) -> list[tuple[str, int]]:
    """Count the words, print the most frequent ones; return them (none when ``sparkjet plan``
    only plans the job: then nothing ran, and nothing is printed)."""
    parser = argparse.ArgumentParser(prog="sparkjet.examples.word_count", description=__doc__.splitlines()[0])
    parser.add_argument(
        "path", metavar="PATH", nargs="?", type=pathlib.Path, default=BUNDLED_TEXT,
        help="a text file, or a directory whose files are all read (default: the bundled Coriolanus)",
    )
    parser.add_argument("--top", metavar="N", type=int, default=10, help="how many words to print")
    args = parser.parse_args(argv)

    jet = Jet()
    try:
        job = jet.newJob(wordCountPipeline(*filesAt(args.path)))
        job.join()
        if job.getStatus() is JobStatus.NOT_RUNNING:  # sparkjet plan: planned, not run
            return []
        top = sorted(jet.getList("counts"), key=lambda entry: (-entry[1], entry[0]))[: args.top]
    finally:
        jet.shutdown()
    print(f"The {args.top} most frequent words in {args.path}:")
    for word, count in top:
        print(f"{count:>8}  {word}")
    return top


if __name__ == "__main__":
    main()
