"""Coalescing the watermarks of a processor's input queues by the rules of Jet's Processor API, as Jet's
``WatermarkCoalescer`` does.

Every upstream processor of every inbound edge is one queue. A queue's watermarks strictly
increase; a processor observes a watermark once every active queue has sent at least that
value; an idle queue (it sent ``IDLE_MESSAGE``) is left out until an event or a watermark wakes
it; a done queue no longer holds the minimum back. When every queue is idle or done, the highest
watermark seen is forwarded, then the idle message.
"""

import attrs

from sparkjet.coredag.errors import ProcessorContractError
from sparkjet.coredag.model.watermark import IDLE_MESSAGE, LONG_MAX, LONG_MIN, Watermark


@attrs.frozen
class CoalescerState:
    """A coalescer's state as a small value, which a stream's processor carries from one
    micro-batch to the next: each queue's last watermark (``LONG_MAX``: done) and idleness,
    the last watermark forwarded and the top one seen, and the all-idle flags."""

    queueWms: tuple[int, ...]
    isIdle: tuple[bool, ...]
    lastEmittedWm: int = LONG_MIN
    topObservedWm: int = LONG_MIN
    allInputsAreIdle: bool = False
    idleMessagePending: bool = False


class WatermarkCoalescer:
    """The watermark state of ``queueCount`` input queues; each ``observe...`` call returns the
    watermark the processor is to observe now, or None. It starts from ``state`` where given
    (for as many queues), else having forwarded ``lastEmittedWm`` and nothing else."""

    def __init__(self, queueCount: int, state: CoalescerState | None = None, lastEmittedWm: int = LONG_MIN) -> None:
        if queueCount < 0:
            raise ValueError(f"queueCount must be >= 0, but is {queueCount}")
        if state is None or len(state.queueWms) != queueCount:
            state = CoalescerState((LONG_MIN,) * queueCount, (False,) * queueCount, lastEmittedWm)
        self._queueWms, self._isIdle = list(state.queueWms), list(state.isIdle)
        self._lastEmittedWm, self._topObservedWm = state.lastEmittedWm, state.topObservedWm
        self._allInputsAreIdle, self._idleMessagePending = state.allInputsAreIdle, state.idleMessagePending

    def state(self) -> CoalescerState:
        """Return the coalescer's state as a value."""
        return CoalescerState(
            tuple(self._queueWms), tuple(self._isIdle), self._lastEmittedWm, self._topObservedWm,
            self._allInputsAreIdle, self._idleMessagePending,
        )

    def isDone(self, queueIndex: int) -> bool:
        """Return whether queue ``queueIndex`` ended."""
        return self._queueWms[queueIndex] == LONG_MAX

    def observeWm(self, queueIndex: int, watermark: Watermark) -> Watermark | None:
        """Take ``watermark`` from queue ``queueIndex``; an older or equal one breaks the contract."""
        self._checkHasQueues()
        last = self._queueWms[queueIndex]
        if last >= watermark.timestamp:
            raise ProcessorContractError(
                f"Watermarks not monotonically increasing on queue: last one={last}, new one={watermark.timestamp}"
            )
        if watermark.isIdle():
            self._isIdle[queueIndex] = True
        else:
            self._wake(queueIndex)
            self._queueWms[queueIndex] = watermark.timestamp
            self._topObservedWm = max(self._topObservedWm, watermark.timestamp)
        return self._checkObservedWms()

    def observeEvent(self, queueIndex: int) -> None:
        """Take note of an event on queue ``queueIndex``: an idle queue is active again."""
        self._checkHasQueues()
        self._wake(queueIndex)

    def queueDone(self, queueIndex: int) -> Watermark | None:
        """Take note that queue ``queueIndex`` ended: it no longer holds the watermark back."""
        self._checkHasQueues()
        if self._queueWms[queueIndex] == LONG_MAX:
            raise ProcessorContractError(f"Duplicate DONE call for queue {queueIndex}")
        self._queueWms[queueIndex] = LONG_MAX
        return self._checkObservedWms()

    def checkWmHistory(self) -> Watermark | None:
        """Return the idle message owed after forwarding the top watermark, once; else None."""
        if self._idleMessagePending:
            self._idleMessagePending = False
            return IDLE_MESSAGE
        return None

    def coalescedWm(self) -> int:
        """Return the last watermark forwarded (``LONG_MIN`` before the first)."""
        return self._lastEmittedWm

    def topObservedWm(self) -> int:
        """Return the highest watermark any queue sent (``LONG_MIN`` before the first)."""
        return self._topObservedWm

    def _wake(self, queueIndex: int) -> None:
        if self._isIdle[queueIndex]:
            self._isIdle[queueIndex] = False
            self._allInputsAreIdle = False

    def _checkHasQueues(self) -> None:
        if not self._queueWms:
            raise ProcessorContractError("A processor without inputs observes no watermarks")

    def _checkObservedWms(self) -> Watermark | None:
        if self._allInputsAreIdle:
            return None
        active = [wm for wm, idle in zip(self._queueWms, self._isIdle) if not idle]
        lowest = min(active, default=LONG_MAX)
        if lowest == LONG_MAX:
            return self._allIdleOrDone(notDone=sum(wm < LONG_MAX for wm in self._queueWms))
        if lowest > self._lastEmittedWm:
            self._lastEmittedWm = lowest
            return Watermark(lowest)
        return None

    def _allIdleOrDone(self, notDone: int) -> Watermark | None:
        """Forward the top watermark first (whichever queue went idle last), then the idle message."""
        self._allInputsAreIdle = True
        if self._topObservedWm > self._lastEmittedWm:
            self._idleMessagePending = notDone != 0
            self._lastEmittedWm = self._topObservedWm
            return Watermark(self._topObservedWm)
        return IDLE_MESSAGE if notDone != 0 else None
