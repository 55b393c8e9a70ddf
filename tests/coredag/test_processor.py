"""The Processor API of seed 003: Inbox, Outbox, AbstractProcessor and the context."""

import pytest

from sparkjet.coredag import AbstractProcessor, Inbox, Outbox, ProcessorContext, ProcessorContractError

# Inbox


def test_inbox_peek_poll_remove():
    inbox = Inbox(["a", "b", "c"])
    assert inbox.peek() == "a"
    assert inbox.size() == len(inbox) == 3
    assert inbox.poll() == "a"
    assert inbox.remove() == "b"
    assert list(inbox) == ["c"]


def test_empty_inbox_peek_and_poll_return_none_remove_raises():
    inbox = Inbox()
    assert inbox.isEmpty()
    assert inbox.peek() is None
    assert inbox.poll() is None
    with pytest.raises(IndexError):
        inbox.remove()


def test_inbox_drain_passes_every_item_in_order_and_empties():
    inbox = Inbox([1, 2, 3])
    seen = []
    assert inbox.drain(seen.append) == 3
    assert seen == [1, 2, 3]
    assert inbox.isEmpty()


def test_inbox_drain_to_appends_to_target():
    inbox = Inbox([2, 3])
    target = [1]
    assert inbox.drainTo(target) == 2
    assert target == [1, 2, 3]
    assert inbox.size() == 0


def test_inbox_add_and_clear():
    inbox = Inbox()
    inbox.add("x")
    inbox.add("y")
    assert list(inbox) == ["x", "y"]
    inbox.clear()
    assert inbox.isEmpty()


# Outbox


def test_outbox_refuses_beyond_capacity():
    outbox = Outbox(1, 2)
    assert outbox.offer("a") and outbox.offer("b")
    assert not outbox.offer("c")
    assert outbox.hasUnfinishedItem()
    assert outbox.drainBucket(0) == ["a", "b"]
    assert outbox.offer("c")
    assert not outbox.hasUnfinishedItem()
    assert outbox.drainBucket(0) == ["c"]


def test_outbox_requires_the_refused_item_again():
    outbox = Outbox(1, 1)
    outbox.offer("a")
    assert not outbox.offer("b")
    outbox.drainBucket(0)
    with pytest.raises(ProcessorContractError) as raised:
        outbox.offer("c")
    assert str(raised.value) == (
        "A processor offered 'c' after the outbox refused 'b': "
        "it must offer the refused item again first"
    )


def test_outbox_requires_the_refused_item_again_on_the_same_ordinal():
    outbox = Outbox(2, 1)
    outbox.offer("a", 0)
    assert not outbox.offer("b", 0)
    outbox.drainBucket(0)
    with pytest.raises(ProcessorContractError, match="it must offer the refused item again first"):
        outbox.offer("b", 1)


def test_outbox_offer_to_all_buckets_after_partial_acceptance_does_not_duplicate():
    outbox = Outbox(3, 1)
    outbox.offer("full", 1)
    assert not outbox.offer("x")
    assert outbox.drainBucket(1) == ["full"]
    assert outbox.offer("x")
    assert [outbox.drainBucket(ordinal) for ordinal in range(3)] == [["x"], ["x"], ["x"]]


def test_outbox_offer_to_all_buckets_reaches_each_bucket_once():
    outbox = Outbox(2, 10)
    assert outbox.offer("x") and outbox.offer("y")
    assert [outbox.drainBucket(0), outbox.drainBucket(1)] == [["x", "y"], ["x", "y"]]


def test_outbox_offer_to_several_ordinals_reaches_just_those():
    """Jet's ``tryEmit(int[] ordinals, item)``."""
    outbox = Outbox(3, 10)
    assert outbox.offer("x", (0, 2))
    assert [outbox.drainBucket(ordinal) for ordinal in range(3)] == [["x"], [], ["x"]]


def test_outbox_offer_to_several_ordinals_after_partial_acceptance_does_not_duplicate():
    outbox = Outbox(3, 1)
    outbox.offer("full", 2)
    assert not outbox.offer("x", [0, 2])
    with pytest.raises(ProcessorContractError, match="it must offer the refused item again first"):
        outbox.offer("x", [0, 1])
    assert outbox.drainBucket(2) == ["full"]
    assert outbox.offer("x", [0, 2])
    assert [outbox.drainBucket(ordinal) for ordinal in range(3)] == [["x"], [], ["x"]]


