"""sparkjet: tutorial 01's word count through the public API, on Jet(master="local[2]")."""

from benchmarks.session import MASTER, measureJobs
from benchmarks.words import split
from sparkjet import AggregateOperations, Jet, Pipeline, Sinks, Sources, wholeItem


def wordCountPipeline(directory: str) -> Pipeline:
    """Return tutorial 01's pipeline, stage for stage, with the shared tokenization."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.files(directory))
        .flatMap(split)
        .filter(lambda word: word != "")
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.list("counts"))
    )
    return p


def countWords(jet: Jet, directory: str) -> list[tuple[str, int]]:
    """Run the pipeline over ``directory``; return the counts this job added to the list."""
    before = len(jet.getList("counts"))
    jet.newJob(wordCountPipeline(directory)).join()
    return jet.getList("counts")[before:]


def measure(directory: str, secondJob: bool = False) -> dict:
    """Start the session, then time the job alone (with ``secondJob``, twice)."""
    jet = Jet(master=MASTER)
    result = measureJobs(jet.spark(), lambda: countWords(jet, directory), secondJob)
    jet.shutdown()
    return result
