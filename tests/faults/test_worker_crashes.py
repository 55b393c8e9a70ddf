"""A Python worker that dies in every attempt of a task (a crash, an exit, the out-of-memory
killer): after Spark's retries the job fails with one error naming the stages that task ran,
where the user defined them, how many attempts died and what to check."""

import ctypes
import os
import re

import pytest

from sparkjet.coredag.errors import WorkerCrashError
from sparkjet.coredag.runtime.worker_failure import CrashedTask
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources
from tests.conftest import here

pytestmark = pytest.mark.spark

THIS_FILE = os.path.basename(__file__)
TASK_ATTEMPTS = 4
"""How many times a local session runs a failing task (its master is ``local[N,4]``)."""
CHECKS = (
    "Check whether a native extension crashes (a segmentation fault), a user function ends the "
    "process (os._exit, os.abort) or the worker runs out of memory (the kernel's out-of-memory "
    "killer, see dmesg); setting spark.python.worker.faulthandler.enabled to true shows where a "
    "crash happens"
)


def exitAtOnce(item: int) -> int:
    """End the Python worker at once, as ``os._exit`` in a user function does."""
    os._exit(3)


def segfault(item: int) -> int:
    """Crash the Python worker with a segmentation fault, as a broken native extension does."""
    return ctypes.string_at(0)


@pytest.mark.parametrize("crash", [exitAtOnce, segfault], ids=["os._exit", "segfault"])
def test_a_worker_dying_in_every_attempt_names_the_stages_of_its_task(jet, crash):
    p = Pipeline.create()
    p.readFrom(Sources.items(range(10))).map(crash).setName("crasher").writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(WorkerCrashError) as raised:
        jet.newJob(p).join()
    stages = (
        f"Stage 'items' (defined at {THIS_FILE}:{line}), Stage 'crasher' (defined at {THIS_FILE}:{line}) "
        f"and Stage 'listSink(out)' (defined at {THIS_FILE}:{line})"
    )
    expected = (
        rf"Job 'job-\d+' failed: the Python worker running {re.escape(stages)} died in each of the "
        rf"{TASK_ATTEMPTS} attempts of Spark task 0 of stage \d+\. {re.escape(CHECKS)}"
    )
    assert re.fullmatch(expected, str(raised.value)), str(raised.value)
    assert jet.getList("out") == []


def test_a_crash_before_a_shuffle_names_the_stages_before_it_only(jet):
    p = Pipeline.create()
    (
        p.readFrom(Sources.items(range(100))).setLocalParallelism(2)
        .map(exitAtOnce).setName("crasher").setLocalParallelism(2)
        .groupingKey(lambda item: item % 3)
        .aggregate(AggregateOperations.counting()).setLocalParallelism(2)
        .writeTo(Sinks.list("out"))
    )
    line = here() - 5
    with pytest.raises(WorkerCrashError) as raised:
        jet.newJob(p).join()
    message = str(raised.value)
    assert f"Stage 'crasher' (defined at {THIS_FILE}:{line})" in message
    assert f"died in each of the {TASK_ATTEMPTS} attempts of Spark task" in message
    assert "'group-and-aggregate'" not in message and "listSink" not in message


FAULT_HANDLED = (
    "Job aborted due to stage failure: Task 3 in stage 7.0 failed 1 times, most recent failure: Lost task 3.0 in "
    "stage 7.0 (TID 21) (10.0.0.5 executor 1): org.apache.spark.SparkException: Python worker exited unexpectedly "
    "(crashed): Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"
)


def test_what_a_fault_handler_says_of_the_crash_is_kept():
    crashed = CrashedTask.parse(FAULT_HANDLED)
    assert str(crashed.error("wordcount", [])) == (
        "Job 'wordcount' failed: the Python worker died in its only attempt of Spark task 3 of stage 7 (Fatal "
        "Python error: Segmentation fault). Check whether a native extension crashes (a segmentation fault), a "
        "user function ends the process (os._exit, os.abort) or the worker runs out of memory (the kernel's "
        "out-of-memory killer, see dmesg)"
    )


def test_a_task_failed_otherwise_is_no_crash():
    assert CrashedTask.parse(FAULT_HANDLED.replace("Python worker exited unexpectedly", "Disk full")) is None
