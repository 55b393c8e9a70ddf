"""A stream query on Spark Connect whose micro-batches the client runs (issue 36, streams): the
server's foreachBatch function hands each one over and Spark commits it only once the client
answered it ran; a failure, a stop or a client gone leaves it uncommitted."""

import os
import pathlib
import uuid
from collections import Counter

import pytest

from sparkjet.coredag.runtime.connect_queries import (
    MicroBatchHandoff,
    RelayedQuery,
    checkpointPrefix,
    globalViews,
    removeEarlierRuns,
)
from tests.conftest import eventually

pytestmark = pytest.mark.spark

TRIGGER = {"processingTime": "200 milliseconds"}


def committed(checkpoint: pathlib.Path) -> list[int]:
    """Return the micro-batches Spark committed in the query checkpoint ``checkpoint``."""
    commits = checkpoint / "commits"
    return sorted(int(name) for name in os.listdir(commits) if name.isdigit()) if commits.is_dir() else []


def written(checkpoint: pathlib.Path) -> list[str]:
    """Return the files in query checkpoint ``checkpoint`` (what shows a query's progress)."""
    return sorted(str(path) for path in checkpoint.rglob("*"))


def lines(connect, directory: pathlib.Path):
    """Return the streaming rows of the text files written into ``directory``."""
    directory.mkdir()
    return connect.readStream.format("text").load(str(directory))


def test_each_micro_batch_runs_once_in_the_client_and_commits_after_its_answer(connect, tmp_path):
    """Every line written comes to the client once; no micro-batch was committed before it ran."""
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    seen, committedBefore = Counter(), []

    def onMicroBatch(rows, batchId: int) -> None:
        committedBefore.append(batchId in committed(checkpoint))
        seen.update(row.value for row in rows.collect())

    query = RelayedQuery.start(lines(connect, source), onMicroBatch, str(checkpoint), "relayed-lines", TRIGGER)
    expected = Counter()
    try:
        for number in range(3):
            text = [f"line {number} {place}" for place in range(5)]
            (source / f"part-{number}.txt").write_text("\n".join(text) + "\n")
            expected.update(text)
            eventually(lambda: seen == expected, progress=lambda: len(committed(checkpoint)))
    finally:
        query.stop()
    assert seen == expected
    assert committedBefore and not any(committedBefore)
    assert not query.isActive
    leftViews = connect.catalog.listTables(globalViews(connect), "sparkjet_*")
    assert [table.name for table in leftViews] == []


def test_the_client_lists_the_views_only_until_the_first_micro_batch(connect, tmp_path, monkeypatch):
    """Each listing of the views is a Spark job on the server: once the client found the first
    micro-batch, it looks each next one up by its name, which runs none, however long it waits."""
    from pyspark.sql.connect.catalog import Catalog

    listings, listingsAt = [], {}
    listTables = Catalog.listTables
    monkeypatch.setattr(Catalog, "listTables", lambda catalog, *args: listings.append(args) or listTables(catalog, *args))
    source, checkpoint, seen = tmp_path / "in", tmp_path / "checkpoint", Counter()

    def onMicroBatch(rows, batchId: int) -> None:
        listingsAt[batchId] = len(listings)
        seen.update(row.value for row in rows.collect())

    query = RelayedQuery.start(lines(connect, source), onMicroBatch, str(checkpoint), "relayed-by-name", TRIGGER)
    try:
        for number in range(3):
            (source / f"part-{number}.txt").write_text(f"line {number}\n")
            eventually(lambda: seen[f"line {number}"] == 1, progress=lambda: len(committed(checkpoint)))
        listedWhileRunning = len(listings)
    finally:
        query.stop()
    assert sorted(listingsAt) == [0, 1, 2]
    assert listingsAt[0] == listingsAt[1] == listingsAt[2] == listedWhileRunning


def test_a_micro_batch_failed_in_the_client_fails_the_query_uncommitted(connect, tmp_path):
    """The client's error reaches the query's failure; Spark commits nothing."""
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"

    def onMicroBatch(rows, batchId: int) -> None:
        raise ValueError("the client's micro-batch failed")

    query = RelayedQuery.start(lines(connect, source), onMicroBatch, str(checkpoint), "relayed-failure", TRIGGER)
    (source / "part-0.txt").write_text("one\n")
    try:
        eventually(lambda: not query.isActive, progress=lambda: written(checkpoint))
        with pytest.raises(Exception, match="the client's micro-batch failed"):
            query.awaitTermination(1)
    finally:
        query.stop()
    assert committed(checkpoint) == []


def unansweredQuery(connect, tmp_path, prefix: str, leaseSeconds: float):
    """Start a query whose function hands micro-batches to a client that never answers (its
    lease written once, never renewed: a client killed); return it and its checkpoint once
    micro-batch 0 is handed over."""
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    connect.range(1).selectExpr("CAST(1 AS BIGINT) AS renewals").createOrReplaceGlobalTempView(f"{prefix}_lease")
    writer = lines(connect, source).writeStream.foreachBatch(MicroBatchHandoff(prefix, leaseSeconds))
    query = writer.option("checkpointLocation", str(checkpoint)).trigger(**TRIGGER).start()
    (source / "part-0.txt").write_text("one\n")
    rowsView = f"{globalViews(connect)}.{prefix}_rows_0"
    eventually(lambda: connect.catalog.tableExists(rowsView), progress=lambda: written(checkpoint))
    return query, checkpoint


def awaitFailure(query, checkpoint: pathlib.Path, expected: str) -> None:
    """Wait until ``query`` ended; check it failed with ``expected`` and committed nothing."""
    try:
        eventually(lambda: not query.isActive, progress=lambda: written(checkpoint))
        with pytest.raises(Exception, match=expected):
            query.awaitTermination(1)
    finally:
        query.stop()
    assert committed(checkpoint) == []


@pytest.mark.parametrize("ending", ["stopped", "lease"])
def test_a_micro_batch_handed_over_and_not_answered_fails_uncommitted(connect, tmp_path, ending):
    """Once the run stops, or the client's lease goes unrenewed (the client gone), the function
    gives the micro-batch up: the query ends and Spark commits nothing."""
    prefix, database = f"sparkjet_{uuid.uuid4().hex}", globalViews(connect)
    query, checkpoint = unansweredQuery(connect, tmp_path, prefix, leaseSeconds=2)
    try:
        if ending == "stopped":
            connect.range(1).selectExpr("true AS stopped").createOrReplaceGlobalTempView(f"{prefix}_stopped")
        said = "the run stopped before it ran" if ending == "stopped" else "renewed its lease .* no more"
        awaitFailure(query, checkpoint, said)
    finally:
        for view in ("lease", "stopped"):
            connect.catalog.dropGlobalTempView(f"{prefix}_{view}")
    assert not connect.catalog.tableExists(f"{database}.{prefix}_rows_0")


def test_a_new_run_of_a_checkpoint_removes_a_killed_runs_views_and_its_waiting_micro_batch_fails_at_once(
    connect, tmp_path
):
    """A client killed with a micro-batch handed over leaves its views and its query waiting (its
    lease would let it wait 10 minutes here); the next run of the same checkpoint removes them,
    and the waiting micro-batch fails uncommitted without waiting for the lease."""
    runs = checkpointPrefix(str(tmp_path / "checkpoint"))
    query, checkpoint = unansweredQuery(connect, tmp_path, f"{runs}_killed", leaseSeconds=600)
    removeEarlierRuns(connect, str(checkpoint))
    awaitFailure(query, checkpoint, "removed its lease")
    assert connect.catalog.listTables(globalViews(connect), f"{runs}_*") == []
