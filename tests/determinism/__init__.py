"""The determinism matrix: the same results at every parallelism, input split and hash seed."""