def test_try_emit_to_several_ordinals():
    class Twice(AbstractProcessor):
        def tryProcess0(self, item) -> bool:
            return self.tryEmit(item, (0, 1))

    outbox = Outbox(2, 10)
    processor = Twice()
    processor.init(outbox, ProcessorContext("twice", 0, 1))
    assert processor.tryProcess0("y")
    assert [outbox.drainBucket(0), outbox.drainBucket(1)] == [["y"], ["y"]]


def test_outbox_without_capacity_never_refuses():
    outbox = Outbox(1, None)
    assert all(outbox.offer(i) for i in range(10_000))
    assert outbox.drainBucket(0) == list(range(10_000))


@pytest.mark.parametrize("ordinal", [2, 5, -2])
def test_outbox_rejects_an_ordinal_without_bucket(ordinal):
    outbox = Outbox(2, 4)
    with pytest.raises(ProcessorContractError) as raised:
        outbox.offer("x", ordinal)
    assert str(raised.value) == (
        f"Outbox has no bucket at ordinal {ordinal}: the vertex has 2 outbound edge(s)"
    )


def test_outbox_is_empty_until_offered():
    outbox = Outbox(2, 4)
    assert outbox.isEmpty() and outbox.bucketCount() == 2
    outbox.offer("x", 1)
    assert not outbox.isEmpty()


# AbstractProcessor


CONTEXT = ProcessorContext("v", 0, 1)


def initialized(processor, outbox=None):
    """Return ``processor`` after init with ``outbox`` (default: one bucket, no capacity)."""
    processor.init(outbox or Outbox(1, None), CONTEXT)
    return processor


class Recorder(AbstractProcessor):
    """Records which tryProcessN got which item."""

    def __init__(self):
        self.seen = []

    def tryProcess0(self, item):
        self.seen.append((0, item))
        return True

    def tryProcess1(self, item):
        self.seen.append((1, item))
        return True

    def tryProcess2(self, item):
        self.seen.append((2, item))
        return True

    def tryProcess3(self, item):
        self.seen.append((3, item))
        return True

    def tryProcess4(self, item):
        self.seen.append((4, item))
        return True


@pytest.mark.parametrize("ordinal", range(5))
def test_process_dispatches_to_try_process_of_the_ordinal(ordinal):
    processor = initialized(Recorder())
    inbox = Inbox(["x", "y"])
    processor.process(ordinal, inbox)
    assert processor.seen == [(ordinal, "x"), (ordinal, "y")]
    assert inbox.isEmpty()


def test_ordinal_above_four_needs_an_override():
    with pytest.raises(ProcessorContractError) as raised:
        initialized(Recorder()).process(5, Inbox(["x"]))
    assert str(raised.value) == (
        "Recorder got an item on ordinal 5 but does not implement tryProcess(ordinal, item)"
    )


def test_missing_try_process_n_is_named():
    class OnlyZero(AbstractProcessor):
        def tryProcess0(self, item):
            return True

    with pytest.raises(ProcessorContractError) as raised:
        initialized(OnlyZero()).process(1, Inbox(["x"]))
    assert str(raised.value) == (
        "OnlyZero got an item on ordinal 1 but implements neither tryProcess1(item) nor "
        "tryProcess(ordinal, item)"
    )


class ZeroAndGeneric(AbstractProcessor):
    """Overrides ``tryProcess0`` and ``tryProcess(ordinal, item)``, as in Jet's javadoc."""

    def __init__(self):
        self.seen = []

    def tryProcess0(self, item):
        self.seen.append(("tryProcess0", item))
        return True

    def tryProcess(self, ordinal, item):
        self.seen.append((f"tryProcess({ordinal})", item))
        return True


def test_a_try_process_n_override_wins_over_the_generic_one():
    """Jet: ``process(0, inbox)`` goes to ``tryProcess0``, which the processor overrides; the
    other ordinals go through the default ``tryProcessN`` to ``tryProcess(ordinal, item)``."""
    processor = initialized(ZeroAndGeneric())
    for ordinal in (0, 1, 4, 7):
        processor.process(ordinal, Inbox([ordinal * 10]))
    assert processor.seen == [
        ("tryProcess0", 0), ("tryProcess(1)", 10), ("tryProcess(4)", 40), ("tryProcess(7)", 70),
    ]


class GenericOnly(AbstractProcessor):
    """Overrides ``tryProcess(ordinal, item)`` alone."""

    def tryProcess(self, ordinal, item):
        return f"handled {ordinal}:{item}"


