"""Jet's metric names, tags and ``Measurement``: a job's figures as ``JobMetrics.get(name)``
gives them, each value with the tags that say where it was measured."""

from collections.abc import Mapping

import attrs


class MetricNames:
    """The names of the metrics a sparkjet job measures, Jet's ``MetricNames``."""

    RECEIVED_COUNT = "receivedCount"
    EMITTED_COUNT = "emittedCount"
    TOP_OBSERVED_WM = "topObservedWm"
    COALESCED_WM = "coalescedWm"
    LAST_FORWARDED_WM = "lastForwardedWm"
    LATE_EVENTS_DROPPED = "lateEventsDropped"
    DISTRIBUTED_ITEMS_OUT = "distributedItemsOut"
    DISTRIBUTED_BYTES_OUT = "distributedBytesOut"


class MetricTags:
    """The tags of a measurement, Jet's ``MetricTags``; their values are strings."""

    VERTEX = "vertex"
    PROCESSOR = "proc"
    ORDINAL = "ordinal"


@attrs.frozen
class Measurement:
    """One value of metric ``name`` taken at ``timestampMillis`` (wall clock) where its tags say."""

    name: str
    amount: int
    timestampMillis: int
    tags: Mapping[str, str] = attrs.field(converter=lambda tags: dict(sorted(tags.items())))

    def metric(self) -> str:
        """Return the metric's name, as Jet's ``Measurement.metric()``."""
        return self.name

    def value(self) -> int:
        """Return the measured value, as Jet's ``Measurement.value()``."""
        return self.amount

    def timestamp(self) -> int:
        """Return when the value was taken, in ms since the epoch."""
        return self.timestampMillis

    def tag(self, name: str) -> str | None:
        """Return the value of tag ``name``, None where the measurement has no such tag."""
        return self.tags.get(name)
