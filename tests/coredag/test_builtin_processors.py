"""Every built-in processor passes verifyProcessor, and its fast path gives the same output."""

import logging
from collections import Counter

import pytest

from sparkjet.coredag import AggregateOperation, ProcessorContext
from sparkjet.coredag.api.testing import verifyProcessor
from sparkjet.coredag.processors.aggregation import (
    AccumulateByKeyP,
    AccumulateP,
    AggregateByKeyP,
    AggregateP,
    CombineByKeyP,
    CombineP,
)
from sparkjet.coredag.processors.sinks import FilesSinkP, ListSinkP, LoggerSinkP
from sparkjet.coredag.processors.sources import ItemsP, ReadFilesP
from sparkjet.coredag.processors.stateless import StatelessChainP, StatelessStep, StepKind

CONTEXT = ProcessorContext("v", 0, 1)
WORDS = "the cat and the hat and the bat sat".split()
COUNTING = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda acc, item: acc + 1,
    combineFn=lambda left, right: left + right,
)
TENFOLD = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda acc, item: acc + item,
    combineFn=lambda left, right: left + right,
    finishFn=lambda acc: acc * 10,
)
TO_NONE = AggregateOperation(
    createFn=lambda: 0,
    accumulateFn=lambda acc, item: acc + 1,
    combineFn=lambda left, right: left + right,
    finishFn=lambda acc: None,
)
LISTING = AggregateOperation(
    createFn=list,
    accumulateFn=lambda acc, item: acc + [item],
    combineFn=lambda left, right: left.extend(right) or left,
)


def verifyTransform(supplier, items, expected, context=CONTEXT):
    """verifyProcessor in every mode and the fast path both turn ``items`` into ``expected`` (no
    snapshot modes: a batch processor keeps no state across a snapshot, as Jet's tests say)."""
    verifyProcessor(supplier).disableSnapshots().context(context).input(items).expectOutput(expected).verify()
    assert list(supplier.fastPath(context)(iter(items))) == expected


def verifySource(supplier, expected, context=CONTEXT):
    """A source (no inbound edge) emits ``expected`` in every mode and on the fast path."""
    verifyProcessor(supplier).disableSnapshots().context(context).expectOutput(expected).verify()
    assert list(supplier.fastPath(context)(iter(()))) == expected


# StatelessChainP


def step(kind, fn, name="s"):
    """A StatelessStep."""
    return StatelessStep(kind, fn, name)


