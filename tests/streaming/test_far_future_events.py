"""An event in the year 3000 among today's: a stream job's windows skip the 3e10 empty ones
between them (the processors' tests count the work; here the whole job, two stages, micro-batch
after micro-batch, against a plain count)."""

from collections import Counter

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, TestSources, WindowDefinition, wholeItem
from tests.streaming.test_sliding_window import YEAR_3000, countsPerWindow

pytestmark = pytest.mark.spark

EVENTS = [(5, "a"), (1500, "b"), (2999, "a"), (YEAR_3000 + 7, "a"), (YEAR_3000 + 1001, "b"), (YEAR_3000 + 1002, "a")]
WINDOWS = {"tumbling": (1000, 1000), "sliding": (3000, 1000)}


def test_a_stream_reaching_the_year_3000_gives_its_windows_at_once(jet):
    p = Pipeline.create()
    stream = p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=3)).withNativeTimestamps(0)
    for name, (size, slide) in WINDOWS.items():
        window = WindowDefinition.sliding(size, slide)
        stream.groupingKey(wholeItem()).window(window).aggregate(AggregateOperations.counting()).writeTo(Sinks.list(name))
    jet.newJob(p).join()
    for name, (size, slide) in WINDOWS.items():
        results = jet.getList(name)
        counted = Counter({(r.start, r.end, r.key): r.result for r in results})
        assert counted == countsPerWindow(EVENTS, size, slide) and len(counted) == len(results)
