"""A stream's trigger interval: a second unless ``SPARKJET_TRIGGER_MILLIS`` says (the test
session shortens it, so stream tests wait less for micro-batches)."""

import pytest

from sparkjet.coredag.runtime.stream.stream_run import TRIGGER_MILLIS, TRIGGER_VARIABLE, triggerMillis


def test_the_trigger_is_a_second_unless_the_variable_says(monkeypatch):
    monkeypatch.delenv(TRIGGER_VARIABLE, raising=False)
    assert triggerMillis() == TRIGGER_MILLIS == 1000
    monkeypatch.setenv(TRIGGER_VARIABLE, "250")
    assert triggerMillis() == 250


@pytest.mark.parametrize("configured", ["0", "-5", "0.5", "fast", ""])
def test_a_trigger_that_is_no_whole_number_of_milliseconds_above_0_is_refused(monkeypatch, configured):
    monkeypatch.setenv(TRIGGER_VARIABLE, configured)
    message = f"SPARKJET_TRIGGER_MILLIS must be a whole number of milliseconds above 0, got {configured!r}"
    with pytest.raises(ValueError, match=f"^{message}$".replace(".", r"\.")):
        triggerMillis()
