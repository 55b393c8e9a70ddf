"""Stream sources of the user's functions (Jet's SourceBuilder.stream and timestampedStream):
the driver calls fillBufferFn in a thread of its own, the items reach the job a micro-batch at a
time, destroyFn ends the state, and a function that raises fails the job naming the source."""

import os
import time
from collections import Counter

import pytest

from sparkjet import (
    AggregateOperations,
    AssertionCompletedException,
    Assertions,
    Pipeline,
    Sinks,
    SourceBuilder,
    UserFunctionError,
    WindowDefinition,
    wholeItem,
)
from sparkjet.coredag.processors.built_stream_source import BuiltStreamP
from sparkjet.pipeline.errors import PipelineError

WORDS = "ant bee ant cat ant bee dog ant".split() * 5
DESTROYED: list = []


class Counting:
    """A source's state: the next word to add."""

    def __init__(self, context):
        self.next = 0
        self.jobName = context.jobName


def addThree(state: Counting, buffer) -> None:
    """Add up to three words a call, each at 10 ms times its number, until there are none."""
    for _ in range(3):
        if state.next < len(WORDS):
            buffer.add(WORDS[state.next], state.next * 10)
            state.next += 1


def destroyed(state: Counting) -> None:
    DESTROYED.append(state.next)


def windowCounts(results) -> Counter:
    return Counter({(r.start, r.key): r.result for r in results})


EXPECTED = Counter((number * 10 // 100 * 100, word) for number, word in enumerate(WORDS))


def test_a_builder_needs_its_fill_function_and_a_plain_stream_has_no_native_time():
    with pytest.raises(PipelineError, match="SourceBuilder 'words' .*fillBufferFn must be set"):
        SourceBuilder.stream("words", Counting).build()
    plain = SourceBuilder.stream("words", Counting).fillBufferFn(addThree).build()
    with pytest.raises(PipelineError, match="The source doesn't support native timestamps"):
        Pipeline.create().readFrom(plain).withNativeTimestamps(0)


@pytest.mark.spark
def test_a_timestamped_stream_of_your_functions_is_windowed_until_the_assertion_passes(jet):
    source = SourceBuilder.timestampedStream("words", Counting).fillBufferFn(addThree).destroyFn(destroyed).build()
    p = Pipeline.create()
    # windows close once a later word's time passes them: all but the last
    closable = Counter({key: count for key, count in EXPECTED.items() if key[0] < max(start for start, _ in EXPECTED)})
    (p.readFrom(source).withNativeTimestamps(0)
      .groupingKey(wholeItem()).window(WindowDefinition.tumbling(100))
      .aggregate(AggregateOperations.counting())
      .apply(Assertions.assertCollectedEventually(60, lambda results: _assertEqual(windowCounts(results), closable)))
      .writeTo(Sinks.list("built-windows")))
    with pytest.raises(AssertionCompletedException):
        jet.newJob(p).join()
    assert windowCounts(jet.getList("built-windows")) == closable
    assert DESTROYED[-1] == len(WORDS), "destroyFn got the state after the last word"


def _assertEqual(actual, expected):
    assert actual == expected


def failing(state, buffer):
    raise OSError("the feed is down")


@pytest.mark.spark
def test_a_failing_fill_function_fails_the_job_naming_the_source(jet):
    p = Pipeline.create()
    p.readFrom(SourceBuilder.stream("feed", Counting).fillBufferFn(failing).build()).withoutTimestamps().writeTo(Sinks.noop())
    with pytest.raises(UserFunctionError, match=r"Stage 'feed' failed on item \(in fillBufferFn\): OSError: the feed is down"):
        jet.newJob(p).join()


def addOnce(state: list, buffer) -> None:
    if not state:
        state.append("added")
        buffer.add("one item")


def test_a_feeder_started_again_writes_after_the_files_of_the_run_before(tmp_path):
    """Spark's file source skips a name it has read: a resumed or restarted job's feeder must
    not write events-000000000.txt again."""
    (tmp_path / "events-000000004.txt").write_text("")
    feeder = BuiltStreamP(lambda context: [], addOnce, sourceId="once").feeder("job", str(tmp_path))
    feeder.start()
    deadline = time.monotonic() + 30
    while not (tmp_path / "events-000000005.txt").exists():
        assert time.monotonic() < deadline, sorted(os.listdir(tmp_path))
        time.sleep(0.05)
    feeder.stop()
    assert sorted(os.listdir(tmp_path)) == ["events-000000004.txt", "events-000000005.txt"]
