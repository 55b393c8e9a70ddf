"""Tutorial 02 builds the word-count Core DAG by hand: its Tokenizer, its DAG, its counts."""

import re
import runpy

import pytest

from sparkjet.coredag import Inbox, Outbox, ProcessorContext, ProcessorContractError, RoutingPolicy
from sparkjet.coredag.api.testing import verifyProcessor
from tests.conftest import PROJECT, tokenize

TUTORIALS = PROJECT / "tutorials"
SCRIPT = TUTORIALS / "02_core_dag_word_count.py"
LINES = [
    "To be, or not to be: that is the question:",
    "",
    "  -- !! --  ",
    "Whether 'tis nobler in the mind to suffer",
]


@pytest.fixture(scope="module")
def tutorial() -> dict:
    """The tutorial script's globals; running it this way starts nothing."""
    return runpy.run_path(str(SCRIPT))


def startedTokenizer(tutorial: dict, capacity: int):
    """Return a Tokenizer initialized with an outbox of one bucket of ``capacity``, and it."""
    processor = tutorial["Tokenizer"]()
    outbox = Outbox(1, capacity)
    processor.init(outbox, ProcessorContext("tokenize", 0, 1))
    return processor, outbox


# The Tokenizer, driven by hand as the engine would (no Spark)


def test_tokenizer_emits_one_word_per_call_into_an_outbox_of_capacity_1(tutorial):
    processor, outbox = startedTokenizer(tutorial, capacity=1)
    inbox = Inbox(LINES)
    emitted, calls = [], 0
    while not inbox.isEmpty():
        before = inbox.size()
        processor.process(0, inbox)
        calls += 1
        drained = outbox.drainBucket(0)
        assert len(drained) <= 1
        assert drained or inbox.size() < before, f"no progress in call {calls}"
        emitted += drained
    expected = [word for line in LINES for word in tokenize(line)]
    assert emitted == expected
    assert calls == len(expected)
    assert processor.complete() and outbox.isEmpty()


def test_tokenizer_keeps_the_line_and_offers_the_refused_word_again(tutorial):
    processor, outbox = startedTokenizer(tutorial, capacity=1)
    inbox = Inbox(LINES[:1])
    processor.process(0, inbox)
    assert inbox.peek() == LINES[0], "the line must stay in the inbox until all its words are out"
    assert outbox.hasUnfinishedItem()
    processor.process(0, inbox)  # the outbox is still full: "be" is refused again, no error
    assert outbox.drainBucket(0) == ["to"]
    processor.process(0, inbox)
    assert outbox.drainBucket(0) == ["be"]
    assert inbox.size() == 1


def test_outbox_rejects_a_processor_that_does_not_offer_again(tutorial):
    processor, outbox = startedTokenizer(tutorial, capacity=1)
    processor.process(0, Inbox(["one two"]))
    outbox.drainBucket(0)
    with pytest.raises(ProcessorContractError, match="it must offer the refused item again first"):
        outbox.offer("three")


def test_tokenizer_with_a_roomy_outbox_consumes_the_whole_inbox_in_one_call(tutorial, corpusLines):
    processor, outbox = startedTokenizer(tutorial, capacity=None)
    lines = corpusLines[:500]
    inbox = Inbox(lines)
    processor.process(0, inbox)
    assert inbox.isEmpty()
    assert outbox.drainBucket(0) == [word for line in lines for word in tokenize(line)]


def test_tokenizer_passes_verify_processor(tutorial):
    expected = [word for line in LINES for word in tokenize(line)]
    verifyProcessor(tutorial["Tokenizer"]).input(LINES).expectOutput(expected).verify()


# The DAG (no Spark)


def test_dag_has_the_vertices_and_edges_the_page_explains(tutorial):
    dag = tutorial["wordCountDag"]("books", "*.txt").validate()
    assert [v.name for v in dag] == ["source", "tokenize", "accumulate", "combine", "sink"]
    assert dag.getVertex("sink").localParallelism == 1
    edges = {(e.sourceName, e.destName): e for e in dag.edges()}
    shapes = {pair: (e.routing, e.isDistributed) for pair, e in edges.items()}
    assert shapes == {
        ("source", "tokenize"): (RoutingPolicy.UNICAST, False),
        ("tokenize", "accumulate"): (RoutingPolicy.PARTITIONED, False),
        ("accumulate", "combine"): (RoutingPolicy.PARTITIONED, True),
        ("combine", "sink"): (RoutingPolicy.UNICAST, False),
    }
    assert edges["tokenize", "accumulate"].keyFn("word") == "word"
    assert edges["accumulate", "combine"].keyFn(("word", 3)) == "word"


def test_counting_operation_is_written_out(tutorial):
    op = tutorial["COUNTING"]
    acc = op.createFn()
    for word in ["a", "b", "c"]:
        acc = op.accumulateFn(acc, word)
    assert (op.createFn(), acc, op.combineFn(acc, 4), op.finishFn(acc)) == (0, 3, 7, 3)


def test_page_shows_the_dot_text_the_script_prints(tutorial):
    page = (TUTORIALS / "02_core_dag_word_count.md").read_text()
    blocks = re.findall(r"```dot\n(.*?)```", page, re.DOTALL)
    dot = tutorial["wordCountDag"]("books", "*.txt").toDotString()
    assert blocks == [dot + "\n"]


# Running the tutorial on Spark


@pytest.mark.spark
def test_core_dag_tutorial_counts_every_word_and_draws_the_dag(
    spark, tutorial, smallCorpus, tmp_path, capsys
):
    directory, expected = smallCorpus
    svg = tmp_path / "dag.svg"
    counts = tutorial["main"](["--input", str(directory), "--top", "5", "--svg", str(svg)])
    assert dict(counts) == expected
    assert len(counts) == len(expected)
    assert counts == sorted(counts, key=lambda entry: (-entry[1], entry[0]))
    printed = capsys.readouterr().out
    assert tutorial["wordCountDag"](str(directory), "*.txt").toDotString() in printed
    for word, count in counts[:5]:
        assert re.search(rf"^\s+{count}  {word}$", printed, re.MULTILINE)
    assert f"The DAG is drawn in {svg}" in printed
    drawing = svg.read_text()
    assert drawing.startswith("<?xml") and "tokenize" in drawing and "distributed partitioned" in drawing


@pytest.mark.spark
def test_core_dag_tutorial_counts_equal_the_pipeline_tutorials(spark, tutorial, smallCorpus, tmp_path):
    directory, expected = smallCorpus
    common = ["--input", str(directory), "--top", str(len(expected))]
    byHand = tutorial["main"]([*common, "--svg", str(tmp_path / "dag.svg")])
    pipelineTutorial = runpy.run_path(str(TUTORIALS / "01_word_count.py"))
    planned = pipelineTutorial["main"]([*common, "--svg", str(tmp_path / "plan.svg")])
    assert byHand == planned
