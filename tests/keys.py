"""Keys of the types Python can put in a dict, and Python processes started with another
PYTHONHASHSEED that say which partition the default partitioner gives them: shared by the
partitioner's tests and the tests of grouping keys."""

import base64
import json
import pickle
import subprocess
import sys
from collections import namedtuple
from enum import Enum, Flag, IntEnum

from tests.conftest import PROJECT, finished


class Level(IntEnum):
    """An IntEnum: each member equals its int value."""

    LOW = 1
    HIGH = 2


class Colour(Enum):
    """A plain Enum: each member equals only itself."""

    RED = "red"
    BLUE = "blue"


class Mood(str, Enum):
    """A str-mixin Enum: each member equals its str value."""

    HAPPY = "happy"


class Perm(Flag):
    """A Flag: members and their combinations equal only themselves."""

    READ = 1
    WRITE = 2


class Tag(str):
    """A str subclass: equal to its str value."""


class Blob(bytes):
    """A bytes subclass: equal to its bytes value."""


Point = namedtuple("Point", "x y")

WORKER_SCRIPT = """
import base64, json, pickle, sys
from sparkjet.coredag.model.partitioner import DefaultPartitioner
partitioner = DefaultPartitioner()
counts = json.loads(sys.argv[1])
print(json.dumps(hash("word")), flush=True)
for line in sys.stdin:
    keys = pickle.loads(base64.b64decode(line))
    print(json.dumps([[partitioner.getPartition(key, count) for count in counts] for key in keys]), flush=True)
"""
"""Answers each line of base64-pickled keys with their partitions among each of the counts."""


class Worker:
    """A Python process started with a PYTHONHASHSEED, answering partitions of keys among
    each of ``counts`` partitions."""

    def __init__(self, seed: str, counts: tuple[int, ...]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER_SCRIPT, json.dumps(counts)],
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(PROJECT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.pythonHash = json.loads(self.process.stdout.readline())

    def partitions(self, keys: list) -> list[list[int]]:
        """Return each key's partitions among each of the counts, in this process."""
        self.process.stdin.write(base64.b64encode(pickle.dumps(keys)).decode("ascii") + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        """End the process, failing once it has printed nothing for ``QUIET_SECONDS``."""
        self.process.stdin.close()
        finished(self.process)
