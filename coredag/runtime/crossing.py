"""Items crossing from one stage to the next through Spark (a shuffle, the driver, a cached
output) are pickled; where one cannot be, the error names the stage that emitted it.

A shuffle's packets are pickled by sparkjet (``pickledPacket``). Other outputs PySpark pickles
after the Python function yielded them, outside sparkjet's code: the batches of a vertex whose
output PySpark pickles are ``OutputBatch`` lists, which pickle their items themselves, as
PySpark would, and name the stage on failure.
"""

import pickle
import types
from collections.abc import Callable, Iterable, Iterator

import attrs
import cloudpickle

from sparkjet.coredag.errors import StageName, UnpicklableItemError, describeStage, shorten
from sparkjet.coredag.runtime.transport import TransportedError

MUST_BE_PICKLABLE = "items that cross between stages must be picklable"
PLAIN_DATA = "emit plain data (numbers, strings, tuples, lists, dicts, instances of module-level classes) instead"


@attrs.frozen
class Crossing:
    """Where a vertex's items cross to: ``producer`` is the stage that emitted them (a
    ``StageName``), ``destination`` says where they go (``Stage 'b'``).

    ``pickledBySpark``: PySpark pickles the vertex's output batches (to collect or cache them),
    not a shuffle. ``tagged``: a shuffle's items are ``(ordinal, item)`` pairs.
    """

    producer: str
    destination: str
    pickledBySpark: bool = False
    tagged: bool = False

    def unpicklable(self, items: list, dumps: Callable[[object], bytes]) -> UnpicklableItemError:
        """Return the error of ``items``, which ``dumps`` cannot pickle: it names the first
        item that it cannot pickle."""
        item, cause = _firstUnpicklable([item for _, item in items] if self.tagged else items, dumps)
        definedAt = self.producer.definedAt if isinstance(self.producer, StageName) else None
        stage = describeStage(str(self.producer), definedAt)
        return UnpicklableItemError(
            f"{stage} emitted an item of type '{type(item).__name__}' that cannot be pickled to send it "
            f"to {self.destination}: {shorten(item)} ({type(cause).__name__}: {cause}); "
            f"{MUST_BE_PICKLABLE}: {_fixFor(item, cause)}"
        )


def pickledPacket(items: list, crossing: Crossing) -> bytes:
    """Return a shuffle's packet of ``items`` pickled; an item that cannot be raises an
    ``UnpicklableItemError`` naming the stage that emitted it."""
    try:
        return _dumps(items)
    except Exception:
        raise crossing.unpicklable(items, _dumps) from None


class OutputBatch(list):
    """A batch of a vertex's output: a list which pickles its items itself when PySpark
    pickles it, so that an item that cannot be pickled fails naming the stage that emitted it;
    it unpickles as a plain list."""

    __slots__ = ("crossing",)

    def __init__(self, items: list, crossing: Crossing) -> None:
        super().__init__(items)
        self.crossing = crossing

    def __reduce__(self):
        return (pickle.loads, (_pickledAsPySpark(list(self), self.crossing),))


def namedBatches(batches: Iterable[list], crossing: Crossing) -> Iterator[list]:
    """Yield a vertex's output ``batches``: as ``OutputBatch``es where PySpark pickles them,
    else only the first (a copy of each costs some 20 ns an item), which names the stage to the
    shuffle that pickles its items."""
    iterator = iter(batches)
    for batch in iterator:
        yield OutputBatch(batch, crossing)
        if not crossing.pickledBySpark:
            break
    yield from iterator


def _pickledAsPySpark(items: list, crossing: Crossing) -> bytes:
    """Return ``items`` pickled, by cloudpickle where pickle cannot, as PySpark pickles them; an
    item that cannot be raises the transported ``UnpicklableItemError``: PySpark, which called
    this, puts its own words before the message."""
    try:
        return _dumps(items)
    except Exception:
        pass
    try:
        return cloudpickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        raise TransportedError(crossing.unpicklable(items, cloudpickle.dumps)) from None


def _dumps(items: object) -> bytes:
    return pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)


def _firstUnpicklable(items: list, dumps: Callable[[object], bytes]) -> tuple[object, Exception]:
    """Return the first of ``items`` that ``dumps`` cannot pickle and why; the items together
    where each one can be."""
    for item in items:
        try:
            dumps(item)
        except Exception as cause:
            return item, cause
    try:
        dumps(items)
    except Exception as cause:
        return items, cause
    return items, RuntimeError("pickling failed once, but not again")


def _fixFor(item: object, cause: Exception) -> str:
    if isinstance(item, types.GeneratorType) or "'generator'" in str(cause):
        return "return a list instead of a generator"
    return PLAIN_DATA
