"""An immutable snapshot of a pipeline: what the planner reads."""

import attrs

from sparkjet.coredag.model.jet_dot import jetQuoted
from sparkjet.pipeline.transforms import Transform


@attrs.frozen
class PipelineGraph:
    """Transforms in creation order (a topological order) and the indexes feeding each."""

    transforms: tuple[Transform, ...]
    upstream: tuple[tuple[int, ...], ...]
    fusionEnabled: bool = True
    preserveOrder: bool = False
    _downstream: tuple[tuple[int, ...], ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        downstream: list[list[int]] = [[] for _ in self.transforms]
        for index, ups in enumerate(self.upstream):
            for up in dict.fromkeys(ups):
                downstream[up].append(index)
        object.__setattr__(self, "_downstream", tuple(map(tuple, downstream)))

    def downstream(self, index: int) -> tuple[int, ...]:
        """Return the indexes of the transforms fed by transform ``index``."""
        return self._downstream[index]

    def toDotString(self) -> str:
        """Return the graph in Jet's DOT format: one line per link between stages."""
        lines = ["digraph Pipeline {"]
        for index, transform in enumerate(self.transforms):
            for target in self.downstream(index):
                lines.append(f"\t{jetQuoted(transform.name)} -> {jetQuoted(self.transforms[target].name)};")
        lines.append("}")
        return "\n".join(lines)
