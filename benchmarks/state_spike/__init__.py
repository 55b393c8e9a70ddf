"""The spike of issue 26, point 3: where a stream processor's state lives between micro-batches (see STATE.md)."""
