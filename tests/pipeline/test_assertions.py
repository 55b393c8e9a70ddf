"""Jet's assertion sinks and inline assertions, checked without Spark: the checks' verdicts and
messages, and the driver's run of them (an eventual check after every item, its timeout)."""

import pytest

from sparkjet.coredag.model.assertion import AssertionCompletedException
from sparkjet.pipeline import Assertions, AssertionSinks, Pipeline, Sinks, Sources
from sparkjet.pipeline.errors import PipelineError
from sparkjet.planner import plan
from sparkjet.planner.assertions import AssertionRun, JobAssertions


def verdict(sink, received):
    run = AssertionRun(sink.check)
    run.receive(received)
    run.complete()


def test_assert_ordered_takes_exactly_the_items_in_order():
    verdict(AssertionSinks.assertOrdered([1, 2, 3]), [1, 2, 3])
    with pytest.raises(AssertionError, match=r"^first three, expected:<\[1, 2, 3\]> but was:<\[1, 3, 2\]>$"):
        verdict(AssertionSinks.assertOrdered([1, 2, 3], "first three"), [1, 3, 2])


def test_assert_any_order_compares_the_items_as_bags():
    verdict(AssertionSinks.assertAnyOrder(["a", "b", "a"]), ["a", "a", "b"])
    with pytest.raises(AssertionError, match=r"Expected and received did not match.*expected:<\{'a': 2, 'b': 1\}> but was:<\{'a': 1, 'b': 1\}>"):
        verdict(AssertionSinks.assertAnyOrder(["a", "b", "a"]), ["a", "b"])


def test_assert_contains_names_the_items_not_observed():
    verdict(AssertionSinks.assertContains([1, 2]), [3, 2, 1])
    with pytest.raises(AssertionError, match=r"the following items have not been observed: \[2\]"):
        verdict(AssertionSinks.assertContains([1, 2]), [1, 3])


def test_assert_collected_runs_the_function_over_every_item_even_none():
    seen = []
    verdict(AssertionSinks.assertCollected(seen.append), [])
    assert seen == [[]]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def atLeastThree(items):
    assert len(items) >= 3, f"only {len(items)} items"


def test_an_eventual_assertion_ends_the_job_once_it_passes_after_an_item():
    run = AssertionRun(AssertionSinks.assertCollectedEventually(5, atLeastThree).check)
    run.receive([1, 2])
    assert str(run.lastError).startswith("only 2 items")
    with pytest.raises(AssertionCompletedException, match="Assertion passed successfully"):
        run.receive([3, 4])
    assert run.collected == [1, 2, 3], "it passed on the third item"


def test_an_eventual_assertion_fails_with_its_last_error_once_the_timeout_passed():
    clock = Clock()
    run = AssertionRun(AssertionSinks.assertCollectedEventually(5, atLeastThree).check, clock)
    run.receive([1])
    clock.now = 5
    run.checkTimeout()
    clock.now = 5.5
    with pytest.raises(AssertionError, match=r"assertCollectedEventually: the assertion did not pass within 5 s: only 1 items"):
        run.checkTimeout()


def test_an_error_other_than_an_assertion_fails_at_once():
    def broken(items):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        AssertionRun(AssertionSinks.assertCollectedEventually(5, broken).check).receive([1])


def test_inline_assertions_add_a_sink_beside_the_stage_and_return_it():
    p = Pipeline.create()
    words = p.readFrom(Sources.items(["a", "b"]))
    assert words.apply(Assertions.assertAnyOrder(["a", "b"])) is words
    words.writeTo(Sinks.list("out"))
    dag = plan(p).dag
    assert {vertex.name for vertex in dag} == {"items", "assertAnyOrder", "listSink(out)"}
    assertions = JobAssertions(dag)
    check = dag.getVertex("assertAnyOrder").processorSupplier.check
    collected = {check: ["a", "b"], "out": ["a", "b"]}
    assert assertions.listItems(collected) == {"out": ["a", "b"]}
    assertions.receive(collected)
    assertions.complete()


def test_bad_arguments_are_refused_naming_the_helper():
    with pytest.raises(PipelineError, match="assertAnyOrder .*expected is a collection of items, got 'ab'"):
        AssertionSinks.assertAnyOrder("ab")
    with pytest.raises(PipelineError, match="timeoutSeconds must be a positive number, got 0"):
        AssertionSinks.assertCollectedEventually(0, atLeastThree)
