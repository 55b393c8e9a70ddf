"""A hash-join side too large to broadcast to every joiner."""

import os
import re

import pytest

from sparkjet.coredag import JobError
from sparkjet.pipeline import JoinClause, Pipeline, PipelineError, Sinks, Sources
from tests.conftest import here

THIS_FILE = os.path.basename(__file__)
LIMIT = 1024
ORDERS = [(n % 20, f"order {n}") for n in range(50)]
CUSTOMERS = [(n, f"customer {n}", f"{n} Long Street, Springfield, Far Country, Planet Earth") for n in range(20)]


def first(entry: tuple):
    return entry[0]


def name(customer: tuple) -> str:
    return customer[1]


def pair(order: tuple, customer) -> tuple:
    return order[1], customer


def ordersAndCustomers(p: Pipeline) -> tuple:
    """The stages ``orders`` and ``customers`` of ``p``."""
    return p.readFrom(Sources.items(ORDERS)).setName("orders"), p.readFrom(Sources.items(CUSTOMERS)).setName("customers")


@pytest.mark.spark
def test_a_side_over_the_broadcast_limit_fails_naming_it_its_size_and_what_to_do(jet, tmp_path):
    output, p = tmp_path / "out", Pipeline.create()
    orders, customers = ordersAndCustomers(p)
    clause = JoinClause.onKeys(first, first).withBroadcastLimit(LIMIT)
    orders.innerHashJoin(customers, clause, pair).writeTo(Sinks.files(str(output)))
    line = here() - 1
    with pytest.raises(JobError) as raised:
        jet.newJob(p).join()
    size = re.fullmatch(
        re.escape(
            f"Stage '2-way hash-join' (defined at {THIS_FILE}:{line}): the joined stage 'customers' is too "
            "large to broadcast: its first 20 items pickle to "
        )
        + r"(\d+)"
        + re.escape(
            f" bytes, over the limit of {LIMIT} bytes (every joiner keeps a copy of it). Make the larger "
            "stage the primary one (the stage hashJoin is called on, which is streamed, not copied), filter "
            "it or keep only what the join needs (JoinClause.projecting) before the join, or raise the "
            "limit with JoinClause.withBroadcastLimit(bytes)"
        ),
        str(raised.value),
    )
    assert size and int(size[1]) > LIMIT
    assert not output.exists()


@pytest.mark.spark
def test_the_same_side_projected_under_the_limit_joins(jet):
    p = Pipeline.create()
    orders, customers = ordersAndCustomers(p)
    clause = JoinClause.onKeys(first, first).projecting(name).withBroadcastLimit(LIMIT)
    orders.innerHashJoin(customers, clause, pair).writeTo(Sinks.list("joined"))
    jet.newJob(p).join()
    names = {customer[0]: customer[1] for customer in CUSTOMERS}
    assert sorted(jet.getList("joined")) == sorted((order, names[key]) for key, order in ORDERS)


@pytest.mark.parametrize("limit", [0, -1, 1.5])
def test_the_broadcast_limit_is_a_positive_number_of_bytes(limit):
    with pytest.raises(PipelineError) as raised:
        JoinClause.onKeys(first, first).withBroadcastLimit(limit)
    assert str(raised.value) == f"JoinClause.withBroadcastLimit: expected a positive number of bytes, got {limit!r}"
