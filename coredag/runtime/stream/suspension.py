"""Suspending a stream job (Jet's ``suspend``, ``resume``, ``restart``): its run stops after
the states of its last micro-batch are saved, keeping its checkpoint, and a new run goes on from
there once resumed (at once, for a restart); ``Jet.shutdown()`` stops it so and ends it."""

import enum
import threading

POLL_SECONDS = 0.25
"""How often a suspended job looks whether it was cancelled."""


class SuspensionState(enum.Enum):
    """Whether a stream job runs, waits suspended, stops to start again at once, or stops to
    end, its checkpoint kept (shutting down)."""

    RUNNING = "running"
    SUSPENDED = "suspended"
    RESTARTING = "restarting"
    SHUTTING_DOWN = "shutting down"


class Suspension:
    """The requests made to a stream job's runs; shared by the job and its running thread."""

    def __init__(self) -> None:
        self._state = SuspensionState.RUNNING
        self._changed = threading.Condition()

    @property
    def state(self) -> SuspensionState:
        """Return what was last asked."""
        return self._state

    def stopsRun(self) -> bool:
        """Return whether the current run is to stop (suspended, restarting or shutting down)."""
        return self._state is not SuspensionState.RUNNING

    def suspend(self) -> None:
        """Ask the run to stop after its snapshot and wait for ``resume``."""
        self._set(SuspensionState.SUSPENDED)

    def resume(self) -> None:
        """Let a suspended job go on, from its last snapshot."""
        if self._state is SuspensionState.SUSPENDED:
            self._set(SuspensionState.RESTARTING)

    def restart(self) -> None:
        """Ask the run to stop and a new one to go on from its last snapshot at once."""
        self._set(SuspensionState.RESTARTING)

    def shutDown(self) -> None:
        """Ask the run to stop after its snapshot and the job to end (a suspended job ends at once);
        nothing asked later changes that."""
        self._set(SuspensionState.SHUTTING_DOWN)

    def awaitGoOn(self, cancelled) -> bool:
        """Wait while suspended; return True to start the next run, False once ``cancelled()``
        or shutting down."""
        with self._changed:
            while self._state is SuspensionState.SUSPENDED and not cancelled():
                self._changed.wait(POLL_SECONDS)
            if cancelled() or self._state is SuspensionState.SHUTTING_DOWN:
                return False
            self._state = SuspensionState.RUNNING
            return True

    def _set(self, state: SuspensionState) -> None:
        with self._changed:
            if self._state is not SuspensionState.SHUTTING_DOWN:
                self._state = state
            self._changed.notify_all()
