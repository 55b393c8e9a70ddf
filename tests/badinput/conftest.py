"""A Jet client for jobs refused at submission, before any Spark session starts."""

import pytest

from sparkjet.planner import Jet


@pytest.fixture
def submitter():
    """A Jet client that starts no Spark session for a job refused while it is submitted."""
    client = Jet()
    yield client
    client.shutdown()
