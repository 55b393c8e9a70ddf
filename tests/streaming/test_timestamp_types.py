"""A timestamp function that returns no int (seconds as a float, say) fails the job where the
timestamp is made, naming the function and the item and saying what a timestamp is, not in the
window stage downstream."""

import pytest

from sparkjet import AggregateOperations, Pipeline, Sinks, Sources, TestSources, WindowDefinition, wholeItem
from sparkjet.coredag.errors import UserFunctionError

pytestmark = pytest.mark.spark

EVENTS = [(5000, "a"), (6000, "b")]


def seconds(event: tuple) -> float:
    return event[0] / 1000


def refusal(stage: str, item: str, shown: str) -> str:
    line = seconds.__code__.co_firstlineno
    return (
        rf"^Stage '{stage}' \(defined at test_timestamp_types.py:\d+\) failed on item {item}: TypeError: timestampFn seconds \(defined at "
        rf"test_timestamp_types.py:{line}\) returned {shown}, but an event's timestamp is an int of epoch milliseconds"
    )


def countedPerSecond(stream) -> None:
    stream.groupingKey(wholeItem()).window(WindowDefinition.tumbling(1000)).aggregate(
        AggregateOperations.counting()
    ).writeTo(Sinks.noop())


def test_a_float_timestamp_fails_a_stream_job_where_it_is_made(jet):
    p = Pipeline.create()
    stream = TestSources.finiteStream([(millis, event) for millis, event in [(0, EVENTS[0]), (1, EVENTS[1])]])
    countedPerSecond(p.readFrom(stream).withTimestamps(seconds, 0))
    with pytest.raises(UserFunctionError, match=refusal("finiteStream-add-timestamps", r"\(5000, 'a'\)", r"5.0 \(float\)")):
        jet.newJob(p).join()


def test_a_float_timestamp_fails_a_batch_job_where_it_is_made(jet):
    p = Pipeline.create()
    countedPerSecond(p.readFrom(Sources.items(EVENTS)).addTimestamps(seconds, 0))
    with pytest.raises(UserFunctionError, match=refusal("add-timestamps", r"\(5000, 'a'\)", r"5.0 \(float\)")):
        jet.newJob(p).join()
