"""The Connect engine's default parallelism from the server's settings, as Spark decides it,
where they tell it; a job is asked only where they do not (tests/connect checks both agree)."""

import pytest

from sparkjet.coredag.runtime.connect_engine import configuredParallelism


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"spark.master": "local[2]"}, 2),
        ({"spark.master": "local[3, 4]"}, 3),
        ({"spark.master": "local"}, 1),
        ({"spark.master": "local[2]", "spark.default.parallelism": "5"}, 5),
        ({"spark.master": "local[2]", "spark.default.parallelism": "5", "spark.sql.leafNodeDefaultParallelism": "7"}, 7),
        ({"spark.master": "spark://127.0.0.1:7077", "spark.default.parallelism": "4"}, 4),
        ({"spark.master": "local[*]"}, None),
        ({"spark.master": "spark://127.0.0.1:7077"}, None),
        ({"spark.master": "local-cluster[2,1,1024]"}, None),
        ({}, None),
    ],
)
def test_the_servers_settings_give_its_parallelism_where_they_tell_it(settings, expected):
    assert configuredParallelism(settings.get) == expected
