"""The tasklet: the cooperative loop that drives a processor, and the standard fast paths."""

from collections import Counter

import attrs
import pytest

from sparkjet.coredag import AbstractProcessor, AggregateOperation, Processor, ProcessorContractError, UserFunctionError
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)
from sparkjet.coredag.processors.sinks import FilesSinkP, ListSinkP
from sparkjet.coredag.processors.sources import ItemsP, ReadFilesP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind
from sparkjet.coredag.runtime import tasklet
from sparkjet.coredag.runtime.physical_plan import Loop
from sparkjet.coredag.runtime.tasklet import TaskletSpec, runCooperatively, runPartition


def tagged(runs):
    """Turn ``[(ordinal, items), ...]`` into the ``(ordinal, item)`` stream a tasklet reads."""
    return [(ordinal, item) for ordinal, items in runs for item in items]


def spec(supplier, inbound=(0,), buckets=1, queueSize=1, outboxCapacity=1, parallelism=1):
    """Return a TaskletSpec for vertex 'v' with small queues by default."""
    return TaskletSpec(
        "v", supplier, parallelism, tuple(inbound), buckets, queueSize, outboxCapacity
    )


class Doubler(AbstractProcessor):
    """Emits twice each item."""

    def tryProcess0(self, item):
        return self.tryEmit(item * 2)


def test_custom_processor_output_with_capacity_one_and_queue_size_one():
    output = list(runPartition(spec(Doubler), 0, iter(range(10))))
    assert output == [i * 2 for i in range(10)]


def test_the_spec_runs_the_loop_its_physical_plan_chose():
    """Which loop a vertex runs is decided by the physical plan (see test_physical_plan.py)."""
    supplier = AggregateP(AggregateOperation(int, max), "max")
    assert not spec(supplier).usesFastPath()
    assert attrs.evolve(spec(supplier), loop=Loop.STANDARD).usesFastPath()


class Tracking(AbstractProcessor):
    """Records the calls it gets in a shared log; raises on item 'boom'."""

    def __init__(self, log):
        self.log = log

    def tryProcess0(self, item):
        if item == "boom":
            raise ValueError("cannot take boom")
        self.log.append(("item", item))
        return self.tryEmit(item)

    def close(self):
        self.log.append("close")


def test_close_is_called_after_a_normal_run():
    log = []
    assert list(runPartition(spec(lambda: Tracking(log)), 0, iter(["a"]))) == ["a"]
    assert log == [("item", "a"), "close"]


def test_close_is_called_when_process_raises():
    log = []
    with pytest.raises(UserFunctionError):
        list(runPartition(spec(lambda: Tracking(log)), 0, iter(["a", "boom", "c"])))
    assert log == [("item", "a"), "close"]


def test_raising_processor_is_wrapped_naming_the_vertex_and_item():
    with pytest.raises(UserFunctionError) as raised:
        list(runPartition(spec(lambda: Tracking([])), 0, iter(["a", "boom"])))
    assert str(raised.value) == "Stage 'v' failed on item 'boom': ValueError: cannot take boom"
    assert isinstance(raised.value.__cause__, ValueError)
    assert raised.value.stageName == "v"


def test_raising_processor_names_the_failing_item_when_the_inbox_holds_several():
    batched = spec(lambda: Tracking([]), queueSize=10, outboxCapacity=10)
    with pytest.raises(UserFunctionError) as raised:
        list(runPartition(batched, 0, iter(["a", "boom"])))
    assert "failed on item 'boom'" in str(raised.value)


class SlowFinisher(AbstractProcessor):
    """completeEdge returns False twice, complete three times; the calls are logged."""

    def __init__(self, log):
        self.log = log

    def tryProcess0(self, item):
        return True

    def tryProcess1(self, item):
        return True

    def completeEdge(self, ordinal):
        self.log.append(f"completeEdge({ordinal})")
        return self.log.count(f"completeEdge({ordinal})") > 2

    def complete(self):
        self.log.append("complete")
        return self.log.count("complete") > 3


def test_complete_edge_and_complete_are_called_again_while_they_return_false():
    log = []
    list(runPartition(spec(lambda: SlowFinisher(log)), 0, iter([1, 2])))
    assert log == ["completeEdge(0)"] * 3 + ["complete"] * 4


def test_complete_edge_is_called_for_an_inbound_ordinal_without_items():
    log = []
    twoInputs = spec(lambda: SlowFinisher(log), inbound=(0, 1))
    list(runCooperatively(twoInputs, twoInputs.context(0), tagged([(0, [1])])))
    assert log == ["completeEdge(0)"] * 3 + ["completeEdge(1)"] * 3 + ["complete"] * 4


class Tagger(AbstractProcessor):
    """Emits (ordinal, item) for items of ordinals 0 and 1."""

    def tryProcess0(self, item):
        return self.tryEmit(("left", item))

    def tryProcess1(self, item):
        return self.tryEmit(("right", item))


def test_run_cooperatively_feeds_each_inbound_ordinal_in_order():
    twoInputs = spec(Tagger, inbound=(0, 1))
    output = runCooperatively(twoInputs, twoInputs.context(0), tagged([(0, ["a", "b"]), (1, ["c"])]))
    assert [item for _, item in output] == [("left", "a"), ("left", "b"), ("right", "c")]


