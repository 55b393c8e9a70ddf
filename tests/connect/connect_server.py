"""A Spark Connect server for the Connect tests, in a process of its own, so that the tests'
own process, a Connect client, has no SparkContext: a classic session of ``local[2]`` whose
Connect plugin listens on the port given. The same session runs, on request, a DAG of
``tests.connect.dags`` or micro-batches of ``tests.connect.streams`` on the classic engine, to
compare: a line of a pickled function of the tests and its arguments in, one line of what
``function(spark, *arguments)`` returned, or of the error it failed with, out (both base64)."""

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
    for line in sys.stdin:
        function, arguments = pickle.loads(base64.b64decode(line))
        try:
            result = function(spark, *arguments)
        except Exception as error:
            result = error
        print(base64.b64encode(pickle.dumps(result)).decode("ascii"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
