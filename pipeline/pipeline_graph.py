"""An immutable snapshot of a pipeline: what the planner reads."""

import attrs

from pipeline.transforms import Transform


@attrs.frozen
class PipelineGraph:
    """Transforms in creation order (a topological order) and the indexes feeding each."""

    transforms: tuple[Transform, ...]
    upstream: tuple[tuple[int, ...], ...]

    def downstream(self, index: int) -> tuple[int, ...]:
        """Return the indexes of the transforms fed by transform ``index``."""
        return tuple(i for i, ups in enumerate(self.upstream) if index in ups)

    def toDotString(self) -> str:
        """Return the graph in Jet's DOT format: one line per link between stages."""
        lines = ["digraph Pipeline {"]
        for index, transform in enumerate(self.transforms):
            for target in self.downstream(index):
                source, dest = _escape(transform.name), _escape(self.transforms[target].name)
                lines.append(f'\t"{source}" -> "{dest}";')
        lines.append("}")
        return "\n".join(lines)


def _escape(name: str) -> str:
    return name.replace('"', '\\"')
