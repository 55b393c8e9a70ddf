"""A Spark Connect server for the Connect tests, in a process of its own, so that the tests'
own process, a Connect client, has no SparkContext: a classic session of ``local[2]`` whose
Connect plugin listens on the port given. The same session runs, on request, a DAG of
``tests.connect.dags`` on the classic engine, to compare: a line ``name parallelism`` in,
one line of its pickled lists and figures, or of the error it failed with (base64), out."""

import base64
import pickle
import sys

from pyspark.sql import SparkSession


def main(port: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]").appName("sparkjet-connect-tests")
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.port", port).config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    print("ready", flush=True)
    from tests.connect.classic_runs import runOnClassicEngine

    for line in sys.stdin:
        name, parallelism = line.split()
        try:
            result = runOnClassicEngine(spark, name, int(parallelism))
        except Exception as error:
            result = error
        print(base64.b64encode(pickle.dumps(result)).decode("ascii"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
