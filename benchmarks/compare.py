"""Two trees of sparkjet side by side, as a redesign is measured: the word count (100 MiB, one
file and eight), the running count at 100k keys held and the windowed stream, each tree running
its own harness in its own ``.venv``, the two alternated within each round and the order turned
every round; then a table of each figure's medians and their ratio.

``python -m benchmarks.compare BEFORE_TREE AFTER_TREE [--rounds 3] [--workdir DIR] [--report FILE]``

Each tree needs its ``.venv`` with the bench extra (``bash benchmarks/run --help`` there sets it
up). A tree older than the streaming harness's pacing by lines read (benchmarks/streaming.py's
``awaitProcessed`` summing ``lines``) never drops its paced files: give it this tree's
streaming.py and streaming_variants.py."""

import argparse
import pathlib
import re
import statistics
import subprocess

from benchmarks import markdown

COMMANDS = {
    "batch": ["-m", "benchmarks", "--sizes", "100", "--second-job-sizes=", "--repetitions", "1", "--no-profile",
              "--variants", "sparkjet,dataframe", "--workdir", "{work}", "--results", "{report}"],
    "state": ["-m", "benchmarks.state", "--keys", "100000", "--hot-keys=", "--variants", "sparkjet,ss-hdfs",
              "--repetitions", "1", "--workdir", "{work}", "--report", "{report}"],
    "stream": ["-m", "benchmarks.streaming", "--variants", "sparkjet,ss-python-udf", "--repetitions", "1",
               "--workdir", "{work}", "--report", "{report}"],
}  # fmt: skip
"""Each benchmark's command line in a tree (its Python's arguments)."""


def cells(line: str) -> list[str]:
    """Return a Markdown table row's cells."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def number(text: str) -> float:
    """Return the number a cell shows (``12,345``, ``2.85 s``)."""
    return float(re.sub(r"[^0-9.]", "", text))


def figures(kind: str, report: str) -> dict[str, float]:
    """Return the figures a ``kind`` report gives, by name."""
    lines = report.splitlines()
    if kind == "batch":
        ours = [cells(line) for line in lines if line.startswith("| sparkjet | ") and len(cells(line)) > 10]
        theirs = [cells(line) for line in lines if line.startswith("| dataframe | ") and len(cells(line)) > 10]
        found = {}
        for name, sparkjet, dataframe in zip(("1 file", "8 files"), ours, theirs):
            found[f"word count, {name}: sparkjet job s"] = number(sparkjet[1])
            found[f"word count, {name}: ÷ DataFrame"] = number(sparkjet[1]) / number(dataframe[1])
            found[f"word count, {name}: sparkjet CPU s"] = number(sparkjet[8])
            found[f"word count, {name}: sparkjet peak RSS MiB"] = number(sparkjet[9])
        return found
    if kind == "state":
        row = next(cells(line) for line in lines if line.startswith("| 100,000 | ") and len(cells(line)) == 4)
        return {"running count: micro-batch s": number(row[1]), "running count: ÷ SS HDFS": number(row[1]) / number(row[2])}
    variants = [cells(line) for line in lines if len(cells(line)) >= 15]  # the table of each variant
    ours = next(row for row in variants if row[0] == "sparkjet")
    theirs = next(row for row in variants if row[0] == "SS, Python UDF")
    return {
        "stream: counts identical (1) or not (0)": float(ours[1].startswith("identical")),
        "stream: burst lines/s": number(ours[4]), "stream: ÷ SS Python UDF, burst": number(ours[4]) / number(theirs[4]),
        "stream: paced lines/s": number(ours[8]), "stream: latency median s": number(ours[9]),
    }  # fmt: skip


def run(trees: dict[str, pathlib.Path], rounds: int, workdir: pathlib.Path) -> dict[str, dict[str, list[float]]]:
    """Run every benchmark in both trees, alternated, ``rounds`` times; return each tree's figures."""
    found: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for number_ in range(1, rounds + 1):
        order = list(trees) if number_ % 2 else list(reversed(trees))
        for kind, arguments in COMMANDS.items():
            for name in order:
                report = workdir / f"{name}-{kind}-{number_}.md"
                argv = [str(trees[name] / ".venv" / "bin" / "python"), *arguments]
                argv = [part.format(work=workdir / name, report=report) for part in argv]
                print(f"round {number_}: {kind} in {name}", flush=True)
                with open(workdir / f"{name}-{kind}-{number_}.log", "w") as log:
                    subprocess.run(argv, cwd=trees[name], stdout=log, stderr=subprocess.STDOUT, check=False)
                for figure, value in (figures(kind, report.read_text()) if report.exists() else {}).items():
                    found[name].setdefault(figure, []).append(value)
    return found


def table(found: dict[str, dict[str, list[float]]]) -> str:
    """Return the figures as a Markdown table: each run, the medians, after ÷ before."""
    before, after = found
    lines = markdown.head(("figure", f"{before}: runs", "median", f"{after}: runs", "median", "after ÷ before"), {0, 1, 3})
    shown = lambda value: f"{value:,.0f}" if value >= 100 else f"{value:.2f}"  # noqa: E731
    for figure in sorted(set(found[before]) | set(found[after])):
        runs = [found[name].get(figure, []) for name in (before, after)]
        medians = [statistics.median(values) if values else None for values in runs]
        ratio = f"{medians[1] / medians[0]:.2f}" if all(medians) else ""
        lines.append(markdown.row([
            figure, *(part for values, median in zip(runs, medians)
                      for part in (", ".join(map(shown, values)), shown(median) if median is not None else "")), ratio,
        ]))  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Run both trees' benchmarks alternated; print (and write) the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__)
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=pathlib.Path, default=pathlib.Path("/tmp/sparkjet-compare"))
    parser.add_argument("--report", type=pathlib.Path)
    options = parser.parse_args(argv)
    options.workdir.mkdir(parents=True, exist_ok=True)
    trees = {"before": options.before.resolve(), "after": options.after.resolve()}
    text = table(run(trees, options.rounds, options.workdir))
    if options.report:
        options.report.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
