"""Stopping a session sparkjet started: PySpark's stop() without its wait for the accumulator
server, whose thread still ends."""

import threading

from sparkjet.coredag.runtime import session


class BlockingServer:
    """An accumulator server whose shutdown takes until ``released``, as PySpark's polling does."""

    def __init__(self) -> None:
        self.released, self.ended = threading.Event(), threading.Event()

    def shutdown(self) -> None:
        """Return once released."""
        self.released.wait(30)
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
    assert server.ended.wait(30), "the server was shut down in the background"
