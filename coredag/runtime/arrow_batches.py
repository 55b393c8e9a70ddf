"""Arrow batches of pickled items: how a job's data crosses between the Python functions a
Spark Connect session runs with ``mapInArrow``. Each row holds a pickled list of items (a
packet) or, instead, the figures a task counted and, in a stream's micro-batch, the states its
processors saved (pickled), passed on beside the data to the driver; ``key`` is a shuffle's partition key (see ``partition_keys``), ``rank``
the place of a priority group. No pyspark here: the workers import it."""

import pickle
from collections import Counter
from collections.abc import Iterable, Iterator

import pyarrow as pa

from sparkjet.coredag.runtime.processor_state import ProcessorState, StateKey

SCHEMA = "key int, rank long, packet binary, figures binary"
"""The DDL schema of every DataFrame a Connect job passes between its Python functions."""

_ARROW_SCHEMA = pa.schema(
    [("key", pa.int32()), ("rank", pa.int64()), ("packet", pa.binary()), ("figures", pa.binary())]
)

PACKETS_PER_BATCH = 256
"""How many packets one Arrow batch holds (a shuffle's packets are about 16 KiB: some 4 MiB a
batch). Tutorial 02's word count of 11 MB, every word shuffled, at parallelism 2 on a loaded
2-core machine took a median 19.0 s at 1, 17.2 s at 16, 15.9 s at 64 and 14.4 s at 256."""


class Figures(Counter):
    """What the tasks of a partition counted (added up as the classic engine's accumulator of
    counts adds them) and, by vertex and processor index, the states their processors saved in
    a stream's micro-batch (gathered as ``StatesAccumulatorParam`` gathers them)."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[StateKey, ProcessorState] = {}

    def add(self, counts: Counter) -> None:
        """Add ``counts``."""
        self.update(counts)

    def including(self, counted: bytes) -> None:
        """Add the figures and states of a figures row's pickled ``counted``."""
        counts, states = pickle.loads(counted)
        self.update(counts)
        self.states.update(states)


def decodedBatches(recordBatches: Iterable[pa.RecordBatch], figures: Figures) -> Iterator[list]:
    """Yield the item lists of the packets in ``recordBatches``; add the figures rows' counts
    and states into ``figures`` on the way."""
    for recordBatch in recordBatches:
        packets = recordBatch.column(2).to_pylist()
        for row, counted in enumerate(recordBatch.column(3).to_pylist()):
            if counted is not None:
                figures.including(counted)
            elif packets[row] is not None:
                yield pickle.loads(packets[row])


def sparkRowBatches(recordBatches: Iterable[pa.RecordBatch]) -> Iterator[list]:
    """Yield the rows of a Spark source's ``recordBatches`` as lists of PySpark Rows, as the
    classic engine's RDD of the DataFrame gives them."""
    from pyspark.sql import Row  # the module imports no Spark; only a Spark source's tasks need Rows

    for recordBatch in recordBatches:
        names = recordBatch.schema.names
        yield [Row(**{name: _rowsIn(value, Row) for name, value in zip(names, values)})
               for values in zip(*(column.to_pylist() for column in recordBatch.columns))]


def _rowsIn(value: object, Row) -> object:
    """Return ``value`` with each struct (a dict from Arrow) a Row, as in a classic DataFrame."""
    if isinstance(value, dict):
        return Row(**{name: _rowsIn(field, Row) for name, field in value.items()})
    if isinstance(value, list):
        return [_rowsIn(element, Row) for element in value]
    return value


class Encoder:
    """Gathers a task's output rows into Arrow batches of ``PACKETS_PER_BATCH`` packets."""

    def __init__(self) -> None:
        self._keys: list[int] = []
        self._ranks: list[int] = []
        self._packets: list[bytes] = []

    def add(self, key: int, rank: int, packet: bytes) -> pa.RecordBatch | None:
        """Add one packet; return a full Arrow batch, if it filled one."""
        self._keys.append(key)
        self._ranks.append(rank)
        self._packets.append(packet)
        return self.flush() if len(self._packets) >= PACKETS_PER_BATCH else None

    def flush(self) -> pa.RecordBatch | None:
        """Return the packets added since the last batch as one (None if there are none)."""
        if not self._packets:
            return None
        batch = pa.RecordBatch.from_arrays(
            [pa.array(self._keys, pa.int32()), pa.array(self._ranks, pa.int64()),
             pa.array(self._packets, pa.binary()), pa.nulls(len(self._packets), pa.binary())],
            schema=_ARROW_SCHEMA,
        )
        self._keys, self._ranks, self._packets = [], [], []
        return batch


def figuresBatch(figures: Figures) -> pa.RecordBatch:
    """Return the one-row Arrow batch that carries a task's ``figures`` and states on to the driver."""
    return pa.RecordBatch.from_arrays(
        [pa.array([0], pa.int32()), pa.array([0], pa.int64()), pa.nulls(1, pa.binary()),
         pa.array([pickle.dumps((Counter(figures), figures.states), protocol=pickle.HIGHEST_PROTOCOL)], pa.binary())],
        schema=_ARROW_SCHEMA,
    )


def collectedBatches(table: pa.Table, figures: Figures) -> list[list]:
    """Return the item lists of a collected Arrow ``table`` of ``SCHEMA``; add its figures and states to ``figures``."""
    return list(decodedBatches(table.to_batches(), figures))
