"""Vertices of the Core DAG."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import DagError, SourceLocation, StageName

LOCAL_PARALLELISM_USE_DEFAULT = -1


def _checkLocalParallelism(instance, attribute, value):
    if value != LOCAL_PARALLELISM_USE_DEFAULT and value <= 0:
        raise DagError(
            f"Vertex '{instance.name}': Parallelism must be either -1 or a positive number, "
            f"got {value}"
        )


def _checkName(instance, attribute, value):
    if not value:
        raise DagError("A vertex needs a non-empty name")
    if "\x00" in value:
        raise DagError(f"Vertex {value!r}: a name cannot hold the NUL character, which DOT cannot write")


@attrs.frozen
class Vertex:
    """A named unit of computation; each of its processors is one Spark partition."""

    name: str = attrs.field(validator=_checkName)
    processorSupplier: Callable[[], object] = attrs.field(repr=False)
    localParallelism: int = attrs.field(
        default=LOCAL_PARALLELISM_USE_DEFAULT, validator=_checkLocalParallelism
    )
    definedAt: SourceLocation | None = attrs.field(default=None, eq=False, repr=False)
    """Where the user defined the pipeline stage this vertex runs, if it runs one."""

    @property
    def stageName(self) -> StageName:
        """Return the vertex's name as errors name a stage: with where it was defined."""
        return StageName(self.name, self.definedAt)

    def withLocalParallelism(self, localParallelism: int) -> "Vertex":
        """Return this vertex with the given local parallelism (-1 means the default)."""
        return attrs.evolve(self, localParallelism=localParallelism)

    def determineLocalParallelism(self, default: int) -> int:
        """Return the local parallelism, ``default`` where it is not set."""
        if self.localParallelism == LOCAL_PARALLELISM_USE_DEFAULT:
            return default
        return self.localParallelism
