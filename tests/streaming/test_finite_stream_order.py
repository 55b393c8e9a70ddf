"""A finite stream gives a micro-batch's events in their order, also where the micro-batch holds
several of its files: a query started again after its driver was killed while listing the next
file takes that file with the one after it, and Spark gives the two files' rows in an order of
its own. With watermarks in-band, an event after a later one is late, as in Jet: the kill test
lost window 150's events so."""

import pytest

from sparkjet.coredag.processors.stream_sources import FiniteStreamP

pytestmark = pytest.mark.spark

EVENTS = tuple((time, f"w{time % 7}") for time in range(0, 60, 3))


def test_a_micro_batch_of_two_files_gives_their_events_in_order(spark, tmp_path):
    source = FiniteStreamP(EVENTS, 10, sourceId="finite", nativeTimestamps=True)
    source.streamingRows(spark, str(tmp_path))
    first, second = sorted(tmp_path.iterdir())
    lines = spark.read.text(str(second)).union(spark.read.text(str(first)))
    events = source.rowConverter()(source.microBatchRows(source.eventRows(lines)).collect())
    assert [(event.timestamp, event.payload) for event in events] == list(EVENTS)
