"""The driver's side of a stream job: it is checked and prepared (``stream_job.streamStart``),
then run (``StreamJob``), one ``StreamRun`` at a time, each a Spark Structured Streaming query
running the job's Core DAG once per micro-batch.

What lives across micro-batches, and who owns it:

- where each source was read up to (offsets) and which micro-batches committed: Spark's query
  checkpoint, ``<checkpoint>/query``, written by Spark;
- each processor's state: the live processor, kept between micro-batches by the Python worker
  that ran it (``live_processors``), and its saved entries, written by its own task at the end of
  each micro-batch as a delta or a base under ``<checkpoint>/state`` (``state_store``); the driver
  holds only where they are and the watermarks (``ProcessorState``): ``StreamRun`` keeps the last
  micro-batch's and ``StreamCheckpoint`` writes them to ``<checkpoint>/states/batch-N.pickle``
  before Spark commits the micro-batch, then removes the state files no kept version names;
- the files sinks' directories: claimed once by the run (``OutputDirectoryClaim``), noted in
  ``<checkpoint>/claimed-outputs.json`` so a restarted job goes on writing there; a committed
  micro-batch's part files are never removed;
- the files of the sources sparkjet feeds (a built source, a finite test stream):
  ``<checkpoint>/source-N``, written by their feeders on the driver, read by Spark;
- the batch side of a job (vertices no stream reaches): computed once, cached by the run;
- the figures: the run's counts and one record per micro-batch;
- the lifecycle: what the client asked (``Suspension``: running, suspended, restarting) and where
  the run is (``RunState``);
- exported snapshots: copies of a committed checkpoint under
  ``$SPARKJET_STATE_DIR/exported-snapshots/<name>`` (``exported_snapshot``), kept until destroyed.

``StreamCheckpoint`` alone knows the checkpoint's layout; ``checkpoint_storage`` is its file layer
for a local path or a Hadoop URL; ``state_directory`` maps names to directories one-to-one.
"""
