"""A Core DAG with a cycle."""

import pytest

from sparkjet.coredag import DAG, DagError, Edge
from sparkjet.coredag.processors.identity import IdentityP
from sparkjet.coredag.processors.sinks import FilesSinkP
from sparkjet.coredag.processors.sources import ItemsP


def test_a_dag_with_a_cycle_is_refused_at_submission_naming_the_cycle(submitter, tmp_path):
    output = tmp_path / "out"
    dag = DAG()
    numbers = dag.newVertex("numbers", ItemsP((1, 2, 3)))
    a, b = dag.newVertex("a", IdentityP()), dag.newVertex("b", IdentityP())
    sink = dag.newVertex("sink", FilesSinkP(str(output)))
    dag.edge(Edge.between(numbers, a)).edge(Edge.between(a, b)).edge(Edge.from_(b).to(a, 1))
    dag.edge(Edge.from_(b, 1).to(sink))
    with pytest.raises(DagError) as raised:
        submitter.newJob(dag)
    assert str(raised.value) == "DAG contains a cycle: a -> b -> a"
    assert not output.exists()
