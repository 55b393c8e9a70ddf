"""The examples ``sparkjet --help`` prints run where a user installed the wheel, in a directory
outside any checkout: the word count they name ships inside the sparkjet package, with its text."""

import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter

import pytest

from tests.conftest import PROJECT, run, tokenize
from tests.planner.test_report import Page

OUTPUTS = {
    "--svg": lambda text: "<svg" in text,
    "--dot": lambda text: text.startswith("digraph DAG {"),
    "--html": lambda text: "<html" in text,
}
"""What each file option of the examples writes: how to recognise the file."""

WHERE_FROM = """
import json, sys
import sparkjet, sparkjet.examples.word_count as example
editable = sorted(name for name in sys.modules if name.startswith("__editable__"))
print(json.dumps({"sparkjet": sparkjet.__file__, "text": str(example.BUNDLED_TEXT), "editable finders": editable}))
"""
"""Where the venv's Python imports sparkjet and its example from, and whether an editable
install's finder (the main venv's) came along."""


def buildWheel(directory: pathlib.Path) -> pathlib.Path:
    """Build sparkjet's wheel offline, from a copy of the project's sources, into ``directory``."""
    source = directory / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT / name, source / name)
    for name in ("pipeline", "planner", "coredag"):
        shutil.copytree(PROJECT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    succeeded(run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(directory), str(source)]))
    (wheel,) = directory.glob("sparkjet-*.whl")
    return wheel


def installedVenv(directory: pathlib.Path, wheel: pathlib.Path) -> pathlib.Path:
    """Make a venv in ``directory`` with ``wheel`` installed and, through a .pth file, this venv's
    site-packages (sparkjet's dependencies; its editable sparkjet needs a .pth file there, which
    a path added by a .pth file does not run); return its ``bin`` directory."""
    succeeded(run([sys._base_executable, "-m", "venv", "--without-pip", str(directory)]))
    python = directory / "bin" / "python"
    succeeded(run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
         "--ignore-installed", str(wheel)]
    ))
    site = succeeded(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])).stdout.strip()
    pathlib.Path(site, "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return directory / "bin"


def succeeded(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """Return ``done``, a command that ended with status 0; fail with what it printed otherwise."""
    assert done.returncode == 0, f"{shlex.join(map(str, done.args))} ended {done.returncode}:\n{done.stderr[-3000:]}"
    return done


def helpExamples(helpText: str) -> list[list[str]]:
    """Return the example command lines of ``sparkjet --help``, split as a shell splits them."""
    lines = [line for line in helpText.splitlines() if line.startswith("  sparkjet ")]
    return [shlex.split(re.split(r"\s{2,}", line.strip())[0]) for line in lines]


def wordCounts(text: str) -> Counter:
    """Count the words of ``text`` independently, with ``collections.Counter``."""
    return Counter(word for line in text.splitlines() for word in tokenize(line))


def topLines(counts: Counter, top: int) -> list[str]:
    """Return the lines the word count prints for the ``top`` most frequent words."""
    ranked = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))[:top]
    return [f"{count:>8}  {word}" for word, count in ranked]


@pytest.mark.spark
def test_the_help_examples_run_from_the_installed_wheel_outside_the_checkout(tmp_path, wheel):
    scripts = installedVenv(tmp_path / "venv", wheel)
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{scripts}{os.pathsep}{environment['PATH']}"

    def ran(program: str, *args: str, cwd: pathlib.Path = tmp_path) -> subprocess.CompletedProcess:
        return succeeded(run([scripts / program, *args], cwd=cwd, env=environment))

    found = json.loads(ran("python", "-c", WHERE_FROM).stdout)
    installed, bundled = pathlib.Path(found["sparkjet"]), pathlib.Path(found["text"])
    assert installed.is_relative_to(tmp_path / "venv") and bundled.is_relative_to(tmp_path / "venv")
    assert found["editable finders"] == []
    counts = wordCounts(bundled.read_text(encoding="utf-8"))

    examples = []
    for number, (_, *args) in enumerate(helpExamples(ran("sparkjet", "--help").stdout)):
        if any(arg.startswith(("spark://", "sc://")) for arg in args):
            continue  # needs a cluster, or a Spark Connect server
        work = tmp_path / f"example-{number}"
        work.mkdir()
        result = ran("sparkjet", *args, cwd=work)
        examples.append(args[0])
        for option, recognised in OUTPUTS.items():
            if option in args:
                written = (work / args[args.index(option) + 1]).read_text()
                assert recognised(written), f"sparkjet {shlex.join(args)}: {option} wrote {written[:200]!r}"
        if "--dot" in args:
            assert f'"filesSource({bundled})"' in (work / args[args.index("--dot") + 1]).read_text()
        if "--explain" in args:
            assert f"filesSource({bundled}) -> fused(flat-map, filter): local unicast" in result.stdout
        if args[0] == "run":
            top = int(args[args.index("--top") + 1]) if "--top" in args else 10
            printed = [f"The {top} most frequent words in {bundled}:", *topLines(counts, top)]
            assert result.stdout.splitlines() == printed
        if "--html" in args:
            sink = Page((work / args[args.index("--html") + 1]).read_text()).rows("vertex")[-1]
            assert (sink["name"], sink["items-in"]) == ("listSink(counts)", str(len(counts)))
    assert "plan" in examples and "run" in examples
