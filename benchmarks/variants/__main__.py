"""Run one variant: ``python -m benchmarks.variants KIND NAME INPUT RESULT.json [--second-job]``."""

import importlib
import json
import pathlib
import sys

from benchmarks.variants import KINDS, SECOND_JOB


def main(argv: list[str] | None = None) -> None:
    """Run variant NAME of KIND over the INPUT directory; write what it measured to RESULT."""
    kind, name, directory, resultPath, *options = argv or sys.argv[1:]
    if set(options) - {SECOND_JOB}:
        raise SystemExit(f"unknown options {options}: the only one is {SECOND_JOB}")
    moduleName, functionName = KINDS[kind][name].split(":")
    measure = getattr(importlib.import_module(moduleName), functionName)
    secondJob = {"secondJob": True} if SECOND_JOB in options else {}
    pathlib.Path(resultPath).write_text(json.dumps(measure(directory, **secondJob)))


if __name__ == "__main__":
    main()
