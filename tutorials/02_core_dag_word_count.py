"""Tutorial 02: the word count of tutorial 01 as a Core DAG built by hand, run and drawn."""

import argparse
import operator
import pathlib
import re

from sparkjet import DAG, AbstractProcessor, AggregateOperation, Edge, Jet
from sparkjet.coredag.processors.aggregation import AccumulateByKeyP, CombineByKeyP
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ReadFilesP
from sparkjet.planner.render import writePlanSvg

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data"


def words(line: str) -> list[str]:
    """Split a line into lower-case words, dropping the empty strings ``re.split`` leaves."""
    return [word for word in re.split(r"\W+", line.lower()) if word]


class Tokenizer(AbstractProcessor):
    """Emits the words of each line; when the outbox refuses a word, offers it again next call."""

    def __init__(self) -> None:
        super().__init__()
        self._flatMapper = self.flatMapper(words)

    def tryProcess0(self, line: str) -> bool:
        """Emit the words of ``line``; False keeps the line in the inbox until all are emitted."""
        return self._flatMapper.tryProcess(line)


COUNTING = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda count, word: count + 1,
    combineFn=lambda left, right: left + right,
)


def theWord(word: str) -> str:
    """The partitioning key of a word: the word itself."""
    return word


entryKey = operator.itemgetter(0)


def wordCountDag(inputDirectory: str, glob: str = "*") -> DAG:
    """Return the Core DAG counting the words of the files in ``inputDirectory`` into 'counts'."""
    dag = DAG()
    source = dag.newVertex("source", ReadFilesP(inputDirectory, glob))
    tokenize = dag.newVertex("tokenize", Tokenizer)
    accumulate = dag.newVertex("accumulate", AccumulateByKeyP(theWord, COUNTING, "accumulate"))
    combine = dag.newVertex("combine", CombineByKeyP(COUNTING, "combine"))
    sink = dag.newVertex("sink", ListSinkP("counts"), localParallelism=1)
    return (
        dag.edge(Edge.between(source, tokenize))
        .edge(Edge.between(tokenize, accumulate).partitioned(theWord))
        .edge(Edge.between(accumulate, combine).distributed().partitioned(entryKey))
        .edge(Edge.between(combine, sink))
    )


def main(argv: list[str] | None = None) -> list[tuple[str, int]]:
    """Print the DAG, run it, print the most frequent words, draw it; return every count."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", default=str(BUNDLED_CORPUS), help="directory of text files")
    parser.add_argument("--glob", default="*.txt", help="which files of the directory to read")
    parser.add_argument("--top", type=int, default=10, help="how many words to print")
    parser.add_argument("--svg", default="core-dag-plan.svg", help="where to draw the DAG")
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)

    dag = wordCountDag(args.input, args.glob)
    print(dag.toDotString())
    jet = Jet(master=args.master)
    try:
        jet.newJob(dag).join()
        counts = sorted(jet.getList("counts"), key=lambda entry: (-entry[1], entry[0]))
    finally:
        jet.shutdown()
    print(f"The {args.top} most frequent words in {args.input}:")
    for word, count in counts[: args.top]:
        print(f"{count:>8}  {word}")
    written, note = writePlanSvg(dag, args.svg)
    print(note or f"The DAG is drawn in {written}")
    return counts


if __name__ == "__main__":
    main()
