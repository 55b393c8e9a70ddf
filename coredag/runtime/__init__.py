"""Running a Core DAG on Spark: the session, job control, building RDDs, outputs (the only part importing pyspark)."""
