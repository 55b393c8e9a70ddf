"""Vertex: a frozen value with Jet's local parallelism rule."""

import attrs
import pytest

from sparkjet.coredag import DAG, DagError, Vertex


def noop():
    """A processor supplier that is never called."""


@pytest.mark.parametrize("parallelism", [-1, 1, 4])
def test_local_parallelism_minus_one_or_positive_is_accepted(parallelism):
    assert Vertex("a", noop, parallelism).localParallelism == parallelism


def test_local_parallelism_defaults_to_minus_one():
    assert Vertex("a", noop).localParallelism == -1


@pytest.mark.parametrize("parallelism", [0, -2, -10])
def test_other_local_parallelism_is_rejected_naming_the_vertex(parallelism):
    with pytest.raises(DagError) as raised:
        Vertex("a", noop, parallelism)
    message = str(raised.value)
    assert "Parallelism must be either -1 or a positive number" in message
    assert "'a'" in message
    assert f"got {parallelism}" in message


def test_new_vertex_on_dag_checks_parallelism_too():
    with pytest.raises(DagError, match="Parallelism must be either -1 or a positive number"):
        DAG().newVertex("a", noop, 0)


def test_with_local_parallelism_returns_new_vertex():
    original = Vertex("a", noop)
    changed = original.withLocalParallelism(3)
    assert changed.localParallelism == 3
    assert original.localParallelism == -1
    assert (changed.name, changed.processorSupplier) == ("a", noop)


def test_with_local_parallelism_validates():
    with pytest.raises(DagError, match="Parallelism must be either -1 or a positive number"):
        Vertex("a", noop).withLocalParallelism(0)


def test_vertex_is_frozen():
    vertex = Vertex("a", noop)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        vertex.localParallelism = 2


def test_determine_local_parallelism_uses_default_only_when_unset():
    assert Vertex("a", noop).determineLocalParallelism(8) == 8
    assert Vertex("a", noop, 3).determineLocalParallelism(8) == 3


def test_empty_name_is_rejected():
    with pytest.raises(DagError, match="A vertex needs a non-empty name"):
        Vertex("", noop)


def test_a_name_holding_nul_is_rejected_as_dot_cannot_write_it():
    with pytest.raises(DagError) as raised:
        Vertex("a\x00b", noop)
    assert str(raised.value) == "Vertex 'a\\x00b': a name cannot hold the NUL character, which DOT cannot write"
