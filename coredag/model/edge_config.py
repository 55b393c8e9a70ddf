"""Tuning options of an edge, with Jet's defaults."""

import attrs


def _positive(instance, attribute, value):
    if value <= 0:
        raise ValueError(f"EdgeConfig.{attribute.name} must be positive, got {value}")


@attrs.frozen
class EdgeConfig:
    """How items travel along an edge.

    ``queueSize`` bounds the items held between two processors chained in one Spark task;
    ``outboxCapacity`` bounds a cooperative processor's outbox bucket for the edge;
    ``packetSizeLimit`` is the size in bytes of the pickled batches that cross a shuffle;
    ``receiveWindowMultiplier`` is accepted for Jet compatibility and has no meaning on Spark,
    whose shuffle is pull-based: a reducer fetches blocks when it is ready, so there is no
    sender to throttle with a receive window.
    """

    queueSize: int = attrs.field(default=1024, validator=_positive)
    outboxCapacity: int = attrs.field(default=2048, validator=_positive)
    packetSizeLimit: int = attrs.field(default=16384, validator=_positive)
    receiveWindowMultiplier: int = attrs.field(default=3, validator=_positive)
