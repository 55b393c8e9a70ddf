"""Tutorial 07: count the words of a stream of files, per ten seconds of event time."""

import argparse
import concurrent.futures
import os
import pathlib
import re
import tempfile
import time
from collections import defaultdict

from sparkjet import AggregateOperations, Jet, Pipeline, Sinks, Sources, WindowDefinition, wholeItem
from sparkjet.planner.progress import awaitProgress

BUNDLED_CORPUS = pathlib.Path(__file__).resolve().parent / "data" / "tinyshakespeare.txt"

WINDOW_MILLIS = 10_000
"""The size of a tumbling window of event time."""
ALLOWED_LAG_MILLIS = 2_000
"""How far behind the highest timestamp seen an event may come and still be counted."""
STEP_MILLIS = 100
"""The event time from one line of the corpus to the next."""
LAST_EVENT_AHEAD_MILLIS = 60_000
"""How far after the corpus's last line the last file's one line happens."""


def eventTime(line: str) -> int:
    """Return the event time of a line: the milliseconds it starts with."""
    return int(line.split(" ", 1)[0])


def words(line: str) -> list[str]:
    """Split the text after a line's timestamp into lower-case words; empty strings remain."""
    return re.split(r"\W+", line.split(" ", 1)[1].lower())


def windowedWordCountPipeline(incoming: str) -> Pipeline:
    """Return the pipeline counting each word per ten seconds of event time in the lines of the
    files that appear in ``incoming``, into the list 'counts'."""
    p = Pipeline.create()
    (
        p.readFrom(Sources.fileWatcher(incoming)).setName("incoming files")
        .withTimestamps(eventTime, ALLOWED_LAG_MILLIS)      # event time from each line, lag 2 s
        .flatMap(words)                                     # each word keeps its line's time
        .filter(lambda word: word != "")
        .groupingKey(wholeItem())
        .window(WindowDefinition.tumbling(WINDOW_MILLIS))   # [0, 10 s), [10 s, 20 s), ...
        .aggregate(AggregateOperations.counting())          # a KeyedWindowResult per word and window
        .writeTo(Sinks.list("counts"))
    )
    return p


def timestamped(lines: list[str], step: int = STEP_MILLIS) -> list[str]:
    """Prefix each line with its event time, ``step`` milliseconds after the line before it."""
    return [f"{number * step} {line}" for number, line in enumerate(lines)]


def dropFile(incoming: pathlib.Path, name: str, lines: list[str]) -> None:
    """Write ``lines`` under a hidden name in ``incoming``, then rename the file into place:
    Spark skips names starting with '.', and sees the renamed file whole or not at all."""
    hidden = incoming / f".{name}.writing"
    hidden.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.rename(hidden, incoming / name)


def windowsWithWords(lines: list[str]) -> set[int]:
    """Return the start of each window in which one of the timestamped ``lines`` has a word."""
    withWords = (line for line in lines if re.search(r"\w", line.split(" ", 1)[1]))
    return {eventTime(line) // WINDOW_MILLIS * WINDOW_MILLIS for line in withWords}


def linesRead(job) -> int:
    """Return how many lines the job's micro-batches read so far (a stream job's figures grow
    while it runs; a micro-batch counts once the job's run over it is done)."""
    return sum(batch.itemsRead for batch in job.metrics().microBatches)


def awaitRead(job, lines: int, stallSeconds: float) -> None:
    """Wait until the job's micro-batches have read ``lines`` lines, however long that takes
    while the job moves on; give up once nothing moved for ``stallSeconds``."""
    awaitProgress([job], lambda: linesRead(job) >= lines, stallSeconds, lambda: f"read {linesRead(job)} of {lines} lines")


def awaitWindows(jet: Jet, job, expected: set[int], stallSeconds: float) -> list:
    """Wait until the list 'counts' holds results of every window starting at ``expected``;
    return them. A window's results arrive together: a micro-batch's list items at once."""

    def missing() -> set[int]:
        return expected - {result.start for result in list(jet.getList("counts"))}

    awaitProgress([job], lambda: not missing(), stallSeconds, lambda: f"has no results of {len(missing())} windows yet")
    return list(jet.getList("counts"))


def cancelled(job) -> None:
    """Cancel a stream job and wait until it stopped: join() then raises CancelledError (and
    the job's own error if it failed before)."""
    job.cancel()
    try:
        job.join()
    except concurrent.futures.CancelledError:
        pass


def perWindow(results: list) -> dict[tuple[int, int], dict[str, int]]:
    """Return the counts of each window ``(start, end)`` by word, windows in order."""
    windows: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for result in results:
        windows[result.start, result.end][result.key] = result.result
    return dict(sorted(windows.items()))


def printWindows(windows: dict, closedBy: dict[int, str], top: int) -> None:
    """Print each window's number of words, the file whose reading closed it and its top words."""
    print(f"The {top} most frequent words of each window of event time:")
    for (start, end), counts in windows.items():
        best = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))[:top]
        print(
            f"  [{start:>6,} ms, {end:>6,} ms)  {sum(counts.values()):>5} words, closed by {closedBy[start]}:  "
            + ", ".join(f"{word} {count}" for word, count in best)
        )


