"""The processor test harness: it passes correct processors and catches broken ones."""

import pytest

from sparkjet.coredag import AbstractProcessor, Processor, ProcessorContext, UserFunctionError
from sparkjet.coredag.api.testing import sameItemsAnyOrder, verifyProcessor

ONE_BY_ONE = "inbox one-by-one, outbox capacity 1"
ALL_AT_ONCE = "inbox all-at-once, outbox capacity 1"
ONE_BY_ONE_FULL = "inbox one-by-one, outbox capacity 1 and full on alternate calls"
ALL_AT_ONCE_FULL = "inbox all-at-once, outbox capacity 1 and full on alternate calls"


def prefix(mode: str) -> str:
    """The start of a failure message of ``mode``."""
    return f"verifyProcessor(mode='{mode}')"


# Correct processors pass


class Repeater(AbstractProcessor):
    """Emits each item n as n copies of itself, through a flat-mapper."""

    def __init__(self):
        self.flatMapper_ = self.flatMapper(lambda n: [n] * n)

    def tryProcess0(self, item):
        return self.flatMapper_.tryProcess(item)


class Counting(AbstractProcessor):
    """Counts its input; emits the count and then a countdown from complete()."""

    def __init__(self):
        self.count, self.output = 0, None

    def tryProcess0(self, item):
        self.count += 1
        return True

    def complete(self):
        if self.output is None:
            self.output = iter(["count", self.count, *range(self.count, 0, -1)])
        return self.emitFromTraverser(self.output)


def test_correct_abstract_processor_passes_in_all_modes():
    verifyProcessor(Repeater).input([2, 0, 3, 1]).expectOutput([2, 2, 3, 3, 3, 1]).verify()


def test_emit_from_traverser_in_complete_passes_with_capacity_one():
    verifyProcessor(Counting).input("abc").expectOutput(["count", 3, 3, 2, 1]).disableSnapshots().verify()


def test_empty_input_still_calls_complete():
    verifyProcessor(Counting).input([]).expectOutput(["count", 0]).disableSnapshots().verify()


class SnapshotCounting(Counting):
    """Counting whose count survives a snapshot, as Jet's processors keep their state."""

    def saveToSnapshot(self):
        return self.tryEmitToSnapshot("count", self.count) if self.output is None else True

    def restoreFromSnapshot(self, key, value):
        self.count = value


def test_snapshot_modes_go_on_with_a_new_processor_restored_from_the_saved_state():
    verifyProcessor(SnapshotCounting).input("abc").expectOutput(["count", 3, 3, 2, 1]).verify()


def test_a_processor_that_loses_its_state_in_a_snapshot_fails_naming_the_mode():
    with pytest.raises(AssertionError, match=r"mode='snapshot and restore after every item'\): output of ordinal 0 differs"):
        verifyProcessor(Counting).input("abc").expectOutput(["count", 3, 3, 2, 1]).verify()


def test_a_snapshot_entry_that_cannot_be_pickled_fails():
    class Unpicklable(SnapshotCounting):
        def saveToSnapshot(self):
            return self.tryEmitToSnapshot("count", lambda: self.count)

    with pytest.raises(AssertionError, match="saveToSnapshot\\(\\) saved an entry that cannot be pickled"):
        verifyProcessor(Unpicklable).input("a").expectOutput(["count", 1, 1]).verify()


def test_every_cooperative_mode_gets_a_fresh_processor_initialized_and_closed():
    log = []

    class Logged(Repeater):
        def init(self, outbox, context):
            log.append(("init", id(self)))
            super().init(outbox, context)

        def close(self):
            log.append(("close", id(self)))

    verifyProcessor(Logged).input([1]).expectOutput([1]).disableSnapshots().verify()
    inits = [key for what, key in log if what == "init"]
    assert [what for what, _ in log] == ["init", "close"] * 4
    assert len(set(inits)) == 4


# Wrong processors fail


class Doubler(AbstractProcessor):
    """Emits twice each item."""

    def tryProcess0(self, item):
        return self.tryEmit(item * 2)


def test_wrong_output_gives_a_diff_naming_mode_and_ordinal():
    with pytest.raises(AssertionError) as raised:
        verifyProcessor(Doubler).input([1, 2, 3]).expectOutput([2, 5, 6]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: output of ordinal 0 differs:\n"
        "--- expected\n+++ actual\n@@ -1,3 +1,3 @@\n 2\n-5\n+4\n 6"
    )


def test_diff_compares_reprs():
    with pytest.raises(AssertionError, match=r"-'2'\n\+2"):
        verifyProcessor(Doubler).input([1]).expectOutput(["2"]).verify()


class Stuck(AbstractProcessor):
    """Never takes an item from its inbox."""

    def tryProcess0(self, item):
        return False


def test_processor_that_never_removes_items_fails_the_progress_assertion():
    with pytest.raises(AssertionError) as raised:
        verifyProcessor(Stuck).input([1]).expectOutput([]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: process(0) made no progress: it removed no item from the "
        "inbox and emitted nothing although the outbox had room"
    )