def test_map_filter_flat_map_chain():
    chain = StatelessChainP(
        (
            step(StepKind.MAP, lambda n: n * 10),
            step(StepKind.FILTER, lambda n: n != 30),
            step(StepKind.FLAT_MAP, lambda n: [n] * (n // 10)),
        )
    )
    verifyTransform(chain, [1, 2, 3, 4], [10, 20, 20, 40, 40, 40, 40])


def test_map_returning_none_drops_the_item():
    chain = StatelessChainP((step(StepKind.MAP, lambda n: None if n % 2 else n),))
    verifyTransform(chain, range(7), [0, 2, 4, 6])


def test_flat_map_to_nothing_and_to_none_items():
    chain = StatelessChainP((step(StepKind.FLAT_MAP, lambda n: [None] * n),))
    verifyTransform(chain, [0, 2, 0, 1], [None, None, None])


def test_empty_chain_is_the_identity():
    verifyTransform(StatelessChainP(()), ["a", None, "b"], ["a", None, "b"])


def test_chain_over_no_items():
    verifyTransform(StatelessChainP((step(StepKind.MAP, str),)), [], [])


# Keyed aggregation: keys come out in order of first appearance, as Counter keeps them


def test_accumulate_by_key_emits_key_and_accumulator():
    expected = list(Counter(WORDS).items())
    verifyTransform(AccumulateByKeyP(lambda w: w, COUNTING, "agg-prepare"), WORDS, expected)


def test_combine_by_key_combines_and_finishes():
    entries = [("a", 1), ("b", 2), ("a", 3), ("c", 0), ("b", 5)]
    expected = [("a", 40), ("b", 70), ("c", 0)]
    verifyTransform(CombineByKeyP(TENFOLD, "agg"), entries, expected)


def test_combine_by_key_does_not_mutate_the_accumulators_it_receives():
    entries = [("a", [1]), ("b", [2]), ("a", [3])]
    verifyTransform(CombineByKeyP(LISTING, "agg"), entries, [("a", [1, 3]), ("b", [2])])


def test_aggregate_by_key_emits_key_and_result():
    keyFn = str.upper
    expected = [(key, count * 10) for key, count in Counter(map(keyFn, WORDS)).items()]
    op = AggregateOperation(lambda: 0, lambda acc, item: acc + 1, finishFn=lambda acc: acc * 10)
    verifyTransform(AggregateByKeyP(keyFn, op, "agg"), WORDS, expected)


@pytest.mark.parametrize(
    "supplier",
    [
        AccumulateByKeyP(len, COUNTING, "agg-prepare"),
        CombineByKeyP(COUNTING, "agg"),
        AggregateByKeyP(len, COUNTING, "agg"),
    ],
)
def test_keyed_aggregation_of_nothing_emits_nothing(supplier):
    verifyTransform(supplier, [], [])


def test_keyed_accumulators_may_be_mutable():
    expected = [(3, ["the", "cat", "and"]), (1, ["a"])]
    supplier = AggregateByKeyP(len, LISTING, "agg")
    verifyTransform(supplier, ["the", "cat", "a", "and"], expected)


# Global aggregation: empty input still gives finish(create()), unless it is None


def test_accumulate_emits_the_accumulator():
    verifyTransform(AccumulateP(COUNTING, "agg-prepare"), WORDS, [len(WORDS)])


def test_combine_combines_and_finishes():
    verifyTransform(CombineP(TENFOLD, "agg"), [1, 2, 3], [60])


def test_combine_of_mutable_accumulators_leaves_them_alone():
    verifyTransform(CombineP(LISTING, "agg"), [[1], [2, 3]], [[1, 2, 3]])


def test_aggregate_emits_the_result():
    verifyTransform(AggregateP(TENFOLD, "agg"), [1, 2, 3], [60])


@pytest.mark.parametrize(
    ("supplier", "expected"),
    [
        (AccumulateP(COUNTING, "agg-prepare"), [0]),
        (CombineP(TENFOLD, "agg"), [0]),
        (AggregateP(TENFOLD, "agg"), [0]),
        (AggregateP(LISTING, "agg"), [[]]),
    ],
)
def test_global_aggregation_of_nothing_emits_finish_of_create(supplier, expected):
    verifyTransform(supplier, [], expected)


@pytest.mark.parametrize("supplier", [CombineP(TO_NONE, "agg"), AggregateP(TO_NONE, "agg")])
@pytest.mark.parametrize("items", [[], [1, 2]])
def test_global_result_none_emits_nothing(supplier, items):
    verifyTransform(supplier, items, [])


# Sources


def test_items_on_one_processor_emits_every_item():
    verifySource(ItemsP(("a", None, "b")), ["a", None, "b"])


@pytest.mark.parametrize("index", range(3))
def test_items_processor_i_of_n_emits_items_i_plus_multiples_of_n(index):
    items = tuple(range(10))
    expected = [item for item in items if item % 3 == index]
    verifySource(ItemsP(items), expected, ProcessorContext("items", index, 3))


def test_items_more_processors_than_items():
    verifySource(ItemsP(("a",)), [], ProcessorContext("items", 1, 2))


FILES = {"a.txt": "alpha\nbeta\r\n\ngamma\n", "b.txt": "delta\nepsilon"}
LINES = ["alpha", "beta", "", "gamma", "delta", "epsilon"]


@pytest.fixture
def directory(tmp_path):
    """A directory holding FILES."""
    for name, text in FILES.items():
        (tmp_path / name).write_bytes(text.encode())
    return str(tmp_path)


def test_read_files_on_one_processor_reads_every_line(directory):
    verifySource(ReadFilesP(directory), LINES)


def test_read_files_glob(directory):
    verifySource(ReadFilesP(directory, glob="b.*"), ["delta", "epsilon"])


@pytest.mark.parametrize("count", [2, 3, 7])
def test_read_files_processors_read_every_line_once(directory, count):
    source = ReadFilesP(directory)
    contexts = [ProcessorContext("read", index, count) for index in range(count)]
    shares = [list(source.fastPath(context)(iter(()))) for context in contexts]
    for context, share in zip(contexts, shares):
        verifySource(source, share, context)
    assert Counter(line for share in shares for line in share) == Counter(LINES)


# Sinks: bucket 0 is the terminal output


def test_list_sink_forwards_every_item():
    verifyTransform(ListSinkP("out"), ["a", None, ("k", 1)], ["a", None, ("k", 1)])


def test_files_sink_forwards_each_items_line():
    verifyTransform(FilesSinkP("/unused"), ["a", None, ("k", 1), 2], ["a", "None", "('k', 1)", "2"])


def test_logger_sink_logs_every_item_and_emits_nothing(caplog):
    caplog.set_level(logging.INFO, logger="sparkjet")
    items = ["a", None, ("k", 1)]
    verifyProcessor(LoggerSinkP()).context(CONTEXT).input(items).expectOutputs([]).verify()
    runs = loggedRuns(caplog, "sparkjet.v#0", len(items))
    assert runs and all(run == ["a", "None", "('k', 1)"] for run in runs)


def test_logger_sink_fast_path_logs_every_item_and_emits_nothing(caplog):
    caplog.set_level(logging.INFO, logger="sparkjet")
    assert list(LoggerSinkP().fastPath(CONTEXT)(iter(["a", 1]))) == []
    assert loggedRuns(caplog, "sparkjet.v#0", 2) == [["a", "1"]]


def loggedRuns(caplog, loggerName: str, size: int) -> list[list[str]]:
    """The messages ``loggerName`` logged, cut into runs of ``size``: one per processor run."""
    messages = [record.getMessage() for record in caplog.records if record.name == loggerName]
    return [messages[start : start + size] for start in range(0, len(messages), size)]
