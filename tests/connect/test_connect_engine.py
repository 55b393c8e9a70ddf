"""The Connect engine (issue 36, batch): a Core DAG's physical plan run through the DataFrame
API alone on a Spark Connect session gives the classic engine's answers and figures."""

import concurrent.futures
import functools
import os
import pathlib
import time
from collections import Counter

import pytest

from sparkjet.coredag import DAG, AbstractProcessor, Edge, UserFunctionError
from sparkjet.coredag.api.standard import preflightDag
from sparkjet.coredag.processors.sinks import DataFrameSinkP, FilesSinkP, ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.connect_engine import ConnectEngine
from sparkjet.coredag.runtime.engine import engineOf
from sparkjet.coredag.runtime.physical_plan import physicalPlan
from tests.conftest import CORPUS, eventually, tokenize
from tests.connect.classic_runs import runOn
from tests.connect.dags import ROUTINGS, FailOn13

pytestmark = pytest.mark.spark

CORPUS_WORDS = Counter(word for line in CORPUS.read_text().splitlines() for word in tokenize(line))


@pytest.fixture
def engine(connect):
    """The engine of the Connect session, which leaves this process without a SparkContext."""
    from pyspark import SparkContext

    before = SparkContext._active_spark_context
    yield engineOf(connect)
    assert SparkContext._active_spark_context is before, "the Connect engine started a SparkContext"


def test_a_connect_session_gets_the_connect_engine_and_no_spark_context(engine):
    from pyspark import SparkContext

    assert isinstance(engine, ConnectEngine)
    assert SparkContext._active_spark_context is None, "a classic SparkContext runs in the Connect client"


@pytest.mark.parametrize("parallelism", [1, 2, 3])
@pytest.mark.parametrize("name", ["coreWordCount", "pipelineWordCount"])
def test_the_word_count_gives_the_classic_engines_answer_and_figures(engine, connectServer, name, parallelism):
    lists, figures = runOn(engine, name, parallelism)
    assert Counter(dict(lists["counts"])) == CORPUS_WORDS
    classicLists, classicFigures = connectServer.runOnClassicEngine(name, parallelism)
    assert sorted(lists["counts"]) == sorted(classicLists["counts"])
    assert figures == classicFigures


@pytest.mark.parametrize("parallelism", [2, 3])
def test_each_routing_sends_each_item_where_the_classic_engine_does(engine, connectServer, parallelism):
    lists, figures = runOn(engine, "routings", parallelism)
    assert lists.keys() == ROUTINGS.keys()
    assert Counter(item for _, _, item in lists["broadcast"]) == Counter({item: 3 for item in range(40)})
    assert {index for index, _, item in lists["partitioned"] if item % 2} == {2}, "odd keys to the last processor"
    assert len({index for index, _, _ in lists["all-to-one"]}) == 1
    assert (lists, figures) == connectServer.runOnClassicEngine("routings", parallelism)


def test_a_high_priority_input_comes_fully_first(engine, connectServer):
    lists, figures = runOn(engine, "priorities", 3)
    received = lists["received"]
    assert Counter(item for _, _, item in received) == Counter([*range(30), *range(100, 130)])
    for processor in range(3):
        ordinals = [ordinal for index, ordinal, _ in received if index == processor]
        assert ordinals == sorted(ordinals, reverse=True), f"processor {processor} took a low-priority item first"
    assert (lists, figures) == connectServer.runOnClassicEngine("priorities", 3)


def test_a_failing_user_function_is_the_classic_engines_error(engine, connectServer):
    with pytest.raises(UserFunctionError) as failed:
        runOn(engine, "failing", 2)
    assert "fail on 13" in str(failed.value) and "13" in failed.value.itemRepr
    assert "thirteen is unlucky" in str(failed.value)
    assert "grpc" not in str(failed.value).lower() and "Traceback" not in str(failed.value)
    with pytest.raises(UserFunctionError) as classic:
        connectServer.runOnClassicEngine("failing", 2)
    assert str(failed.value) == str(classic.value)

