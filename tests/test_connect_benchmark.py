"""The Spark Connect word-count benchmark's command line."""

from benchmarks.connect import arguments


def testSizeAndDefaults():
    assert (arguments(["--size-mib", "20"]).size_mib, arguments([]).size_mib) == (20, 100)
