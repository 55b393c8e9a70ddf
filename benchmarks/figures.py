"""Figures over runs: what a run measured, medians, pair-by-pair ratios, and their table cells."""

import statistics
from collections.abc import Callable

from benchmarks.inputs import MIB
from benchmarks.suites import Run

Measure = Callable[[Run], float | None]


def jobSeconds(run: Run) -> float:
    """Return the job time the variant measured around its job."""
    return run.result["jobSeconds"]


def secondJobSeconds(run: Run) -> float | None:
    """Return the time of the same job run again in the same session, if the run had one."""
    return run.result.get("secondJobSeconds")


def coldSeconds(run: Run) -> float:
    """Return the time of the session's first job."""
    return run.result["coldSeconds"]


def median(values: list[float]) -> float | None:
    """Return the median, or None for no values."""
    return statistics.median(values) if values else None


def medianOf(runs: list[Run], measure: Measure) -> float | None:
    """Return the median of ``measure`` over the runs that succeeded and have it."""
    return median([value for run in runs if run.succeeded and (value := measure(run)) is not None])


def byRepetition(runs: list[Run], variant: str, measure: Measure) -> dict[int, float]:
    """Return ``measure`` of the variant's runs that succeeded and have it, by repetition."""
    return {
        run.repetition: value
        for run in runs
        if run.variant == variant and run.succeeded and (value := measure(run)) is not None
    }


def pairedRatio(
    runs: list[Run],
    variant: str,
    baseline: str,
    measure: Measure,
    baselineMeasure: Measure | None = None,
) -> float | None:
    """Return the median over repetitions of variant ÷ baseline (``baselineMeasure`` if given)."""
    mine = byRepetition(runs, variant, measure)
    theirs = byRepetition(runs, baseline, baselineMeasure or measure)
    return median([mine[repetition] / theirs[repetition] for repetition in mine.keys() & theirs])


def highestPeak(runs: list[Run]) -> int | None:
    """Return the highest peak RSS of the runs that succeeded, in bytes."""
    return max((run.finished.peakRss for run in runs if run.succeeded), default=None)


def mib(size: int) -> str:
    """Return a byte count in whole MiB."""
    return f"{size / MIB:,.0f}"


def seconds(value: float | None) -> str:
    """Return seconds for a table cell."""
    return "—" if value is None else f"{value:.2f}"


def ratio(value: float | None) -> str:
    """Return a ratio for a table cell."""
    return "—" if value is None else f"{value:.2f}×"
