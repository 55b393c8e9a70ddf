"""The sparkjet word count once more, under py-spy, which samples every Python process it starts."""

import pathlib
import shlex
import shutil
import subprocess
import sys
import sysconfig

import attrs

from benchmarks import profile
from benchmarks.inputs import PROJECT
from benchmarks.machine import sourceFingerprint
from benchmarks.measure import runMeasured
from benchmarks.suites import Run, Suite, outputPaths, readResult, slug, variantArgv

VARIANT = "sparkjet"
RATE = 100
RECORD = (
    "record",
    "--format",
    "raw",
    "--subprocesses",
    "--rate",
    str(RATE),
    "--nonblocking",
    "--full-filenames",
)


@attrs.frozen
class Recording:
    """The profiled process, as a suite's run; the py-spy command, its version, its output."""

    run: Run
    command: str
    version: str
    rawPath: str
    summary: profile.Summary | None


def executable() -> str | None:
    """Return the py-spy beside this interpreter (the .venv's), else the one on PATH, else None."""
    beside = pathlib.Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def version(pySpy: str) -> str:
    """Return what ``py-spy --version`` prints."""
    return subprocess.run([pySpy, "--version"], capture_output=True, text=True).stdout.strip()


def roots() -> profile.Roots:
    """Return where the project and the standard library are on this machine."""
    return profile.Roots(str(PROJECT), sysconfig.get_paths()["stdlib"])


def profiledSuite(suites: list[Suite]) -> Suite | None:
    """Return the smallest one-file corpus's suite, with no second job; None without a corpus."""
    corpora = [suite for suite in suites if suite.targeted and suite.input.fileCount == 1]
    if not corpora:
        return None
    return attrs.evolve(min(corpora, key=lambda suite: suite.input.size), secondJob=False)


def recordProfile(
    pySpy: str, suite: Suite, workdir: pathlib.Path, timeout: float, nice: int
) -> Recording:
    """Run the sparkjet variant over the suite's input under py-spy; summarize the samples."""
    stem = f"{slug(suite.title)}-{VARIANT}-profiled"
    resultPath, log = outputPaths(workdir, stem)
    rawPath = workdir / "profiles" / f"{stem}.txt"
    rawPath.parent.mkdir(parents=True, exist_ok=True)
    rawPath.unlink(missing_ok=True)
    argv = [pySpy, *RECORD, "-o", str(rawPath), "--", *variantArgv(suite, VARIANT, resultPath)]
    fingerprint = sourceFingerprint()
    finished = runMeasured(argv, str(PROJECT), log, timeout, nice)
    run = Run(suite, VARIANT, 0, 0, finished, readResult(resultPath), str(log), fingerprint)
    summary = profile.summarize(rawPath.read_text(), roots()) if rawPath.exists() else None
    return Recording(run, shlex.join(argv), version(pySpy), str(rawPath), summary)
