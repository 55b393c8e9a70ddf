"""The benchmarked programs, each run alone in a fresh process by ``benchmarks.variants``."""

WORD_COUNT = {
    "sparkjet": "benchmarks.variants.sparkjet:measure",
    "rdd": "benchmarks.variants.rdd:measure",
    "rdd-counter": "benchmarks.variants.rdd_counter:measure",
    "dataframe": "benchmarks.variants.dataframe:measure",
    "python": "benchmarks.variants.plain_python:measure",
}
SPARK_WORD_COUNT = ("sparkjet", "rdd", "rdd-counter", "dataframe")
SECOND_JOB = "--second-job"  # a Spark word count runs its job again in the same session
TINY = {
    "sparkjet": "benchmarks.variants.tiny:sparkjet",
    "rdd": "benchmarks.variants.tiny:rdd",
    "trivial": "benchmarks.variants.tiny:trivial",
}
PLANNING = {"planning": "benchmarks.variants.planning:measure"}
KINDS = {"word-count": WORD_COUNT, "tiny": TINY, "planning": PLANNING}
