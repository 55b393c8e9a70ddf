"""Benchmarks: sparkjet against hand-written PySpark and plain Python, measured in one run."""