def test_run_partition_with_several_inbound_ordinals_takes_ordinal_item_pairs():
    pairs = iter([(0, "a"), (0, "b"), (1, "c"), (1, "d")])
    output = list(runPartition(spec(Tagger, inbound=(0, 1)), 0, pairs))
    assert output == [("left", "a"), ("left", "b"), ("right", "c"), ("right", "d")]


def test_run_partition_calls_complete_edge_after_each_ordinals_run():
    log = []
    pairs = iter([(0, 1), (0, 2), (1, 3)])
    list(runPartition(spec(lambda: SlowFinisher(log), inbound=(0, 1)), 0, pairs))
    assert log == ["completeEdge(0)"] * 3 + ["completeEdge(1)"] * 3 + ["complete"] * 4


def test_run_partition_with_several_buckets_yields_ordinal_item_pairs():
    class Splitter(AbstractProcessor):
        def tryProcess0(self, item):
            return self.tryEmit(item, item % 2)

    output = list(runPartition(spec(Splitter, buckets=2), 0, iter(range(5))))
    assert Counter(output) == Counter((i % 2, i) for i in range(5))


def test_non_cooperative_processor_gets_an_outbox_that_never_refuses():
    class Blocking(Processor):
        def init(self, outbox, context):
            self.outbox = outbox

        def isCooperative(self):
            return False

        def complete(self):
            return all(self.outbox.offer(i) for i in range(100))

    output = list(runPartition(spec(Blocking, inbound=()), 0, iter(())))
    assert output == list(range(100))


def test_processor_that_never_consumes_nor_emits_is_stopped(monkeypatch):
    monkeypatch.setattr(tasklet, "MAX_SECONDS_WITHOUT_PROGRESS", 0.05)

    class Stuck(AbstractProcessor):
        def tryProcess0(self, item):
            return False

    with pytest.raises(ProcessorContractError) as raised:
        list(runPartition(spec(Stuck), 0, iter([1])))
    assert str(raised.value) == (
        "The processor of vertex 'v' made no progress in 0.05 s of calls of process(): "
        "it must remove items from its inbox or emit to its outbox"
    )


def test_complete_returning_false_forever_is_stopped(monkeypatch):
    monkeypatch.setattr(tasklet, "MAX_SECONDS_WITHOUT_PROGRESS", 0.05)

    class Endless(AbstractProcessor):
        def complete(self):
            return False

    with pytest.raises(ProcessorContractError, match=r"made no progress in 0.05 s of calls of a method returning False"):
        list(runPartition(spec(Endless, inbound=()), 0, iter(())))


class Waiting(AbstractProcessor):
    """Jet's ListSource at a delay: ``complete()`` returns False, emitting nothing, until its
    ``calls`` have passed, then emits ``done``: a processor waiting on time, counted in calls."""

    def __init__(self, calls: int) -> None:
        self.calls, self.made = calls, 0

    def complete(self):
        self.made += 1
        return self.made > self.calls and self.tryEmit("done")


def test_a_processor_that_waits_is_idled_not_failed_however_many_calls_it_waits(monkeypatch):
    monkeypatch.setattr(tasklet, "sleep", lambda seconds: None)  # a quick wait through many calls
    source = spec(lambda: Waiting(200_000), inbound=())
    assert list(runPartition(source, 0, iter(()))) == ["done"]


def test_a_processor_that_waits_is_parked_with_jets_backoff(monkeypatch):
    parks = []
    monkeypatch.setattr(tasklet, "sleep", parks.append)
    source = spec(lambda: Waiting(tasklet.IDLE_SPINS + 13), inbound=())
    assert list(runPartition(source, 0, iter(()))) == ["done"]
    assert parks == [min(1e-6 * 2**n, 1e-3) for n in range(13)]


def test_complete_that_emits_on_every_call_is_progress(monkeypatch):
    parks = []
    monkeypatch.setattr(tasklet, "sleep", parks.append)
    source = spec(ItemsP(tuple(range(50))), inbound=())
    output = runCooperatively(source, source.context(0), tagged([]))
    assert [item for _, item in output] == list(range(50))
    assert parks == []


def test_overriding_the_idle_hook_keeps_item_dispatch():
    idleCalls = []

    class Idle(Doubler):
        def tryProcess(self):
            idleCalls.append(1)
            return True

    assert list(runPartition(spec(Idle), 0, iter([1, 2]))) == [2, 4]
    assert idleCalls


def test_overriding_try_process_with_ordinal_and_item_handles_any_ordinal():
    class AnyOrdinal(AbstractProcessor):
        def tryProcess(self, ordinal, item):
            return self.tryEmit((ordinal, item))

    sevenInputs = spec(AnyOrdinal, inbound=range(7))
    output = runCooperatively(sevenInputs, sevenInputs.context(0), tagged([(0, ["a"]), (6, ["b", "c"])]))
    assert [item for _, item in output] == [(0, "a"), (6, "b"), (6, "c")]


