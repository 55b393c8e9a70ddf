"""A stream job's query on a Spark Connect session. Spark runs a query's ``foreachBatch``
function in a Python process of the Connect server, not in the client that runs the job, so
the function (``MicroBatchHandoff``) hands each micro-batch over: it names the micro-batch's
rows as a global temporary view and waits for the client's answer. The client's
``RelayedQuery`` runs the micro-batch as a classic session's ``foreachBatch`` runs it in the
driver, then answers. Spark commits a micro-batch only once the function returned, which it
does once the client answered that the micro-batch ran (its snapshot saved); an answer of
failure, the run stopping, or the client gone (its lease no longer renewed) fail it
uncommitted, to run again when the job goes on.

The views of one run, in the session's global temporary database, all named after the run's
``prefix`` (``sparkjet_<its query checkpoint's hash>_<the run's id>``): ``<prefix>_rows_<batch>``
(the function's), ``<prefix>_answer_<batch>``, ``<prefix>_lease`` and ``<prefix>_stopped`` (the
client's). A run removes them as it stops; a run of the same checkpoint removes those a killed
client left, as it starts.

The client lists the views (a Spark job on the server each time) only until it finds the first
micro-batch handed over; it looks each after it, the next number, up by name, which runs none.
The function reads its answer and the lease as rows, Spark jobs of the query's session:
benchmarks/CONNECT.md says why those stay."""

import hashlib
import threading
import time
import uuid
from collections.abc import Callable

import attrs

POLL_SECONDS = 0.025
"""How often the function looks for the client's answer, and the client for a micro-batch handed over."""

LEASE_RENEW_SECONDS = 5.0
"""How often the client renews its lease while its run lives."""

LEASE_SECONDS = 30.0
"""How long the function waits for an answer without the client's lease renewed: then the
client is gone (killed, say), and the micro-batch fails uncommitted, so that a run of the job
started again is not kept waiting by this one (Spark stops a query's older run first)."""


class HandoffError(RuntimeError):
    """Why the server's function failed a micro-batch uncommitted (the message names the job's run)."""


def globalViews(spark) -> str:
    """Return the session's global temporary database (Spark's ``global_temp`` unless configured)."""
    return spark.conf.get("spark.sql.globalTempDatabase", "global_temp")


@attrs.frozen
class MicroBatchHandoff:
    """The ``foreachBatch`` function of a job's query on Spark Connect, run on the server: it
    hands micro-batch ``batchId`` to the client of the run ``prefix`` names and returns once
    the client answered it ran; raises what the client answered failed it."""

    prefix: str
    leaseSeconds: float = LEASE_SECONDS

    def __call__(self, rows, batchId: int) -> None:
        spark = rows.sparkSession
        database = globalViews(spark)
        rowsView, answerView = f"{self.prefix}_rows_{batchId}", f"{self.prefix}_answer_{batchId}"
        rows.createOrReplaceGlobalTempView(rowsView)
        try:
            lease = LeaseWatch(spark, f"{database}.{self.prefix}_lease", self.leaseSeconds)
            while not spark.catalog.tableExists(f"{database}.{answerView}"):
                if spark.catalog.tableExists(f"{database}.{self.prefix}_stopped"):
                    raise HandoffError(f"micro-batch {batchId} of run {self.prefix}: the run stopped before it ran")
                lease.check(batchId)
                time.sleep(POLL_SECONDS)
            failure = spark.table(f"{database}.{answerView}").first()[0]
        finally:
            for view in (rowsView, answerView):
                spark.catalog.dropGlobalTempView(view)
        if failure is not None:
            raise HandoffError(f"micro-batch {batchId} of run {self.prefix} failed in the job's client: {failure}")


class LeaseWatch:
    """The server's watch on the client's lease (view ``table``): the renewal count it read
    last, and when it changed; unrenewed for ``seconds``, the client is gone."""

    def __init__(self, spark, table: str, seconds: float) -> None:
        self._spark, self._table, self._seconds = spark, table, seconds
        self._count, self._seen, self._read = None, time.monotonic(), 0.0

    def check(self, batchId: int) -> None:
        """Read the lease at most once per renewal; raise once it went unrenewed too long."""
        now = time.monotonic()
        if now - self._read < LEASE_RENEW_SECONDS:
            return
        self._read = now
        if not self._spark.catalog.tableExists(self._table):
            raise HandoffError(
                f"micro-batch {batchId}: the job's client removed its lease ({self._table}): a new run of the "
                "job's checkpoint started, and the micro-batch runs again there"
            )
        count = self._spark.table(self._table).first()[0]
        if count != self._count:
            self._count, self._seen = count, now
        elif now - self._seen > self._seconds:
            raise HandoffError(
                f"micro-batch {batchId}: the job's client renewed its lease ({self._table}) no more for "
                f"{self._seconds:.0f} s: it is gone, and the micro-batch runs again when the job goes on"
            )


def checkpointPrefix(location: str) -> str:
    """Return the start of the views' names of every run whose query checkpoint is at ``location``."""
    return f"sparkjet_{hashlib.sha256(location.encode('utf-8')).hexdigest()[:16]}"


def removeEarlierRuns(spark, location: str) -> None:
    """Remove the views of the earlier runs of the query checkpoint at ``location``: a run holds
    its checkpoint alone (a kept one's lock, a temporary one's own directory), so they are the
    views of a run whose client was killed before it could remove them."""
    database = globalViews(spark)
    for table in spark.catalog.listTables(database, f"{checkpointPrefix(location)}_*"):
        spark.catalog.dropGlobalTempView(table.name)


