"""The ``sparkjet`` command: plan or run the pipelines a script submits."""

import argparse
import builtins
import difflib
import importlib.metadata
import importlib.util
import os
import runpy
import sys

import attrs

from sparkjet.coredag.errors import Interrupted, reducedTraceback
from sparkjet.planner.interrupts import CTRL_C_MESSAGE, saidAlready
from sparkjet.planner.jet import MASTER_VARIABLE, OnlyPlanned, watchingJobs
from sparkjet.planner.render import writePlanSvg, writeText

EXAMPLES = """examples:
  sparkjet plan -m sparkjet.examples.word_count --svg plan.svg  draw the plan, run nothing
  sparkjet plan -m sparkjet.examples.word_count --dot plan.dot  write the Core DAG in Jet's DOT
  sparkjet plan -m sparkjet.examples.word_count --explain       what each vertex runs, and why
  sparkjet run -m sparkjet.examples.word_count --top 5          run the module's jobs on Spark
  sparkjet run --svg plan.svg --html report.html -m sparkjet.examples.word_count
                                                                ... and draw each plan with its
                                                                figures, and write its report page
  sparkjet run --master spark://host:7077 job.py --top 5        a script's jobs, on a Spark cluster
  sparkjet run --remote sc://host:15002 job.py                  ... through a Spark Connect server
(sparkjet.examples.word_count ships with sparkjet and counts a bundled text, or a file given after
it; -m MODULE runs a module as python -m does, SCRIPT a file; run: sparkjet's options go before
SCRIPT or -m MODULE, what follows is the script's own arguments; several jobs are numbered:
report.html, report-2.html, ...)
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
    planCommand = commands.add_parser(
        "plan", help="plan the jobs a script submits, without running them", usage=f"%(prog)s {TARGET_USAGE}"
    )
    _addTarget(planCommand)
    planCommand.add_argument("--svg", metavar="FILE", help="draw the plan (pipeline and Core DAG) as SVG")
    planCommand.add_argument("--dot", metavar="FILE", help="write the Core DAG in Jet's DOT format")
    planCommand.add_argument("--explain", action="store_true", help="print what each vertex runs and why")
    runCommand = commands.add_parser("run", help="run a script's jobs on Spark", usage=f"%(prog)s {TARGET_USAGE}")
    runCommand.add_argument(
        "--master", metavar="URL", help="the Spark master of every Jet() the script makes without one"
    )
    runCommand.add_argument(
        "--remote", metavar="URL",
        help="a Spark Connect server (sc://host:15002, or local[2] started here) for every session the script "
        "starts, as PySpark's SPARK_REMOTE",
    )
    runCommand.add_argument("--svg", metavar="FILE", help="draw each job's plan with its figures as SVG")
    runCommand.add_argument("--html", metavar="FILE", help="write each job's report page (plan, figures)")
    _addTarget(runCommand)
    runCommand.add_argument("scriptArgs", metavar="ARGS", nargs=argparse.REMAINDER, help="the script's own arguments")
    return parser, runCommand


TARGET_USAGE = "[options] (SCRIPT | -m MODULE) [ARGS ...]"
"""What ``plan`` and ``run`` take, as their usage line shows it."""


def _addTarget(command: argparse.ArgumentParser) -> None:
    """Add SCRIPT, and ``-m``, which makes SCRIPT's place a module's name, as ``python -m`` does."""
    command.add_argument(
        "-m", dest="module", action="store_true", help="what follows is a MODULE's name, run as python -m runs it"
    )
    command.add_argument("script", metavar="SCRIPT", help="a Python script's path (after -m: a MODULE's name)")


@attrs.frozen
class Target:
    """What ``sparkjet plan`` or ``run`` runs: a script's path, or (``-m``) a module's name."""

    name: str
    isModule: bool = False

    def __str__(self) -> str:
        """The target as typed on sparkjet's command line: ``SCRIPT`` or ``-m MODULE``."""
        return f"-m {self.name}" if self.isModule else self.name

    def missing(self) -> str | None:
        """Return why the target cannot be run (no such file or module), else None."""
        if not self.isModule:
            return None if os.path.isfile(self.name) else f"no script at '{self.name}'"
        try:
            found = importlib.util.find_spec(self.name) is not None
        except (ImportError, ValueError):
            found = False
        return None if found else f"no module named '{self.name}'"

    def run(self, args: list[str]) -> None:
        """Run the target as ``__main__`` with ``args`` as its arguments, as ``python`` would."""
        savedArgv = sys.argv
        sys.argv = [self.name, *args]
        try:
            if self.isModule:
                runpy.run_module(self.name, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(self.name, run_name="__main__")
        finally:
            sys.argv = savedArgv


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
    target = Target(args.script, isModule=args.module)
    if reason := target.missing():
        print(f"sparkjet: {reason}", file=sys.stderr)
        return 2
    try:
        if args.command == "plan":
            return planScript(target, scriptArgs, args.svg, args.dot, args.explain)
        # imports pyspark, which planning never needs
        from sparkjet.coredag.runtime.session import REMOTE_VARIABLE, shownUrl

        if args.master and args.remote:
            runCommand.error("pass either --master or --remote: a Spark Connect server runs on its own master")
        if args.master and os.environ.get(REMOTE_VARIABLE):
            runCommand.error(
                f"--master {args.master} with {REMOTE_VARIABLE} set ({shownUrl(os.environ[REMOTE_VARIABLE])}): "
                f"every session would reach that Spark Connect server, which runs on its own master; unset "
                f"{REMOTE_VARIABLE} for the classic way on the master (spark-submit refuses both too)"
            )
        if args.master:
            os.environ[MASTER_VARIABLE] = args.master
        if args.remote:
            os.environ[REMOTE_VARIABLE] = args.remote
        status = runAndReport(target, scriptArgs, args.svg, args.html)
        if not args.html:
            _noteHtmlAfterScript(target, scriptArgs)
        return status
    except (KeyboardInterrupt, Interrupted) as interrupt:
        if not saidAlready(interrupt):
            print(f"sparkjet: {str(interrupt) or CTRL_C_MESSAGE}", file=sys.stderr)
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


def runAndReport(target: Target, scriptArgs: list[str], svg: str | None, html: str | None) -> int:
    """Run ``target``'s jobs, their progress shown on a terminal; then draw each job's plan with
    its figures into ``svg`` and write its report into ``html``, when asked."""
    from sparkjet.planner.progress import showingProgress  # imports pyspark, which planning never needs

    with watchingJobs(runs=True) as jobs, showingProgress(jobs):
        target.run(scriptArgs)
    if (svg or html) and not jobs:
        print(f"sparkjet: {target.name} submitted no job", file=sys.stderr)
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
    target: Target, scriptArgs: list[str], svg: str | None, dot: str | None, explain: bool = False
) -> int:
    """Run ``target`` with jobs captured, not run, until it asks a job for its figures; draw or
    print each job's plan."""
    with watchingJobs(runs=False) as jobs:
        try:
            target.run(scriptArgs)
        except OnlyPlanned as stop:
            print(f"sparkjet: {target.name} stopped where it asked for figures: {stop}", file=sys.stderr)
    if not jobs:
        print(f"sparkjet: {target.name} submitted no job", file=sys.stderr)
        return 1
    for number, job in enumerate(jobs, start=1):
        name, planned = job.name, job.plan
        if dot:
            written = writeText(_numbered(dot, number), planned.toDotString() + "\n", "the Core DAG's DOT text")
            print(f"wrote the Core DAG of {name} to {written}", file=sys.stderr)
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


def _noteHtmlAfterScript(target: Target, scriptArgs: list[str]) -> None:
    """Say so when ``--html`` follows the target: the script got it, and sparkjet wrote no report."""
    if any(arg.split("=", 1)[0] == "--html" for arg in scriptArgs):
        print(
            f"sparkjet: --html after {target} went to the script, so sparkjet wrote no report; "
            f"sparkjet's options go before SCRIPT: sparkjet run --html FILE {target}",
            file=sys.stderr,
        )


def _numbered(path: str, number: int) -> str:
    if number == 1:
        return path
    stem, extension = os.path.splitext(path)
    return f"{stem}-{number}{extension}"
