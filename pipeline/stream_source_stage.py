"""The stage a stream source gives: it must choose where its items' event time comes from."""

from collections.abc import Callable

import attrs

from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction
from sparkjet.pipeline.stage import Stage
from sparkjet.pipeline.stream_stage import StreamStage, checkedLag
from sparkjet.pipeline.transforms import EventTime, TimestampKind


@attrs.frozen
class StreamSourceStage(Stage):
    """What ``readFrom(StreamSource)`` returns (Jet's ``StreamSourceStage``): a stream stage
    once it chooses its timestamps."""

    def withTimestamps(self, timestampFn: Callable, allowedLag: int) -> StreamStage:
        """Give each item the event time ``timestampFn(item)``; watermarks lag ``allowedLag``
        behind the highest timestamp of each source partition."""
        checkFunction(timestampFn, self.name(), "timestampFn")
        return self._chosen(EventTime(TimestampKind.FUNCTION, timestampFn, checkedLag(self, allowedLag)))

    def withNativeTimestamps(self, allowedLag: int) -> StreamStage:
        """Use the time the source gives each item; watermarks lag ``allowedLag`` behind."""
        if not self.pipeline.transformAt(self.index).source.supportsNativeTimestamps:
            raise PipelineError(f"{self.describe()}: The source doesn't support native timestamps")
        return self._chosen(EventTime(TimestampKind.NATIVE, None, checkedLag(self, allowedLag)))

    def withIngestionTimestamps(self) -> StreamStage:
        """Give each item the wall-clock time it is read at; the watermark follows the clock.
        A restarted job gives replayed items new times."""
        return self._chosen(EventTime(TimestampKind.INGESTION))

    def withoutTimestamps(self) -> StreamStage:
        """Declare no event time: the stream's items cannot be windowed."""
        return self._chosen(EventTime(TimestampKind.NONE))

    def _chosen(self, eventTime: EventTime) -> StreamStage:
        self.pipeline.update(self.index, lambda t: attrs.evolve(t, eventTime=eventTime))
        return StreamStage(self.pipeline, self.index, timestamped=eventTime.kind is not TimestampKind.NONE)

    def __getattr__(self, name: str):
        if name.startswith("_") or not hasattr(StreamStage, name):
            return super().__getattr__(name)
        raise PipelineError(
            f"{self.describe()}: a stream source's stage must choose its timestamps before "
            f"{name}(): call withTimestamps(timestampFn, allowedLag), withNativeTimestamps(allowedLag), "
            f"withIngestionTimestamps() or withoutTimestamps() first"
        )
