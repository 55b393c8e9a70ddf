"""The ``sparkjet`` command: plan or run the pipelines a script submits."""

import argparse
import builtins
import difflib
import importlib.metadata
import os
import runpy
import sys

from sparkjet.coredag.errors import Interrupted, reducedTraceback
from sparkjet.planner.jet import MASTER_VARIABLE, OnlyPlanned, watchingJobs
from sparkjet.planner.render import writePlanSvg

EXAMPLES = """examples:
  sparkjet plan tutorials/01_word_count.py --svg plan.svg   draw the plan, run nothing
  sparkjet plan tutorials/01_word_count.py --dot plan.dot   write the Core DAG in Jet's DOT
  sparkjet plan tutorials/01_word_count.py --explain        what each vertex runs, and why
  sparkjet run tutorials/01_word_count.py --top 5           run the script's jobs on Spark
  sparkjet run --svg plan.svg tutorials/01_word_count.py    ... and draw each plan with its figures
  sparkjet run --html report.html job.py                    ... and write each job's report page
  sparkjet run --master spark://host:7077 job.py --top 5    ... on a Spark cluster
(run: sparkjet's options go before SCRIPT; what follows SCRIPT is the script's own arguments;
several jobs are numbered: report.html, report-2.html, ...)
"""


INTERRUPTED = 128 + 2
"""The exit status of a run that Ctrl-C (SIGINT) stopped, as a shell reports it."""


