"""What an assertion sink checks (Jet's ``AssertionSinks``): a value the driver runs over the
items the sink collected."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import SparkjetError


class AssertionCompletedException(SparkjetError):
    """Ends a stream job whose ``assertCollectedEventually`` passed, as Jet's does: ``join()``
    raises it, which a test takes for success."""


@attrs.frozen(eq=False)
class AssertionCheck:
    """``assertFn(items collected)``: once the job's input is consumed or, where
    ``timeoutSeconds`` is set (Jet's ``assertCollectedEventually``), after every item, the
    job ending with ``AssertionCompletedException`` once it passes and with its last
    ``AssertionError`` once the timeout has passed. Each check is its own (compared by identity)."""

    name: str
    assertFn: Callable[[list], None]
    timeoutSeconds: float | None = None