class Dropping(AbstractProcessor):
    """Ignores a refusal: drops the refused item and moves on."""

    def tryProcess0(self, item):
        self.tryEmit(item)
        return True


def test_processor_that_drops_the_refused_item_fails():
    with pytest.raises(AssertionError) as raised:
        verifyProcessor(Dropping).input([1, 2, 3]).expectOutput([1, 2, 3]).verify()
    assert str(raised.value) == (
        f"{prefix(ALL_AT_ONCE)}: A processor offered 3 after the outbox refused 2: "
        "it must offer the refused item again first"
    )


def test_processor_that_drops_the_last_refused_item_fails_when_done():
    class DropsInComplete(AbstractProcessor):
        def complete(self):
            self.tryEmit("a")
            self.tryEmit("b")
            return True

    with pytest.raises(AssertionError) as raised:
        verifyProcessor(DropsInComplete).expectOutput(["a", "b"]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: complete() returned True while the outbox held an item it "
        "had refused: the processor must offer that item again until it is accepted"
    )


def test_outbox_full_on_alternate_calls_catches_what_capacity_one_misses():
    class HeaderOnce(AbstractProcessor):
        """Emits a header before its first item, ignoring a refusal of the header."""

        started = False

        def tryProcess0(self, item):
            if not self.started:
                self.started = True
                self.tryEmit("header")
            return self.tryEmit(item)

    with pytest.raises(AssertionError) as raised:
        verifyProcessor(HeaderOnce).input([1, 2]).expectOutput(["header", 1, 2]).verify()
    assert str(raised.value).startswith(f"{prefix(ONE_BY_ONE_FULL)}: A processor offered 1")


@pytest.mark.parametrize("method", ["complete", "completeEdge"])
def test_returning_false_without_emitting_fails(method):
    class NotYet(AbstractProcessor):
        calls = 0

        def tryProcess0(self, item):
            return True

        def notYet(self, *ordinal):
            self.calls += 1
            return self.calls > 3

    setattr(NotYet, method, NotYet.notYet)
    name = "complete()" if method == "complete" else "completeEdge(0)"
    with pytest.raises(AssertionError) as raised:
        verifyProcessor(NotYet).input([1]).expectOutput([]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: {name} returned False but emitted nothing although the "
        "outbox had room"
    )


def test_idle_hook_returning_false_without_emitting_fails():
    class Idle(Doubler):
        def tryProcess(self, ordinal=None, item=None):
            return False if ordinal is None else super().tryProcess(ordinal, item)

    with pytest.raises(AssertionError, match=r"tryProcess\(\) returned False but emitted"):
        verifyProcessor(Idle).input([1]).expectOutput([2]).verify()


def test_emitting_to_a_missing_ordinal_fails_naming_the_mode():
    with pytest.raises(AssertionError) as raised:
        verifyProcessor(Splitter).input([1]).expectOutput([]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: Outbox has no bucket at ordinal 1: the vertex has 1 "
        "outbound edge(s)"
    )


def test_mutating_received_items_fails():
    class Appender(AbstractProcessor):
        def tryProcess0(self, item):
            item.append("x")
            return self.tryEmit(len(item))

    with pytest.raises(AssertionError) as raised:
        verifyProcessor(Appender).input([[1]]).expectOutput([2]).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: the processor changed the items it received; it must not "
        "mutate them:\n--- before\n+++ after\n@@ -1 +1 @@\n-[1]\n+[1, 'x']"
    )


def test_close_is_called_when_an_assertion_fails():
    closed = []

    class ClosingStuck(Stuck):
        def close(self):
            closed.append(True)

    with pytest.raises(AssertionError):
        verifyProcessor(ClosingStuck).input([1]).expectOutput([]).verify()
    assert closed == [True]


def test_a_processor_error_propagates_with_a_note_naming_the_mode():
    class Failing(AbstractProcessor):
        def tryProcess0(self, item):
            raise UserFunctionError("v", repr(item), ValueError("no"))

    with pytest.raises(UserFunctionError) as raised:
        verifyProcessor(Failing).input([1]).expectOutput([]).verify()
    assert raised.value.__notes__ == [f"raised in {prefix(ONE_BY_ONE)}"]


# Non-cooperative processors


class Ignoring(Processor):
    """Forwards every item, ignoring what offer() returns: fine only with an unbounded outbox."""

    def __init__(self, cooperative):
        self.cooperative = cooperative

    def init(self, outbox, context):
        self.outbox = outbox

    def isCooperative(self):
        return self.cooperative

    def process(self, ordinal, inbox):
        inbox.drain(self.outbox.offer)


def test_non_cooperative_processor_gets_an_unbounded_outbox():
    verifyProcessor(lambda: Ignoring(False)).input([1, 2, 3]).expectOutput([1, 2, 3]).disableSnapshots().verify()


def test_cooperative_processor_ignoring_refusals_fails():
    with pytest.raises(AssertionError, match="must offer the refused item again"):
        verifyProcessor(lambda: Ignoring(True)).input([1, 2, 3]).expectOutput([1, 2, 3]).verify()


