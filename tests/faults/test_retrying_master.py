"""A local master made to retry failed tasks, as a cluster does: Spark's local mode runs every
task once unless its master says otherwise."""

import pytest

from sparkjet.coredag.runtime.session import TASK_ATTEMPTS, retryingMaster


@pytest.mark.parametrize(
    "master, retrying",
    [
        ("local", f"local[1,{TASK_ATTEMPTS}]"),
        ("local[2]", f"local[2,{TASK_ATTEMPTS}]"),
        ("local[*]", f"local[*,{TASK_ATTEMPTS}]"),
        ("local[2,3]", "local[2,3]"),
        ("local-cluster[2,1,1024]", "local-cluster[2,1,1024]"),
        ("spark://host:7077", "spark://host:7077"),
    ],
)
def test_a_local_master_retries_failed_tasks_and_others_are_left_alone(master, retrying):
    assert retryingMaster(master) == retrying

