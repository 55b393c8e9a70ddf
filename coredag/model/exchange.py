"""How an edge carries items between the Spark tasks of its two vertices."""

import enum


class Exchange(enum.Enum):
    """How an edge carries items from its upstream's Spark tasks to its downstream's; the
    value is how the picture labels it."""

    NARROW = "in task"
    """Processor i feeds processor i in the same Spark task (a narrow dependency, chained)."""
    COALESCED = "coalesced"
    """Several upstream tasks feed one downstream task, no shuffle (a narrow coalesce)."""
    SHUFFLED = "shuffle"
    """The items cross a Spark shuffle, routed to their downstream processors."""

    @property
    def description(self) -> str:
        """Return the exchange in a sentence: ``kept in the task``, ``coalesced``, ``shuffled``."""
        return DESCRIPTIONS[self]


DESCRIPTIONS = {Exchange.NARROW: "kept in the task", Exchange.COALESCED: "coalesced", Exchange.SHUFFLED: "shuffled"}