# Every standard supplier: the fast path and the cooperative loop agree.


COUNT = AggregateOperation(lambda: 0, lambda acc, item: acc + 1, lambda a, b: a + b)
WORDS = ["to", "be", "or", "not", "to", "be", "to"]
WORD_COUNTS = dict(Counter(WORDS))


def upperUnlessX(word):
    """Map a word to upper case; drop 'x' (a map returning None)."""
    return None if word == "x" else word.upper()


STANDARD_CASES = {
    "StatelessChainP": (
        StatelessChainP(
            (
                StatelessStep(StepKind.FLAT_MAP, str.split, "split"),
                StatelessStep(StepKind.MAP, upperUnlessX, "upper"),
                StatelessStep(StepKind.FILTER, lambda word: word != "B", "drop-b"),
            )
        ),
        ["a b x", "", "c a b", "x"],
        ["A", "C", "A"],
    ),
    "AccumulateByKeyP": (AccumulateByKeyP(str, COUNT, "count-prepare"), WORDS, WORD_COUNTS.items()),
    "CombineByKeyP": (
        CombineByKeyP(COUNT, "count"),
        [("to", 2), ("be", 1), ("to", 1), ("or", 4)],
        [("to", 3), ("be", 1), ("or", 4)],
    ),
    "AggregateByKeyP": (AggregateByKeyP(str, COUNT, "count"), WORDS, WORD_COUNTS.items()),
    "AccumulateP": (AccumulateP(COUNT, "total-prepare"), WORDS, [7]),
    "AccumulateP-empty": (AccumulateP(COUNT, "total-prepare"), [], [0]),
    "CombineP": (CombineP(COUNT, "total"), [3, 0, 4], [7]),
    "AggregateP": (AggregateP(COUNT, "total"), WORDS, [7]),
    "AggregateP-empty": (AggregateP(COUNT, "total"), [], [0]),
    "ListSinkP": (ListSinkP("out"), [1, "a", None, (2, 3)], [1, "a", None, (2, 3)]),
    "FilesSinkP": (
        FilesSinkP("/nonexistent/out"),
        [1, "a", None, (2, 3)],
        ["1", "a", "None", "(2, 3)"],
    ),
}


def bothPaths(supplier, items, inbound=(0,), index=0, parallelism=1):
    """Return the outputs of the fast path and of the cooperative loop (capacity 1)."""
    tasklet_ = spec(supplier, inbound=inbound, parallelism=parallelism)
    context = tasklet_.context(index)
    fast = list(supplier.fastPath(context)(iter(items)))
    inputs = [(0, list(items))] if inbound else []
    cooperative = [item for _, item in runCooperatively(tasklet_, context, tagged(inputs))]
    return fast, cooperative


@pytest.mark.parametrize(
    ("supplier", "items", "expected"), STANDARD_CASES.values(), ids=STANDARD_CASES.keys()
)
def test_fast_path_and_cooperative_loop_give_the_same_output(supplier, items, expected):
    fast, cooperative = bothPaths(supplier, items)
    assert Counter(fast) == Counter(cooperative) == Counter(expected)


@pytest.mark.parametrize("name", ["AccumulateByKeyP", "CombineByKeyP", "AggregateByKeyP"])
def test_keyed_fast_path_and_cooperative_loop_give_the_same_dict(name):
    supplier, items, expected = STANDARD_CASES[name]
    fast, cooperative = bothPaths(supplier, items)
    assert dict(fast) == dict(cooperative) == dict(expected)


@pytest.mark.parametrize("index", range(3))
def test_items_source_fast_path_and_cooperative_loop_give_the_same_share(index):
    source = ItemsP(tuple(range(10)))
    fast, cooperative = bothPaths(source, (), inbound=(), index=index, parallelism=3)
    assert Counter(fast) == Counter(cooperative) == Counter(range(index, 10, 3))


def test_read_files_fast_path_and_cooperative_loop_give_the_same_lines(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\r\nthree\n")
    (tmp_path / "b.txt").write_bytes(b"four\n\nfive")
    lines = Counter()
    for index in range(2):
        source = ReadFilesP(str(tmp_path))
        fast, cooperative = bothPaths(source, (), inbound=(), index=index, parallelism=2)
        assert Counter(fast) == Counter(cooperative)
        lines += Counter(fast)
    assert lines == Counter(["one", "two", "three", "four", "", "five"])


def test_stateless_chain_names_the_failing_stage_on_both_paths():
    chain = StatelessChainP(
        (
            StatelessStep(StepKind.MAP, str.strip, "strip"),
            StatelessStep(StepKind.MAP, int, "parse"),
        )
    )
    items = [" 1", "x "]
    chainSpec = spec(chain)
    for run in (
        lambda: list(chain.fastPath(chainSpec.context(0))(iter(items))),
        lambda: list(runCooperatively(chainSpec, chainSpec.context(0), tagged([(0, items)]))),
    ):
        with pytest.raises(UserFunctionError) as raised:
            run()
        assert str(raised.value) == "Stage 'parse' failed on item 'x': ValueError: " + (
            "invalid literal for int() with base 10: 'x'"
        )
