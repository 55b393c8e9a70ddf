"""Jet's WindowDefinition: frozen values, Jet's checks, the policy the processors use."""

import pytest

from sparkjet.coredag.model.sliding_window_policy import SlidingWindowPolicy
from sparkjet.pipeline.window_definition import WindowDefinition


def test_tumbling_and_sliding_make_frames_of_the_slide():
    assert WindowDefinition.tumbling(10).toSlidingWindowPolicy() == SlidingWindowPolicy(10, 0, 1)
    assert WindowDefinition.sliding(10, 2).toSlidingWindowPolicy() == SlidingWindowPolicy(2, 0, 5)


def test_early_results_period_gives_a_new_definition():
    tumbling = WindowDefinition.tumbling(10)
    early = tumbling.setEarlyResultsPeriod(500)
    assert (tumbling.earlyResultsPeriod, early.earlyResultsPeriod) == (0, 500)
    assert WindowDefinition.session(30).setEarlyResultsPeriod(5).sessionTimeout == 30


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: WindowDefinition.tumbling(0), "windowSize must be positive"),
        (lambda: WindowDefinition.sliding(10, 0), "slideBy must be positive"),
        (lambda: WindowDefinition.sliding(10, 3), r"windowSize must be integer multiple of slideBy, mod\(10, 3\) != 0"),
        (lambda: WindowDefinition.session(0), "sessionTimeout must be positive"),
        (lambda: WindowDefinition.tumbling(10).setEarlyResultsPeriod(-1), "earlyResultsPeriod must be zero or positive"),
    ],
)
def test_invalid_definitions_get_jets_messages(make, message):
    with pytest.raises(ValueError, match=message):
        make()