def lineCount(lines: int) -> str:
    """Return '1 line' or 'N lines'."""
    return f"{lines} line" if lines == 1 else f"{lines} lines"


def printFigures(dropped: list[tuple[str, list[str], float]], metrics) -> None:
    """Print the files dropped, then the job's figures: its micro-batches, and per vertex the
    items in and out and the watermark it reached."""
    print("Files dropped into the watched directory:")
    for name, content, seconds in dropped:
        first, last = eventTime(content[0]), eventTime(content[-1])
        times = f"{first:,} to {last:,}" if last != first else f"{first:,}"
        print(f"  at {seconds:4.1f} s  {name:<14} {lineCount(len(content)):>9}, event time {times} ms")
    print("Micro-batches that read lines:")
    for batch in metrics.microBatches:
        if batch.itemsRead:
            print(f"  batch {batch.batchId}: {lineCount(batch.itemsRead):>9} read and run in {batch.seconds:.1f} s")
    print(metrics.format())


def streamFiles(jet: Jet, job, incoming: pathlib.Path, files: dict[str, list[str]], stallSeconds: float):
    """Drop each file into ``incoming`` once the job has read the ones before it; return when
    each was dropped (seconds after the first) and, per window start, the file whose reading
    made its results arrive."""
    started, read = time.perf_counter(), 0
    dropped: list[tuple[str, list[str], float]] = []
    closedBy: dict[int, str] = {}
    for name, content in files.items():
        dropped.append((name, content, time.perf_counter() - started))
        dropFile(incoming, name, content)
        read += len(content)
        awaitRead(job, read, stallSeconds)
        for result in list(jet.getList("counts")):
            closedBy.setdefault(result.start, name)
    return dropped, closedBy


def main(argv: list[str] | None = None) -> dict:
    """Stream lines of the corpus into a watched directory a file at a time, print the top words
    of each ten-second window and the figures of the run, draw the plan; return the lines
    streamed, the window results (also by window), the file that closed each window and the
    seconds from the first file to the last window."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default=str(BUNDLED_CORPUS), help="the text file whose lines to stream")
    parser.add_argument("--lines", type=int, default=400, help="how many lines of the corpus to stream")
    parser.add_argument("--lines-per-file", type=int, default=100, help="how many lines each file holds")
    parser.add_argument("--top", type=int, default=5, help="how many words to print per window")
    parser.add_argument("--output", default=".", help="directory of the plan's picture")
    parser.add_argument(
        "--stall", type=float, default=300, help="seconds without progress (no item read, no task done) to give up after"
    )
    parser.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)

    lines = timestamped(pathlib.Path(args.corpus).read_text(encoding="utf-8").splitlines()[: args.lines])
    files = {
        f"lines-{number:04d}.txt": lines[first : first + args.lines_per_file]
        for number, first in enumerate(range(0, len(lines), args.lines_per_file))
    }
    files["last.txt"] = [f"{eventTime(lines[-1]) + LAST_EVENT_AHEAD_MILLIS} exeunt omnes"]

    with tempfile.TemporaryDirectory(prefix="sparkjet-tutorial-07-") as workDirectory:
        incoming = pathlib.Path(workDirectory) / "incoming"
        incoming.mkdir()
        p = windowedWordCountPipeline(str(incoming))
        jet = Jet(master=args.master)
        try:
            job = jet.newJob(p)
            try:
                started = time.perf_counter()
                dropped, closedBy = streamFiles(jet, job, incoming, files, args.stall)
                results = awaitWindows(jet, job, windowsWithWords(lines), args.stall)
                seconds = time.perf_counter() - started
            finally:
                cancelled(job)  # a stream job runs until cancelled; shutdown() would stop it to go on later
        finally:
            jet.shutdown()

    windows = perWindow(results)
    printWindows(windows, closedBy, args.top)
    printFigures(dropped, job.metrics())
    status = job.getStatus().value
    print(f"{len(results)} results of {len(windows)} windows in {seconds:.1f} s; after cancel() the job is {status}")
    written, note = job.renderSvg(str(output / "windowed-word-count-plan.svg"))
    print(note or f"The plan is drawn in {written}")
    return {"lines": lines, "results": results, "windows": windows, "closedBy": closedBy, "seconds": seconds}


if __name__ == "__main__":
    main()
