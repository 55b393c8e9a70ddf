"""Suites: variants over one input, each in a fresh process, the order rotated per repetition."""

import json
import pathlib
import sys
from collections.abc import Callable

import attrs

from benchmarks.inputs import PROJECT, Input
from benchmarks.machine import sourceFingerprint
from benchmarks.measure import Finished, runMeasured
from benchmarks.variants import SECOND_JOB, SPARK_WORD_COUNT


@attrs.frozen
class Suite:
    """Variants of one kind (see ``benchmarks.variants.KINDS``) over one input."""

    kind: str
    title: str
    input: Input | None
    variants: tuple[str, ...]
    secondJob: bool = False  # the Spark variants run their job again in the same session
    targeted: bool = False  # the targets apply: a corpus input


@attrs.frozen
class Run:
    """One variant in one fresh process: what it measured itself, and what its parent saw."""

    suite: Suite
    variant: str
    repetition: int
    position: int
    finished: Finished
    result: dict | None
    log: str
    fingerprint: str

    @property
    def succeeded(self) -> bool:
        """Return whether the process exited normally and wrote its result."""
        return self.finished.returncode == 0 and self.result is not None


def rotated(variants: tuple[str, ...], repetition: int) -> tuple[str, ...]:
    """Return the variants in repetition ``repetition``'s order: each starts once in turn."""
    shift = repetition % len(variants)
    return variants[shift:] + variants[:shift]


def runSuite(
    suite: Suite,
    repetitions: int,
    workdir: pathlib.Path,
    timeout: float,
    nice: int,
    onRun: Callable[[Run], None],
) -> list[Run]:
    """Run every repetition of ``suite``; call ``onRun`` after each process."""
    runs = []
    for repetition in range(repetitions):
        for position, variant in enumerate(rotated(suite.variants, repetition)):
            run = runVariant(suite, variant, repetition, position, workdir, timeout, nice)
            runs.append(run)
            onRun(run)
    return runs


def runVariant(
    suite: Suite,
    variant: str,
    repetition: int,
    position: int,
    workdir: pathlib.Path,
    timeout: float,
    nice: int,
) -> Run:
    """Run one variant in a fresh Python process and read back the result it wrote."""
    resultPath, log = outputPaths(workdir, f"{slug(suite.title)}-{variant}-{repetition + 1}")
    fingerprint = sourceFingerprint()
    argv = variantArgv(suite, variant, resultPath)
    finished = runMeasured(argv, str(PROJECT), log, timeout, nice)
    result = readResult(resultPath)
    return Run(suite, variant, repetition, position, finished, result, str(log), fingerprint)


def variantArgv(suite: Suite, variant: str, resultPath: pathlib.Path) -> list[str]:
    """Return the command that runs ``variant`` over the suite's input in a fresh process."""
    directory = suite.input.directory if suite.input is not None else "-"
    secondJob = suite.secondJob and variant in SPARK_WORD_COUNT
    return [
        sys.executable,
        "-m",
        "benchmarks.variants",
        suite.kind,
        variant,
        directory,
        str(resultPath),
        *([SECOND_JOB] if secondJob else []),
    ]


def outputPaths(workdir: pathlib.Path, stem: str) -> tuple[pathlib.Path, pathlib.Path]:
    """Return a process's result file (removed if left over) and its log, their folders made."""
    resultPath, log = workdir / "results" / f"{stem}.json", workdir / "logs" / f"{stem}.log"
    for directory in (resultPath.parent, log.parent):
        directory.mkdir(parents=True, exist_ok=True)
    resultPath.unlink(missing_ok=True)
    return resultPath, log


def readResult(resultPath: pathlib.Path) -> dict | None:
    """Return what the process wrote, or None if it wrote nothing."""
    return json.loads(resultPath.read_text()) if resultPath.exists() else None


def slug(title: str) -> str:
    """Return ``title`` as a file-name fragment."""
    return "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-").replace("--", "-")
