"""The issue's targets for sparkjet's word count, checked on every corpus input of the run."""

import attrs

from benchmarks.figures import highestPeak, jobSeconds, medianOf, mib, pairedRatio, secondJobSeconds
from benchmarks.markdown import head, row
from benchmarks.suites import Run, Suite

SUBJECT = "sparkjet"
RDD_RATIO = 0.45
PYTHON_RATIO = 1.3
ISSUE = (
    '"Targets, at 100 MB and 500 MB, on local[2]: sparkjet word-count job time ≤ 0.45 × the '
    "hand-written RDD code, below the DataFrame path, and within 1.3 × of 2-process plain "
    "Python; sparkjet's peak memory no higher than the hand-written RDD code.\""
)
LEGEND = (
    "Checked on every corpus input of this run, from its word-count table below: the job ratios "
    "pair by pair, the median over the repetitions (the tables' \"÷\" columns); against the "
    "DataFrame, the median job times; peak memory, the highest peak RSS of all processes over "
    "the repetitions that succeeded. The second job's ratio (the same job again in the same "
    "session, see above) is shown for information and not counted."
)
COLUMNS = (
    "input",
    f"job ÷ RDD ≤ {RDD_RATIO} (median of pairs)",
    "job below the DataFrame's (medians)",
    f"job ÷ plain Python ≤ {PYTHON_RATIO} (median of pairs)",
    f"second job ÷ plain Python ≤ {PYTHON_RATIO} (for information)",
    "peak RSS ≤ RDD's (highest)",
)


@attrs.frozen
class Check:
    """One target on one input: the figure shown, whether it was met (None: not measured)."""

    figure: str
    met: bool | None
    counted: bool = True  # False: shown for information

    def cell(self) -> str:
        """Return the figure and its verdict for a table cell."""
        if self.met is None:
            return "—"
        return f"{self.figure}, {'met' if self.met else 'missed'}"


def atMost(value: float | None, limit: float) -> Check:
    """Check a ratio against its limit."""
    return Check("—", None) if value is None else Check(f"{value:.2f}×", value <= limit)


def below(mine: float | None, theirs: float | None) -> Check:
    """Check that sparkjet's median job time is below the other's."""
    if mine is None or theirs is None:
        return Check("—", None)
    return Check(f"{mine:.2f} s vs {theirs:.2f} s", mine < theirs)


def noHigher(mine: int | None, theirs: int | None) -> Check:
    """Check that sparkjet's peak RSS is no higher than the other's."""
    if mine is None or theirs is None:
        return Check("—", None)
    return Check(f"{mib(mine)} vs {mib(theirs)} MiB", mine <= theirs)


def checks(runs: list[Run]) -> list[Check]:
    """Return the targets checked on one input's runs, in ``COLUMNS`` order after the input."""

    def of(variant: str) -> list[Run]:
        """Return the variant's runs."""
        return [run for run in runs if run.variant == variant]

    mine = of(SUBJECT)
    secondJob = pairedRatio(runs, SUBJECT, "python", secondJobSeconds, jobSeconds)
    return [
        atMost(pairedRatio(runs, SUBJECT, "rdd", jobSeconds), RDD_RATIO),
        below(medianOf(mine, jobSeconds), medianOf(of("dataframe"), jobSeconds)),
        atMost(pairedRatio(runs, SUBJECT, "python", jobSeconds), PYTHON_RATIO),
        attrs.evolve(atMost(secondJob, PYTHON_RATIO), counted=False),
        noHigher(highestPeak(mine), highestPeak(of("rdd"))),
    ]


def section(suites: list[Suite], runs: list[Run]) -> list[str]:
    """Return the Targets section: one row per corpus input that ran; nothing if none did."""
    checked = {
        suite.title: checks(mine)
        for suite in suites
        if suite.targeted and (mine := [run for run in runs if run.suite == suite])
    }
    if not checked:
        return []
    verdicts = [
        check.met
        for inputChecks in checked.values()
        for check in inputChecks
        if check.counted and check.met is not None
    ]
    lines = ["## Targets", "", f"From the project's issue: {ISSUE}", "", LEGEND, ""]
    lines += head(COLUMNS, text=set(range(len(COLUMNS))))
    lines += [
        row([title, *(check.cell() for check in inputChecks)])
        for title, inputChecks in checked.items()
    ]
    return [*lines, "", f"{sum(verdicts)} of {len(verdicts)} targets met.", ""]
