"""The Core DAG: vertices joined by edges, validated with Jet's rules."""

import collections
import itertools
from collections.abc import Callable, Iterator

import attrs

from sparkjet.coredag.errors import DagError
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.jet_dot import jetDotString
from sparkjet.coredag.model.vertex import LOCAL_PARALLELISM_USE_DEFAULT, Vertex


class DAG:
    """An append-only graph of vertices and edges; ``validate()`` checks it as a whole."""

    def __init__(self) -> None:
        self._vertices: dict[str, Vertex] = {}
        self._edges: list[Edge] = []
        self._inbound: dict[str, list[Edge]] = {}
        self._outbound: dict[str, list[Edge]] = {}

    def newVertex(
        self,
        name: str,
        processorSupplier: Callable[[], object],
        localParallelism: int = LOCAL_PARALLELISM_USE_DEFAULT,
    ) -> Vertex:
        """Create a vertex, add it to this DAG and return it."""
        vertex = Vertex(name, processorSupplier, localParallelism)
        self.vertex(vertex)
        return vertex

    def newUniqueVertex(
        self,
        namePrefix: str,
        processorSupplier: Callable[[], object],
        localParallelism: int = LOCAL_PARALLELISM_USE_DEFAULT,
    ) -> Vertex:
        """Create a vertex named ``namePrefix``, or ``namePrefix-2``, ``-3``... where that is
        taken, add it to this DAG and return it."""
        name = namePrefix
        for number in itertools.count(2):
            if name not in self._vertices:
                return self.newVertex(name, processorSupplier, localParallelism)
            name = f"{namePrefix}-{number}"

    def vertex(self, vertex: Vertex) -> "DAG":
        """Add a vertex; its name must be new in this DAG."""
        if vertex.name in self._vertices:
            raise DagError(f"Vertex {vertex.name} is already defined.")
        self._vertices[vertex.name] = vertex
        self._inbound[vertex.name], self._outbound[vertex.name] = [], []
        return self

    def edge(self, edge: Edge) -> "DAG":
        """Add an edge between two vertices of this DAG; several edges may join the same two
        vertices, at ordinals of their own."""
        _checkEndpoints(edge, self._vertices)
        for existing in self._inbound[edge.destName] + self._outbound[edge.sourceName]:
            _checkOrdinalFree(edge, existing)
        self._edges.append(edge)
        self._inbound[edge.destName].append(edge)
        self._outbound[edge.sourceName].append(edge)
        return self

    def withVertices(self, replace: Callable[[Vertex], Vertex]) -> "DAG":
        """Return a copy whose vertices are ``replace(vertex)`` (same names), its edges rebound
        to them."""
        copy = DAG()
        for vertex in self._vertices.values():
            copy.vertex(replace(vertex))
        for edge in self._edges:
            copy.edge(attrs.evolve(
                edge, source=copy.getVertex(edge.sourceName), destination=copy.getVertex(edge.destName)
            ))
        return copy

    def getVertex(self, name: str) -> Vertex:
        """Return the vertex called ``name``."""
        try:
            return self._vertices[name]
        except KeyError:
            raise DagError(f"Vertex {name} is not in this DAG") from None

    def vertices(self) -> tuple[Vertex, ...]:
        """Return the vertices in the order they were added."""
        return tuple(self._vertices.values())

    def edges(self) -> tuple[Edge, ...]:
        """Return the edges in the order they were added."""
        return tuple(self._edges)

    def getInboundEdges(self, name: str) -> list[Edge]:
        """Return the edges arriving at vertex ``name``, by destination ordinal."""
        return sorted(self._inbound[self.getVertex(name).name], key=lambda e: e.destOrdinal)

    def getOutboundEdges(self, name: str) -> list[Edge]:
        """Return the edges leaving vertex ``name``, by source ordinal."""
        return sorted(self._outbound[self.getVertex(name).name], key=lambda e: e.sourceOrdinal)

    def __iter__(self) -> Iterator[Vertex]:
        """Validate the DAG, then iterate its vertices in topological order (ties in the order
        they were added), as Jet's ``iterator()`` does."""
        self.validate()
        return iter(self.topologicalOrder())

    def topologicalOrder(self) -> list[Vertex]:
        """Return the vertices in topological order; raise if the DAG has a cycle."""
        indegree = {name: 0 for name in self._vertices}
        for e in self._edges:
            indegree[e.destName] += 1
        ready = collections.deque(name for name, degree in indegree.items() if degree == 0)
        order: list[Vertex] = []
        while ready:
            name = ready.popleft()
            order.append(self._vertices[name])
            for e in self.getOutboundEdges(name):
                indegree[e.destName] -= 1
                if indegree[e.destName] == 0:
                    ready.append(e.destName)
        if len(order) < len(self._vertices):
            raise DagError(f"DAG contains a cycle: {' -> '.join(self._findCycle())}")
        return order

    def validate(self) -> "DAG":
        """Check the DAG as a whole: not empty, acyclic, ordinals numbered 0..n-1, isolated local."""
        if not self._vertices:
            raise DagError("DAG must contain at least one vertex")
        self.topologicalOrder()
        for name in self._vertices:
            _checkOrdinals(name, "Input", [e.destOrdinal for e in self.getInboundEdges(name)])
            _checkOrdinals(name, "Output", [e.sourceOrdinal for e in self.getOutboundEdges(name)])
        for e in self._edges:
            if e.routing is RoutingPolicy.ISOLATED and e.isDistributed:
                raise DagError(f"Isolated edges must be local: {e!r}")
        return self

    def toDotString(self, defaultParallelism: int = LOCAL_PARALLELISM_USE_DEFAULT) -> str:
        """Return the DAG in Jet's DOT format; unset parallelism shows ``defaultParallelism``."""
        return jetDotString(self, defaultParallelism)

    def _findCycle(self) -> list[str]:
        successors = {name: [] for name in self._vertices}
        for e in self._edges:
            successors[e.sourceName].append(e.destName)
        visiting: list[str] = []
        done: set[str] = set()

        def visit(name: str) -> list[str] | None:
            if name in visiting:
                return visiting[visiting.index(name):] + [name]
            if name in done:
                return None
            visiting.append(name)
            for successor in successors[name]:
                cycle = visit(successor)
                if cycle:
                    return cycle
            visiting.pop()
            done.add(name)
            return None

        for name in self._vertices:
            cycle = visit(name)
            if cycle:
                return cycle
        return []


