"""The picture of a Core DAG given its physical plan: shuffled edges bold, kept ones dashed."""

from sparkjet.coredag import DAG, AbstractProcessor, Edge
from sparkjet.coredag.model.dot import dagToGraphviz, edgeDrawing
from sparkjet.coredag.model.exchange import Exchange
from sparkjet.coredag.processors.sinks import ListSinkP
from sparkjet.coredag.processors.sources import ItemsP
from sparkjet.coredag.runtime.physical_plan import physicalPlan


class Doubler(AbstractProcessor):
    """A user processor."""


def shuffledDag() -> DAG:
    dag = DAG()
    source = dag.newVertex("source", ItemsP((1, 2)), 2)
    user = dag.newVertex("user", Doubler, 2)
    sink = dag.newVertex("sink", ListSinkP("out"), 1)
    return dag.edge(Edge.between(source, user).partitioned(str)).edge(Edge.between(user, sink))


def edgeStatement(source: str, number: int) -> str:
    """Return the statement of edge ``number`` (its label spans lines)."""
    return next(statement for statement in source.split("\t") if f'id="edge-{number}"' in statement)


def test_a_shuffled_edge_is_bold_and_says_shuffle_a_kept_one_dashed():
    dag = shuffledDag()
    source = dagToGraphviz(dag, exchanges=physicalPlan(dag, 4).exchanges()).source
    shuffled, kept = edgeStatement(source, 0), edgeStatement(source, 1)
    assert "style=bold" in shuffled and '<td>local partitioned<br/>shuffle</td>' in shuffled
    assert "style=dashed" in kept and '<td>local unicast<br/>in task</td>' in kept


def test_without_exchanges_the_picture_is_unchanged():
    dag = shuffledDag()
    assert dagToGraphviz(dag).source == dagToGraphviz(dag, exchanges={}).source
    assert "shuffle" not in dagToGraphviz(dag).source


def test_a_prioritised_edge_stays_dotted_and_is_bold_when_shuffled():
    edge = Edge.between(DAG().newVertex("a", Doubler), DAG().newVertex("b", Doubler)).priority(1)
    assert edgeDrawing(edge, Exchange.SHUFFLED)["style"] == "dotted,bold"
    assert edgeDrawing(edge, Exchange.NARROW)["style"] == "dotted"
    assert edgeDrawing(edge)["style"] == "dotted"
