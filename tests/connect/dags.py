"""The Core DAGs the Connect tests run on both engines, by name: module-level, so that the
Connect server's process builds the same DAG for the classic engine."""

import runpy

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.examples.word_count import wordCountPipeline
from sparkjet.planner.planning import planOf

from tests.conftest import CORPUS, PROJECT
from tests.coredag.test_execution import EvenOdd, TagWithIndex

class FailOn13(AbstractProcessor):
    """Fails on item 13, as a user function would."""

    def tryProcess0(self, item) -> bool:
        if item == 13:
            raise ValueError("thirteen is unlucky")
        return self.tryEmit(item)


def coreWordCount() -> DAG:
    """Tutorial 02's word count of the corpus."""
    tutorial = runpy.run_path(str(PROJECT / "tutorials" / "02_core_dag_word_count.py"))
    return tutorial["wordCountDag"](str(CORPUS.parent), CORPUS.name)


def urlWordCount() -> DAG:
    """Tutorial 02's word count of the corpus named by a URL, which Spark's reader reads."""
    tutorial = runpy.run_path(str(PROJECT / "tutorials" / "02_core_dag_word_count.py"))
    return tutorial["wordCountDag"](CORPUS.parent.as_uri(), CORPUS.name)


def pipelineWordCount() -> DAG:
    """The word count Pipeline of ``sparkjet.examples``, planned."""
    return planOf(wordCountPipeline(str(CORPUS.parent), CORPUS.name)).dag


ROUTINGS = {
    "partitioned": lambda edge: edge.distributed().partitioned(lambda item: item, EvenOdd()),
    "default-partitioned": lambda edge: edge.distributed().partitioned(lambda item: item),
    "broadcast": lambda edge: edge.distributed().broadcast(),
    "all-to-one": lambda edge: edge.distributed().allToOne("key"),
    "isolated": lambda edge: edge.isolated(),
    "unicast": lambda edge: edge,
}


def routings() -> DAG:
    """One source of 40 items feeding a tagger per routing policy (its parallelism 3), each
    into a list of the routing's name."""
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(40))), 2)
    for name, routed in ROUTINGS.items():
        tagger = dag.newVertex(f"tag {name}", TagWithIndex, 3)
        sink = dag.newVertex(f"list {name}", ListSinkP(name), 1)
        dag.edge(routed(Edge.from_(source, len(dag.getOutboundEdges("source"))).to(tagger)))
        dag.edge(Edge.between(tagger, sink))
    return dag


def priorities() -> DAG:
    """Two sources into one tagger, the second of high priority: each processor takes all of
    its items first."""
    dag = DAG()
    low = dag.newVertex("low", ItemsP(tuple(range(100, 130))), 2)
    high = dag.newVertex("high", ItemsP(tuple(range(30))), 2)
    tagger = dag.newVertex("tagger", TagWithIndex)
    sink = dag.newVertex("sink", ListSinkP("received"), 1)
    dag.edge(Edge.from_(low).to(tagger, 0).distributed().partitioned(lambda item: item))
    dag.edge(Edge.from_(high).to(tagger, 1).distributed().partitioned(lambda item: item).priority(-1))
    return dag.edge(Edge.between(tagger, sink))


def failing() -> DAG:
    """A user processor that fails on item 13."""
    dag = DAG()
    source = dag.newVertex("source", ItemsP(tuple(range(40))), 2)
    fail = dag.newVertex("fail on 13", FailOn13)
    sink = dag.newVertex("sink", ListSinkP("never"), 1)
    dag.edge(Edge.between(source, fail).distributed().partitioned(lambda item: item))
    return dag.edge(Edge.between(fail, sink))


DAGS = {f.__name__: f for f in (coreWordCount, urlWordCount, pipelineWordCount, routings, priorities, failing)}
