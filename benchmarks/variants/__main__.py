"""Run one variant here: ``python -m benchmarks.variants KIND NAME INPUT RESULT.json``."""

import importlib
import json
import pathlib
import sys

from benchmarks.variants import KINDS


def main(argv: list[str] | None = None) -> None:
    """Run variant NAME of KIND over the INPUT directory; write what it measured to RESULT."""
    kind, name, directory, resultPath = argv or sys.argv[1:]
    moduleName, functionName = KINDS[kind][name].split(":")
    measure = getattr(importlib.import_module(moduleName), functionName)
    pathlib.Path(resultPath).write_text(json.dumps(measure(directory)))


if __name__ == "__main__":
    main()
