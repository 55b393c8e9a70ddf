"""The ``scale`` marker of the opt-in benchmark-scale tests."""


def pytest_configure(config):
    """Register ``scale``: run only with SPARKJET_SCALE=1 (see tests/faults/test_scale.py)."""
    config.addinivalue_line(
        "markers", "scale: benchmark-scale, opt-in with SPARKJET_SCALE=1 (minutes, gigabytes)"
    )
