"""The Spark Connect benchmarks: the word count's command line, the first-job harness's phase timers."""

from benchmarks.connect import arguments


def testSizeAndDefaults():
    assert (arguments(["--size-mib", "20"]).size_mib, arguments([]).size_mib) == (20, 100)



class LocalServerSettings:
    """A Connect session's ``conf`` of a server on ``local[3]`` that sets nothing else."""

    def get(self, key: str, default=None):
        return {"spark.master": "local[3]"}.get(key, default)


def test_the_first_job_benchmarks_timers_add_up_each_phase_and_put_the_functions_back():
    from benchmarks.connect_first_job import phaseTimers
    from sparkjet.coredag.runtime import shipping
    from sparkjet.coredag.runtime.connect_engine import ConnectEngine

    originals = (ConnectEngine._defaultParallelism, ConnectEngine._run, shipping.shipToServer)
    engine = ConnectEngine.__new__(ConnectEngine)
    engine.spark = type("Session", (), {"conf": LocalServerSettings()})()
    phases: dict[str, float] = {}
    with phaseTimers(phases):
        assert engine._defaultParallelism() == 3, "local[3]'s threads, with no job run"
    assert list(phases) == ["parallelism probe"] and phases["parallelism probe"] >= 0
    assert (ConnectEngine._defaultParallelism, ConnectEngine._run, shipping.shipToServer) == originals
