"""Jet's assertions in running jobs: a batch job's assertion fails it with its AssertionError, a
stream's eventual assertion ends the job with AssertionCompletedException once it passes, or
fails it once its timeout passes without new input."""

import pytest

from sparkjet import (
    AggregateOperations,
    AssertionCompletedException,
    Assertions,
    AssertionSinks,
    Pipeline,
    Sinks,
    Sources,
    TestSources,
    WindowDefinition,
    wholeItem,
)

pytestmark = pytest.mark.spark

EVENTS = [(time, word) for time, word in enumerate("ant bee ant cat ant bee".split())]


def test_a_batch_assertion_passes_or_fails_the_job_with_its_error(jet):
    p = Pipeline.create()
    (p.readFrom(Sources.items(["a", "b", "a"]))
      .groupingKey(wholeItem()).aggregate(AggregateOperations.counting())
      .apply(Assertions.assertAnyOrder([("a", 2), ("b", 1)]))
      .writeTo(Sinks.list("asserted-counts")))
    jet.newJob(p).join()
    assert sorted(jet.getList("asserted-counts")) == [("a", 2), ("b", 1)]

    wrong = Pipeline.create()
    wrong.readFrom(Sources.items(["a", "b"])).writeTo(AssertionSinks.assertOrdered(["b", "a"], "order"))
    with pytest.raises(AssertionError, match=r"order, expected:<\['b', 'a'\]> but was:<\['a', 'b'\]>"):
        jet.newJob(wrong).join()


def tumblingCountsReached(results):
    counts = {(result.start, result.key): result.result for result in results}
    assert counts == {(0, "ant"): 2, (0, "bee"): 1, (0, "cat"): 1, (4, "ant"): 1, (4, "bee"): 1}


def test_an_eventual_assertion_ends_a_stream_job_once_it_passes(jet):
    p = Pipeline.create()
    (p.readFrom(TestSources.finiteStream(EVENTS, itemsPerBatch=2)).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(4))
      .aggregate(AggregateOperations.counting())
      .apply(Assertions.assertCollectedEventually(60, tumblingCountsReached))
      .writeTo(Sinks.noop()))
    with pytest.raises(AssertionCompletedException, match="Assertion passed successfully"):
        jet.newJob(p).join()


def test_an_eventual_assertion_times_out_on_a_stream_without_input(jet, tmp_path):
    p = Pipeline.create()
    (p.readFrom(Sources.fileWatcher(str(tmp_path))).withoutTimestamps()
      .writeTo(AssertionSinks.assertCollectedEventually(2, lambda lines: len(lines) == 1 or _fail("no line yet"))))
    with pytest.raises(AssertionError, match="did not pass within 2 s: None"):
        jet.newJob(p).join()


def _fail(message):
    raise AssertionError(message)