def commandLineParser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """Return the parser of ``sparkjet``'s command line, and that of its ``run`` command."""
    parser = argparse.ArgumentParser(
        prog="sparkjet",
        description="Plan or run sparkjet pipelines on Spark.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sparkjet {importlib.metadata.version('sparkjet')}")
    commands = parser.add_subparsers(dest="command", required=True)
    planCommand = commands.add_parser("plan", help="plan the jobs a script submits, without running them")
    planCommand.add_argument("script")
    planCommand.add_argument("--svg", metavar="FILE", help="draw the plan (pipeline and Core DAG) as SVG")
    planCommand.add_argument("--dot", metavar="FILE", help="write the Core DAG in Jet's DOT format")
    planCommand.add_argument("--explain", action="store_true", help="print what each vertex runs and why")
    runCommand = commands.add_parser("run", help="run a script's jobs on Spark")
    runCommand.add_argument(
        "--master", metavar="URL", help="the Spark master of every Jet() the script makes without one"
    )
    runCommand.add_argument("--svg", metavar="FILE", help="draw each job's plan with its figures as SVG")
    runCommand.add_argument("--html", metavar="FILE", help="write each job's report page (plan, figures)")
    runCommand.add_argument("script")
    runCommand.add_argument("scriptArgs", nargs=argparse.REMAINDER, help="the script's own arguments")
    return parser, runCommand


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and plan or run a script; return the exit status."""
    parser, runCommand = commandLineParser()
    argv = sys.argv[1:] if argv is None else argv
    args, unknown = parser.parse_known_args(argv)
    if args.command == "run" and unknown:
        runCommand.error(
            f"unrecognized arguments: {' '.join(unknown)} (sparkjet's options go before SCRIPT, "
            "the script's own after it)"
        )
    scriptArgs = _withSeparator(argv, args.script, args.scriptArgs) if args.command == "run" else unknown
    if not os.path.isfile(args.script):
        print(f"sparkjet: no script at '{args.script}'", file=sys.stderr)
        return 2
    try:
        if args.command == "plan":
            return planScript(args.script, scriptArgs, args.svg, args.dot, args.explain)
        if args.master:
            os.environ[MASTER_VARIABLE] = args.master
        status = runAndReport(args.script, scriptArgs, args.svg, args.html)
        if not args.html:
            _noteHtmlAfterScript(args.script, scriptArgs)
        return status
    except (KeyboardInterrupt, Interrupted) as interrupt:
        print(f"sparkjet: {str(interrupt) or 'interrupted (Ctrl-C)'}", file=sys.stderr)
        return INTERRUPTED
    except Exception as error:
        print(f"sparkjet: {type(error).__name__}: {error}{pythonsSuggestion(error)}", file=sys.stderr)
        print(reducedTraceback(error), end="", file=sys.stderr)
        return 1


def pythonsSuggestion(error: BaseException) -> str:
    """Return Python's ". Did you mean: 'x'?" for a misspelt attribute or name, which Python 3.11
    adds only to the tracebacks it prints itself; else ""."""
    name = getattr(error, "name", None)
    if not isinstance(name, str) or "Did you mean" in str(error):
        return ""
    if isinstance(error, AttributeError):
        candidates = dir(error.obj) if error.obj is not None else []
    elif isinstance(error, NameError) and error.__traceback__ is not None:
        frame = _lastFrame(error.__traceback__)
        candidates = [*frame.f_locals, *frame.f_globals, *dir(builtins)]
    else:
        return ""
    matches = difflib.get_close_matches(name, [c for c in candidates if not c.startswith("_")], n=1)
    return f". Did you mean: '{matches[0]}'?" if matches else ""


def _lastFrame(tb):
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame


def runScript(script: str, scriptArgs: list[str]) -> None:
    """Run ``script`` as ``__main__`` with ``scriptArgs`` as its arguments."""
    savedArgv = sys.argv
    sys.argv = [script, *scriptArgs]
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = savedArgv


def runAndReport(script: str, scriptArgs: list[str], svg: str | None, html: str | None) -> int:
    """Run ``script``'s jobs, their progress shown on a terminal; then draw each job's plan with
    its figures into ``svg`` and write its report into ``html``, when asked."""
    from sparkjet.planner.progress import showingProgress  # imports pyspark, which planning never needs

    with watchingJobs(runs=True) as jobs, showingProgress(jobs):
        runScript(script, scriptArgs)
    if (svg or html) and not jobs:
        print(f"sparkjet: {script} submitted no job", file=sys.stderr)
        return 1
    for number, job in enumerate(jobs, start=1):
        if svg:
            written, note = job.renderSvg(_numbered(svg, number))
            print(note or f"drew the plan of {job.name} with its figures in {written}", file=sys.stderr)
        if html:
            written = job.renderHtml(_numbered(html, number))
            print(f"wrote the report of {job.name} to {written}", file=sys.stderr)
    return 0


def planScript(
    script: str, scriptArgs: list[str], svg: str | None, dot: str | None, explain: bool = False
) -> int:
    """Run ``script`` with jobs captured, not run, until it asks a job for its figures; draw or
    print each job's plan."""
    with watchingJobs(runs=False) as jobs:
        try:
            runScript(script, scriptArgs)
        except OnlyPlanned as stop:
            print(f"sparkjet: {script} stopped where it asked for figures: {stop}", file=sys.stderr)
    if not jobs:
        print(f"sparkjet: {script} submitted no job", file=sys.stderr)
        return 1
    for number, job in enumerate(jobs, start=1):
        name, planned = job.name, job.plan
        if dot:
            with open(_numbered(dot, number), "w", encoding="utf-8") as file:
                file.write(planned.toDotString() + "\n")
            print(f"wrote the Core DAG of {name} to {_numbered(dot, number)}", file=sys.stderr)
        if svg:
            written, note = writePlanSvg(planned, _numbered(svg, number))
            print(note or f"wrote the plan of {name} to {written}", file=sys.stderr)
        if explain:
            print(planned.explain() if planned.hasStages() else planned.toDotString())
        if not dot and not svg and not explain:
            print(planned.toDotString())
    return 0


def _withSeparator(argv: list[str], script: str, scriptArgs: list[str]) -> list[str]:
    """Return ``scriptArgs`` with the ``--`` argparse drops when it follows SCRIPT: the script
    gets it, as ``python SCRIPT -- x`` would give it."""
    start = len(argv) - len(scriptArgs)
    if argv[start - 2 : start] == [script, "--"]:
        return ["--", *scriptArgs]
    return scriptArgs


def _noteHtmlAfterScript(script: str, scriptArgs: list[str]) -> None:
    """Say so when ``--html`` follows SCRIPT: the script got it, and sparkjet wrote no report."""
    if any(arg.split("=", 1)[0] == "--html" for arg in scriptArgs):
        print(
            f"sparkjet: --html after {script} went to the script, so sparkjet wrote no report; "
            f"sparkjet's options go before SCRIPT: sparkjet run --html FILE {script}",
            file=sys.stderr,
        )


def _numbered(path: str, number: int) -> str:
    if number == 1:
        return path
    stem, extension = os.path.splitext(path)
    return f"{stem}-{number}{extension}"