def test_non_cooperative_processor_runs_in_two_modes():
    made = []

    def supplier():
        made.append(Ignoring(False))
        return made[-1]

    verifyProcessor(supplier).input([1]).expectOutput([1]).disableSnapshots().verify()
    assert len(made) == 2


def test_non_cooperative_mode_is_named_on_failure():
    with pytest.raises(AssertionError, match=r"mode='inbox one-by-one, outbox unbounded'"):
        verifyProcessor(lambda: Ignoring(False)).input([1]).expectOutput([2]).verify()


# Several ordinals, priorities, contexts


class Tagging(AbstractProcessor):
    """Emits (ordinal, item) for every item and ("done", ordinal) at the end of each edge."""

    def tryProcess(self, ordinal=None, item=None):
        return True if ordinal is None else self.tryEmit((ordinal, item))

    def completeEdge(self, ordinal):
        return self.tryEmit(("done", ordinal))


def test_inputs_are_consumed_in_priority_order_each_edge_completed():
    expected = [(1, "b"), (1, "c"), ("done", 1), (0, "a"), ("done", 0), (2, "d"), ("done", 2)]
    (
        verifyProcessor(Tagging)
        .inputs([["a"], ["b", "c"], ["d"]], priorities=[0, -1, 0])
        .expectOutput(expected)
        .verify()
    )


def test_inputs_without_priorities_go_in_ordinal_order():
    expected = [(0, "a"), ("done", 0), (1, "b"), ("done", 1)]
    verifyProcessor(Tagging).inputs([["a"], ["b"]]).expectOutput(expected).verify()


def test_inputs_need_one_priority_per_list():
    with pytest.raises(ValueError) as raised:
        verifyProcessor(Tagging).inputs([[1], [2]], priorities=[0])
    assert str(raised.value) == (
        "verifyProcessor: inputs() got 2 input list(s) but 1 priorities; give one priority "
        "per input list"
    )


class Splitter(AbstractProcessor):
    """Sends even items to ordinal 0, odd ones to ordinal 1, and everything to both at the end."""

    def tryProcess0(self, item):
        return self.tryEmit(item, item % 2)

    def complete(self):
        return self.tryEmit("end")


def test_several_output_ordinals():
    expected = [[0, 2, "end"], [1, 3, "end"]]
    verifyProcessor(Splitter).input(range(4)).expectOutputs(expected).verify()


def test_mismatch_names_the_output_ordinal():
    with pytest.raises(AssertionError, match=r"output of ordinal 1 differs:"):
        verifyProcessor(Splitter).input(range(4)).expectOutputs([[0, 2, "end"], [1]]).verify()


def test_context_reaches_the_processor():
    class Where(AbstractProcessor):
        def complete(self):
            context = self.context
            return self.tryEmit((context.vertexName, context.globalProcessorIndex))

    context = ProcessorContext("tokenize", 2, 4)
    verifyProcessor(Where).context(context).expectOutput([("tokenize", 2)]).verify()


def test_default_context():
    class Where(AbstractProcessor):
        def complete(self):
            return self.tryEmit(self.context)

    verifyProcessor(Where).expectOutput([ProcessorContext("testVertex", 0, 1)]).verify()


# Output checkers and builders


def test_output_checker_replaces_equality():
    class Reversing(Counting):
        def complete(self):
            if self.output is None:
                self.output = iter(range(self.count, 0, -1))
            return self.emitFromTraverser(self.output)

    test = verifyProcessor(Reversing).input("abc").expectOutput([1, 2, 3]).disableSnapshots()
    test.outputChecker(sameItemsAnyOrder).verify()
    with pytest.raises(AssertionError, match="output of ordinal 0 differs"):
        test.verify()


def test_rejecting_output_checker_still_shows_the_diff():
    test = verifyProcessor(Doubler).input([1]).expectOutput([2])
    with pytest.raises(AssertionError) as raised:
        test.outputChecker(lambda expected, actual: False).verify()
    assert str(raised.value) == (
        f"{prefix(ONE_BY_ONE)}: output of ordinal 0 differs:\n"
        "(the items' reprs are equal; the output checker rejected them)"
    )


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ([1, 2, 2], [2, 1, 2], True),
        ([1, 2, 2], [1, 2], False),
        ([1, 2], [1, 2, 2], False),
        ([[1], {"a": 1}], [{"a": 1}, [1]], True),
        ([], [], True),
    ],
)
def test_same_items_any_order(expected, actual, same):
    assert sameItemsAnyOrder(expected, actual) is same


def test_builders_return_new_values():
    base = verifyProcessor(Doubler)
    withInput = base.input([1])
    assert base.inputLists == () and withInput.inputLists == ((1,),)
    assert withInput.expectOutput([2]).expectedOutputs == ((2,),)
    assert withInput.expectedOutputs == ()


def test_inputs_are_kept_so_generators_feed_every_mode():
    verifyProcessor(Doubler).input(n for n in [1, 2]).expectOutput(n for n in [2, 4]).verify()
