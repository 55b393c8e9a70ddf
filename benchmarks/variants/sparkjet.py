"""sparkjet: tutorial 01's word-count pipeline, through the public API, on Jet(master="local[2]")."""

import runpy
import time

from benchmarks.inputs import PROJECT
from benchmarks.session import MASTER, sparkResult
from benchmarks.words import summarize
from planner import Jet

TUTORIAL = runpy.run_path(str(PROJECT / "tutorials" / "01_word_count.py"))


def countWords(jet: Jet, directory: str) -> list[tuple[str, int]]:
    """Run tutorial 01's pipeline over ``directory``; return the counts this job added."""
    before = len(jet.getList("counts"))
    jet.newJob(TUTORIAL["wordCountPipeline"](directory)).join()
    return jet.getList("counts")[before:]


def measure(directory: str) -> dict:
    """Start the session, then time the job alone."""
    jet = Jet(master=MASTER)
    spark = jet.spark()
    started = time.perf_counter()
    counts = countWords(jet, directory)
    result = sparkResult(spark, time.perf_counter() - started, summarize(counts))
    jet.shutdown()
    return result
