"""PySpark's daemon for the Python workers of sparkjet's sessions, importing PySpark compiled.

Spark puts the pyspark.zip it bundles first on its Python workers' path. Python keeps no
compiled modules for a zip, so the daemon compiled PySpark's sources at every start and each
worker it forked compiled those it imported later: about a second of CPU in a session's first
job, competing with the job itself. Where the zip lies inside the pyspark package installed on
the path (the same sources), this daemon drops it from the path, and likewise the py4j zip
beside it where py4j is installed: both then import from their packages, compiled once.
"""

import os
import sys

BUNDLED = {"pyspark": "pyspark.zip", "py4j": "py4j-"}
"""The zips Spark bundles in ``pyspark/python/lib``, by the package each holds."""


def bundledZipsOfInstalledPackages(path: list[str]) -> set[str]:
    """Return the entries of ``path`` that are zips bundled in a pyspark package installed on
    ``path`` whose package is installed on ``path`` too."""
    directories = {os.path.realpath(entry) for entry in path if os.path.isdir(entry)}
    redundant = set()
    for entry in path:
        lib = os.path.dirname(os.path.realpath(entry))
        packages = os.path.dirname(os.path.dirname(os.path.dirname(lib)))
        if not entry.endswith(".zip") or lib != os.path.join(packages, "pyspark", "python", "lib"):
            continue
        for package, prefix in BUNDLED.items():
            installed = os.path.isfile(os.path.join(packages, package, "__init__.py"))
            if os.path.basename(entry).startswith(prefix) and installed and packages in directories:
                redundant.add(entry)
    return redundant


if __name__ == "__main__":
    redundant = bundledZipsOfInstalledPackages(sys.path)
    sys.path[:] = [entry for entry in sys.path if entry not in redundant]
    from pyspark.daemon import manager

    manager()
