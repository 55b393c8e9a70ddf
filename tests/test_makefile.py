"""The README's commands: `make wordcount`, `make test` and `make docs` run the scripts CI runs,
each with its own set-up, and only the tests install a browser."""

import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import PROJECT

needsMake = pytest.mark.skipif(
    shutil.which("make") is None, reason="the README's commands need make: apt-get install make"
)


OUTER_MAKES = frozenset({"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS"})
"""What an outer make (``make test ARGS=...``) puts in the environment of the tests it runs."""


def make(*arguments: str) -> str:
    """Return what ``make`` prints for ``arguments``, as a newcomer's shell runs it: not as a
    sub-make of ``make test`` (whose variables, ARGS among them, would pass on)."""
    environment = {k: v for k, v in os.environ.items() if k not in OUTER_MAKES}
    done = subprocess.run(
        ["make", *arguments], cwd=PROJECT, env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout


def dryRun(*arguments: str) -> list[str]:
    """Return the commands ``make`` would run for ``arguments``, run nothing."""
    return make("-n", *arguments).splitlines()


@needsMake
@pytest.mark.parametrize("target, script", [("wordcount", ".ci/wordcount"), ("test", ".ci/test"), ("docs", ".ci/docs")])
def test_each_make_target_runs_its_script_with_the_arguments_given(target, script):
    assert dryRun(target) == [f"bash {script} "]
    assert dryRun(target, "ARGS=-m 'not spark' -x") == [f"bash {script} -m 'not spark' -x"]


@needsMake
def test_make_alone_lists_the_targets():
    assert re.findall(r"^  make (\w+)", make(), re.MULTILINE) == ["help", "wordcount", "test", "docs"]


def test_ci_runs_the_scripts_of_make_test_and_make_docs():
    run = (PROJECT / ".ci" / "run").read_text()
    assert re.findall(r"^bash (\S+)", run, re.MULTILINE) == [".ci/test", ".ci/docs", ".ci/test", ".ci/test"]


def test_the_readme_gives_the_make_commands():
    readme = (PROJECT / "README.md").read_text()
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^make (\w+)", section, re.MULTILINE) == ["wordcount", "test"]
    assert "`make docs`" in section


def test_the_readme_says_how_to_install():
    readme = (PROJECT / "README.md").read_text()
    section = readme.split("## Installing", 1)[1].split("\n## ", 1)[0]
    assert "pip install ." in section and "Java 17" in section and "`dot`" in section


@pytest.mark.parametrize(
    "script, installsChromium", [(".ci/wordcount", False), (".ci/test", True), (".ci/docs", False)]
)
def test_only_the_tests_install_chromium(script, installsChromium):
    sourced = re.findall(r"^(?:\w+=\w+ )?source .*/(\w+)\"$", (PROJECT / script).read_text(), re.MULTILINE)
    assert sourced == (["setup", "chromium"] if installsChromium else ["setup"])
    assert "chromium" not in (PROJECT / ".ci" / "setup").read_text().split("set -euo pipefail", 1)[1]


def test_the_docs_script_installs_the_docs_extra_and_fails_on_warnings():
    docs = (PROJECT / ".ci" / "docs").read_text()
    assert re.search(r"^SPARKJET_EXTRAS=docs source ", docs, re.MULTILINE)
    assert re.search(r"-m sphinx -b html -W --keep-going", docs)
    assert "docs = [" in (PROJECT / "pyproject.toml").read_text()
