"""Stopping a session sparkjet started: PySpark's stop() without its wait for the accumulator
server, whose thread still ends; a local session's JVM listening on 127.0.0.1 alone unless the
user chose an address (issue 25, point 11)."""

import os
import threading

import pytest
from pyspark import SparkConf

from sparkjet.coredag.runtime import session
from tests.conftest import eventually


class BlockingServer:
    """An accumulator server whose shutdown takes until ``released``, as PySpark's polling does."""

    def __init__(self) -> None:
        self.released, self.ended = threading.Event(), threading.Event()

    def shutdown(self) -> None:
        """Return once released (the test releases it; a daemon thread waits here otherwise)."""
        self.released.wait()
        self.ended.set()


class RecordingSession:
    """A session whose stop() records the accumulator server PySpark's stop() would wait for."""

    def __init__(self, server: BlockingServer) -> None:
        self.sparkContext = type("Context", (), {"_accumulatorServer": server})()
        self.serverAtStop = "never stopped"

    def stop(self) -> None:
        """Record the server PySpark's SparkContext.stop() would shut down, and wait for."""
        self.serverAtStop = self.sparkContext._accumulatorServer


def test_a_session_stops_without_waiting_for_its_accumulator_server_which_still_shuts_down():
    server = BlockingServer()
    stopped = RecordingSession(server)
    session.stopSession(stopped)
    assert stopped.serverAtStop is None, "PySpark's stop() had no server to wait for"
    assert not server.ended.is_set()
    server.released.set()
    eventually(server.ended.is_set, progress=lambda: None)  # the server was shut down in the background


@pytest.fixture
def noJvm(monkeypatch):
    """No JVM runs yet in this process, and the user named no address for Spark."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.delenv(session.LOCAL_IP_VARIABLE, raising=False)


def localIpWhileStarting(master: str, started: bool = True, **settings) -> str | None:
    """Return SPARK_LOCAL_IP as a JVM started by ``loopbackOnly`` would see it."""
    conf = SparkConf(loadDefaults=False).set("spark.master", master).setAll(settings.items())
    with session.loopbackOnly(conf, started):
        return os.environ.get(session.LOCAL_IP_VARIABLE)


def test_a_local_session_sparkjet_starts_listens_on_loopback_alone(noJvm):
    assert localIpWhileStarting("local[2,4]") == "127.0.0.1"
    assert session.LOCAL_IP_VARIABLE not in os.environ, "the JVM's alone: this process's environment is as it was"


def test_an_address_the_user_chose_another_master_or_spark_submits_jvm_is_left_alone(noJvm, monkeypatch):
    assert localIpWhileStarting("spark://cluster:7077") is None
    assert localIpWhileStarting("local[2]", started=False) is None, "spark-submit started the JVM"
    assert localIpWhileStarting("local[2]", **{"spark.driver.bindAddress": "0.0.0.0"}) is None
    assert localIpWhileStarting("local[2]", **{"spark.driver.host": "my-laptop"}) is None
    monkeypatch.setenv(session.LOCAL_IP_VARIABLE, "0.0.0.0")
    assert localIpWhileStarting("local[2]") == "0.0.0.0"