class RelayedQuery:
    """The client's side of a stream job's query on Spark Connect (see the module): runs each
    micro-batch the server's function hands over with ``onMicroBatch(rows, batchId)`` and
    answers it; read as Spark's ``StreamingQuery`` (``isActive``, ``awaitTermination``, ``stop``)."""

    def __init__(self, spark, prefix: str, onMicroBatch: Callable) -> None:
        self._spark, self._prefix, self._onMicroBatch = spark, prefix, onMicroBatch
        self._database = globalViews(spark)
        self._query = None
        self._stopping = threading.Event()
        self.failure: BaseException | None = None
        """What broke the relay (the server gone, say); the query's waiters raise it."""
        self._renewals = 0
        self._renewLease()
        self._threads = [
            threading.Thread(target=self._relay, name=f"sparkjet-relay-{prefix}", daemon=True),
            threading.Thread(target=self._renew, name=f"sparkjet-lease-{prefix}", daemon=True),
        ]

    @classmethod
    def start(cls, rows, onMicroBatch: Callable, location: str, queryName: str, trigger: dict) -> "RelayedQuery":
        """Start the query reading ``rows``, its checkpoint at ``location``, each micro-batch run
        by ``onMicroBatch`` in this client; the views an earlier run of that checkpoint left
        (its client killed) go first, so its query, if it still waits, fails at once."""
        removeEarlierRuns(rows.sparkSession, location)
        relayed = cls(rows.sparkSession, f"{checkpointPrefix(location)}_{uuid.uuid4().hex[:16]}", onMicroBatch)
        writer = rows.writeStream.foreachBatch(MicroBatchHandoff(relayed._prefix))
        relayed._query = (
            writer.option("checkpointLocation", location).queryName(queryName).trigger(**trigger).start()
        )
        for thread in relayed._threads:
            thread.start()
        return relayed

    @property
    def isActive(self) -> bool:
        """Return whether the query runs."""
        return self._query.isActive

    def awaitTermination(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the query to end; raise what failed it or the relay."""
        if self.failure is not None:
            raise self.failure
        return self._query.awaitTermination(timeout)

    def stop(self) -> None:
        """Stop the query: a micro-batch handed over and not run fails uncommitted, and one
        running in this client ends first; then remove the run's views."""
        self._stopping.set()
        try:
            self._view("stopped", "true AS stopped")
            for thread in self._threads:
                if thread.is_alive() and thread is not threading.current_thread():
                    thread.join()
            self._query.stop()
        finally:  # the run's views, the function's included: a query stopped may not have dropped its last
            for table in self._spark.catalog.listTables(self._database, f"{self._prefix}_*"):
                self._spark.catalog.dropGlobalTempView(table.name)

    def _relay(self) -> None:
        """Run and answer each micro-batch handed over until the query stops: Spark hands them
        over one at a time, numbered one after the other from the first (the one after the last
        committed, for a run that goes on)."""
        try:
            batchId = None
            while not self._stopping.is_set():
                batchId = self._firstHandedOver() if batchId is None else batchId
                if batchId is not None and self._spark.catalog.tableExists(self._rowsView(batchId)):
                    self._answer(batchId, self._run(batchId))
                    batchId += 1
                else:
                    self._stopping.wait(POLL_SECONDS)
        except Exception as error:
            self.failure = self.failure or error

    def _firstHandedOver(self) -> int | None:
        """Return the number of the first micro-batch handed over to this run (None: none yet)."""
        listed = self._spark.catalog.listTables(self._database, f"{self._prefix}_rows_*")
        return min((int(table.name.rsplit("_", 1)[1]) for table in listed), default=None)

    def _rowsView(self, batchId: int) -> str:
        """Return the qualified name of the view of micro-batch ``batchId``'s rows."""
        return f"{self._database}.{self._prefix}_rows_{batchId}"

    def _run(self, batchId: int) -> str | None:
        """Run micro-batch ``batchId``; return why it failed (None: it ran)."""
        rows = self._spark.table(self._rowsView(batchId))
        try:
            self._onMicroBatch(rows, batchId)
        except Exception as error:  # the job's run keeps it, and fails with it
            return f"{type(error).__name__}: {error}"
        return None

    def _answer(self, batchId: int, failure: str | None) -> None:
        literal = "CAST(NULL AS STRING)" if failure is None else _sqlString(failure)
        self._view(f"answer_{batchId}", f"{literal} AS failure")

    def _renew(self) -> None:
        """Renew the lease every ``LEASE_RENEW_SECONDS`` until the query stops."""
        try:
            while not self._stopping.wait(LEASE_RENEW_SECONDS):
                self._renewLease()
        except Exception as error:
            self.failure = self.failure or error

    def _renewLease(self) -> None:
        self._renewals += 1
        self._view("lease", f"CAST({self._renewals} AS BIGINT) AS renewals")

    def _view(self, name: str, expression: str) -> None:
        """Name a one-row DataFrame of ``expression`` as the run's global view ``name``."""
        self._spark.range(1).selectExpr(expression).createOrReplaceGlobalTempView(f"{self._prefix}_{name}")


def _sqlString(text: str) -> str:
    """Return ``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
