"""The driver's side of a stream job: it is checked and prepared (``stream_job.preparedStreamJob``),
then run (``StreamJob``, its phase a ``lifecycle.Lifecycle``), one ``StreamRun`` at a time, each
a Spark Structured Streaming query handing each micro-batch to a ``MicroBatchLoop``, which runs
the job's Core DAG through the engine (``engine.Engine``), the only way it reaches Spark's jobs.

``StreamCheckpoint`` alone knows the checkpoint's layout (and an exported snapshot's); ``files`` and
``checkpoint_storage`` are its file layer; ``state_directory`` owns every default path and maps
names to directories one-to-one. What
lives across micro-batches, and which module owns it: docs/internals/stream-state.md."""