def _checkEndpoints(edge: Edge, vertices: dict[str, Vertex]) -> None:
    if edge.destName is None:
        raise DagError(f"Edge has no destination: finish {edge!r} with .to(vertex)")
    _checkVertexOfDag(edge.sourceName, edge.source, "source", vertices)
    _checkVertexOfDag(edge.destName, edge.destination, "destination", vertices)
    if edge.sourceName == edge.destName:
        raise DagError(f"Attempted to add an edge from {edge.sourceName} to itself")


def _checkVertexOfDag(name: str, vertex: Vertex | None, end: str, vertices: dict[str, Vertex]) -> None:
    """An edge's end must be this DAG's vertex itself (an edge made from names alone names it)."""
    if name not in vertices:
        raise DagError(f"{end.capitalize()} vertex '{name}' is not in this DAG")
    if vertex is not None and vertex is not vertices[name]:
        raise DagError(
            f"This DAG has a vertex called '{name}', but the supplied edge's {end} is a "
            "different vertex with the same name"
        )


def _checkOrdinalFree(edge: Edge, existing: Edge) -> None:
    if existing.destName == edge.destName and existing.destOrdinal == edge.destOrdinal:
        raise DagError(_ordinalTaken("an inbound", edge.destName, edge))
    if existing.sourceName == edge.sourceName and existing.sourceOrdinal == edge.sourceOrdinal:
        raise DagError(_ordinalTaken("an outbound", edge.sourceName, edge))


def _ordinalTaken(direction: str, vertexName: str, edge: Edge) -> str:
    ordinal = edge.destOrdinal if direction == "an inbound" else edge.sourceOrdinal
    message = f"Vertex '{vertexName}' already has {direction} edge at ordinal {ordinal}"
    if edge.sourceOrdinal == 0 and edge.destOrdinal == 0:
        message += ", use Edge.from_().to() to specify another ordinal"
    return message


def _checkOrdinals(name: str, direction: str, ordinals: list[int]) -> None:
    expected = list(range(len(ordinals)))
    if sorted(ordinals) != expected:
        problem = "are not properly numbered" if direction == "Input" else "are not ordered"
        raise DagError(
            f"{direction} ordinals for vertex {name} {problem}. "
            f"Actual: {sorted(ordinals)} Expected: {expected}"
        )
