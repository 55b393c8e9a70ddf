"""The Connect set's servers live for the whole run: their JVMs start with the run's Java
options, not the short-lived ones the tests' scripts get (with the quick compiler alone, the
JIT's code cache filled up two thirds into the set and every later job failed)."""

import pytest

from tests.conftest import SHORT_LIVED_OPTIONS

pytestmark = pytest.mark.spark


def javaOptions(spark) -> list[str]:
    """Return the options the JVM of ``spark`` (the comparing server's own session) started with."""
    runtime = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    return list(runtime.getInputArguments())


def test_the_comparing_server_runs_without_the_short_lived_java_options(comparingServer):
    options = comparingServer._onServer(javaOptions)
    assert options, "the server's JVM gave no options"
    assert not set(SHORT_LIVED_OPTIONS.split()) & set(options), options
