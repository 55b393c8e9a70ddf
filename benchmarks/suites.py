"""Suites: variants over one input, each in a fresh process, the order rotated per repetition."""

import json
import pathlib
import sys
from collections.abc import Callable

import attrs

from benchmarks.inputs import PROJECT, Input
from benchmarks.machine import sourceFingerprint
from benchmarks.measure import Finished, runMeasured


@attrs.frozen
class Suite:
    """Variants of one kind (see ``benchmarks.variants.KINDS``) over one input."""

    kind: str
    title: str
    input: Input | None
    variants: tuple[str, ...]


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
    stem = f"{slug(suite.title)}-{variant}-{repetition + 1}"
    resultPath, log = workdir / "results" / f"{stem}.json", workdir / "logs" / f"{stem}.log"
    for directory in (resultPath.parent, log.parent):
        directory.mkdir(parents=True, exist_ok=True)
    resultPath.unlink(missing_ok=True)
    directory = suite.input.directory if suite.input is not None else "-"
    argv = [
        sys.executable,
        "-m",
        "benchmarks.variants",
        suite.kind,
        variant,
        directory,
        str(resultPath),
    ]
    fingerprint = sourceFingerprint()
    finished = runMeasured(argv, str(PROJECT), log, timeout, nice)
    result = json.loads(resultPath.read_text()) if resultPath.exists() else None
    return Run(suite, variant, repetition, position, finished, result, str(log), fingerprint)


def slug(title: str) -> str:
    """Return ``title`` as a file-name fragment."""
    return "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-").replace("--", "-")
