"""Tutorial 05: see what a pipeline becomes before it runs, and what it did after."""

import argparse
import pathlib
import re

from sparkjet import AggregateOperations, Jet, Pipeline, Sinks, Sources, plan, wholeItem
from sparkjet.planner.render import writePlanSvg

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data"


def longWordsPipeline(inputDirectory: str, glob: str = "*") -> Pipeline:
    """Count every word, and each word of seven letters or more, of the files in the directory."""
    p = Pipeline.create()
    words = (
        p.readFrom(Sources.files(inputDirectory, glob))
        .flatMap(lambda line: re.split(r"\W+", line.lower())).setName("split into words")
        .filter(lambda word: word != "").setName("drop empty")
    )
    (
        words.filter(lambda word: len(word) >= 7).setName("long words")
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting()).setName("count each long word")
        .writeTo(Sinks.list("long words"))
    )
    words.aggregate(AggregateOperations.counting()).setName("count all words").writeTo(Sinks.list("all words"))
    return p


def main(argv: list[str] | None = None) -> dict:
    """Explain and draw the plan, run it, print its figures, draw them and write the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--glob", default="*.txt", help="which files of the directory to read")
    parser.add_argument("--output", default=".", help="directory of the pictures and the report")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)

    p = longWordsPipeline(args.input, args.glob)
    planned = plan(p)
    print(planned.explain())
    writePlanSvg(p, str(output / "plan.svg"))

    jet = Jet(master=args.master)
    try:
        job = jet.newJob(p)
        metrics = job.metrics()
        job.renderSvg(str(output / "plan-with-figures.svg"))
        job.renderHtml(str(output / "report.html"))
        allWords = jet.getList("all words")[-1]
        longWords = len(jet.getList("long words"))
    finally:
        jet.shutdown()
    print()
    print(metrics.format())
    print()
    print(f"{allWords} words, {longWords} distinct long words")
    print(f"Drawn in {output / 'plan.svg'} and {output / 'plan-with-figures.svg'}; report in {output / 'report.html'}")
    return {"explanation": planned.explain(), "metrics": metrics, "allWords": allWords, "longWords": longWords}


if __name__ == "__main__":
    main()