@pytest.mark.parametrize("ordinal", range(5))
def test_a_default_try_process_n_delegates_to_the_generic_one(ordinal):
    """Jet: each default ``tryProcessN(item)`` returns ``tryProcess(N, item)``."""
    processor = initialized(GenericOnly())
    assert getattr(processor, f"tryProcess{ordinal}")("x") == f"handled {ordinal}:x"


def test_the_generic_override_alone_gets_every_ordinal():
    class Generic(AbstractProcessor):
        def __init__(self):
            self.seen = []

        def tryProcess(self, ordinal, item):
            self.seen.append((ordinal, item))
            return True

    processor = initialized(Generic())
    for ordinal in (0, 3, 5):
        processor.process(ordinal, Inbox(["a"]))
    assert processor.seen == [(0, "a"), (3, "a"), (5, "a")]


def test_try_process_without_arguments_is_the_idle_hook_returning_true():
    processor = initialized(Recorder())
    assert processor.tryProcess() is True
    assert processor.seen == []


class Forwarder(AbstractProcessor):
    """Emits every item of ordinal 0 unchanged."""

    def tryProcess0(self, item):
        return self.tryEmit(item)


def test_process_stops_at_first_refusal_leaving_the_item_in_the_inbox():
    outbox = Outbox(1, 1)
    processor = initialized(Forwarder(), outbox)
    inbox = Inbox([1, 2, 3])
    processor.process(0, inbox)
    assert outbox.drainBucket(0) == [1]
    assert list(inbox) == [2, 3]


def test_init_keeps_outbox_and_context_and_calls_on_init():
    class Remembering(AbstractProcessor):
        def onInit(self, context):
            self.initContext = context

    outbox = Outbox(1, 1)
    processor = Remembering()
    processor.init(outbox, CONTEXT)
    assert processor.outbox is outbox
    assert processor.context == processor.initContext == CONTEXT


def drive(emitOnce, outbox):
    """Call ``emitOnce`` until it returns True, draining bucket 0 between calls."""
    emitted, calls = [], 0
    while True:
        calls += 1
        done = emitOnce()
        emitted += outbox.drainBucket(0)
        if done:
            return emitted, calls


def test_emit_from_traverser_resumes_after_refusal_without_loss_or_duplicates():
    outbox = Outbox(1, 2)
    processor = initialized(Forwarder(), outbox)
    traverser = iter(range(7))
    emitted, calls = drive(lambda: processor.emitFromTraverser(traverser), outbox)
    assert emitted == list(range(7))
    assert calls == 4


def test_emit_from_traverser_emits_none_items():
    outbox = Outbox(1, 1)
    processor = initialized(Forwarder(), outbox)
    traverser = iter([None, 0, None])
    emitted, _ = drive(lambda: processor.emitFromTraverser(traverser), outbox)
    assert emitted == [None, 0, None]


def test_emit_from_traverser_to_one_ordinal():
    outbox = Outbox(2, None)
    processor = initialized(Forwarder(), outbox)
    assert processor.emitFromTraverser(iter("ab"), 1)
    assert (outbox.drainBucket(0), outbox.drainBucket(1)) == ([], ["a", "b"])


def test_flat_mapper_emits_every_result_through_a_small_outbox():
    class Repeater(AbstractProcessor):
        def __init__(self):
            self.flatMapper_ = self.flatMapper(lambda n: [n] * n)

        def tryProcess0(self, item):
            return self.flatMapper_.tryProcess(item)

    outbox = Outbox(1, 1)
    processor = initialized(Repeater(), outbox)
    inbox = Inbox([3, 0, 2])
    emitted = []
    while not inbox.isEmpty():
        processor.process(0, inbox)
        emitted += outbox.drainBucket(0)
    assert emitted == [3, 3, 3, 2, 2]


# ProcessorContext


def test_context_on_one_member_local_equals_global():
    context = ProcessorContext("v", 5, 8)
    assert (context.localParallelism, context.localProcessorIndex) == (8, 5)


def test_context_on_several_members():
    context = ProcessorContext("v", 5, 8, memberIndex=1, memberCount=2)
    assert (context.localParallelism, context.localProcessorIndex) == (4, 1)


def test_context_logger_names_vertex_and_index():
    assert ProcessorContext("tokenize", 3, 4).logger.name == "sparkjet.tokenize#3"
