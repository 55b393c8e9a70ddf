"""Jet's ``SlidingWindowPolicy``: windows as runs of frames, each frame keyed by its end."""

import attrs

from sparkjet.coredag.model.watermark import LONG_MAX, LONG_MIN


def _clamped(value: int) -> int:
    return max(LONG_MIN, min(LONG_MAX, value))


@attrs.frozen
class SlidingWindowPolicy:
    """Frames of ``frameSize`` starting at ``frameOffset`` (mod frameSize); a window is
    ``framesPerWindow`` consecutive frames."""

    frameSize: int
    frameOffset: int
    framesPerWindow: int

    def __attrs_post_init__(self) -> None:
        if self.frameSize <= 0:
            raise ValueError("frameLength must be positive")
        if self.frameOffset < 0:
            raise ValueError("frameOffset must not be negative")
        if self.frameOffset >= self.frameSize:
            raise ValueError(
                f"frameOffset must be less than frameSize, offset={self.frameOffset}, size={self.frameSize}"
            )
        if self.framesPerWindow <= 0:
            raise ValueError("framesPerWindow must be positive")

    @property
    def windowSize(self) -> int:
        """Return the length of a window."""
        return self.frameSize * self.framesPerWindow

    def isTumbling(self) -> bool:
        """Return whether a window is one frame."""
        return self.framesPerWindow == 1

    def floorFrameTs(self, timestamp: int) -> int:
        """Return the highest frame boundary at or below ``timestamp``."""
        return _clamped(timestamp - (timestamp - self.frameOffset) % self.frameSize)

    def higherFrameTs(self, timestamp: int) -> int:
        """Return the lowest frame boundary above ``timestamp``: the end of its frame (a frame
        boundary even from ``LONG_MIN``, as Jet's ``floorFrameTs(timestamp + frameSize)``)."""
        return self.floorFrameTs(timestamp + self.frameSize)

    def withOffset(self, offset: int) -> "SlidingWindowPolicy":
        """Return this policy with frames starting at ``offset``."""
        return attrs.evolve(self, frameOffset=offset)

    def toTumblingByFrame(self) -> "SlidingWindowPolicy":
        """Return the tumbling policy of this policy's frames."""
        return attrs.evolve(self, framesPerWindow=1)


def slidingWinPolicy(windowSize: int, slideBy: int) -> SlidingWindowPolicy:
    """Return the policy of windows of ``windowSize`` sliding by ``slideBy`` (a divisor of it)."""
    if windowSize < 1:
        raise ValueError("windowSize must be >= 1")
    if slideBy < 1:
        raise ValueError("slideBy must be >= 1")
    if windowSize % slideBy:
        raise ValueError("windowSize must be an integer multiple of slideBy")
    return SlidingWindowPolicy(slideBy, 0, windowSize // slideBy)


def tumblingWinPolicy(windowSize: int) -> SlidingWindowPolicy:
    """Return the policy of back-to-back windows of ``windowSize``."""
    return slidingWinPolicy(windowSize, windowSize)
