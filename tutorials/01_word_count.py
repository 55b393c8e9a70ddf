"""Tutorial 01: count the words of a corpus with a sparkjet pipeline and draw its plan."""

import argparse
import pathlib

from sparkjet import Jet, JobStatus, writePlanSvg
from sparkjet.examples.word_count import wordCountPipeline

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data"


def main(argv: list[str] | None = None) -> list[tuple[str, int]]:
    """Count the words, print the most frequent ones, draw the plan; return the top words."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--glob", default="*.txt", help="which files of the directory to read")
    parser.add_argument("--top", type=int, default=10, help="how many words to print")
    parser.add_argument("--svg", default="word-count-plan.svg", help="where to draw the plan")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)

    p = wordCountPipeline(args.input, args.glob)
    jet = Jet(master=args.master)
    try:
        job = jet.newJob(p)
        job.join()
        top = sorted(jet.getList("counts"), key=lambda entry: (-entry[1], entry[0]))[: args.top]
    finally:
        jet.shutdown()
    if job.getStatus() is JobStatus.NOT_RUNNING:  # only planned (sparkjet plan): no words to print
        return []
    print(f"The {args.top} most frequent words in {args.input}:")
    for word, count in top:
        print(f"{count:>8}  {word}")
    written, note = writePlanSvg(p, args.svg)
    print(note or f"The plan is drawn in {written}")
    return top


if __name__ == "__main__":
    main()
