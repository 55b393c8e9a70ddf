"""The SparkSession jobs run on: the one spark-submit configured, the one already running, or
one sparkjet starts (a classic session, or a Spark Connect session where PySpark's own settings
ask for one), shared by the Jet clients of a process and stopped by the last of them."""

import collections
import contextlib
import os
import re
import signal
import socket
import sys
import threading
import warnings
from collections.abc import Iterator

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession
from pyspark.util import default_api_mode

from sparkjet.coredag.errors import Interrupted, SessionError
from sparkjet.coredag.runtime import shipping

_LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

TASK_ATTEMPTS = 4
"""How many times a local session runs a failing task before it fails the job, as Spark's
``spark.task.maxFailures`` does on a cluster: a Python worker that dies does not fail the job."""

DEFAULT_MASTER = "local[*]"

UI_VARIABLE = "SPARKJET_UI"
"""The environment variable that turns Spark's web UI off in the sessions sparkjet starts:
``0``, ``false``, ``no`` or ``off`` (``Jet(ui=...)`` overrides it)."""

_OFF = frozenset({"0", "false", "no", "off"})

LOCAL_IP_VARIABLE = "SPARK_LOCAL_IP"
"""The address Spark's JVM binds to (its web UI, else on every interface, and its driver); no
setting names the UI's address, so a local session sparkjet starts gets ``127.0.0.1``."""

LOOPBACK = "127.0.0.1"

_ADDRESS_SETTINGS = ("spark.driver.bindAddress", "spark.driver.host")

CONNECT_ADDRESS = "spark.connect.grpc.binding.address"
"""The address a Spark Connect server listens on: a local one sparkjet starts, 127.0.0.1."""

WORKER_DAEMON = "sparkjet.coredag.runtime.worker_daemon"
"""The daemon of sparkjet's Python workers (``spark.python.daemon.module``), where they can
import sparkjet when they start: always on a local master, and on another one where sparkjet is
in the zip shipped to them; otherwise PySpark's own daemon."""

REMOTE_VARIABLE = "SPARK_REMOTE"
"""PySpark's environment variable naming the Spark Connect server a session reaches
(``sc://host:15002``, or ``local[2]`` for one started in this process)."""

CONNECT_MODE_VARIABLE = "SPARK_CONNECT_MODE_ENABLED"
"""What PySpark sets in a Connect client's environment: a child process inherits it, and its
classic session would then fail with PySpark's CONNECT_URL_NOT_SET."""

API_MODE_VARIABLE = "SPARK_API_MODE"
"""PySpark's environment variable for ``spark.api.mode`` (spark-submit sets it from
``--conf spark.api.mode=connect``): ``connect`` makes a session started on a master a Spark
Connect session of a server started in this process."""

_LOCAL_MASTER = re.compile(r"local(?:\[(\*|\d+)(?:\s*,\s*(\d+))?\])?")
"""A local master, as Spark reads one: ``local``, ``local[N]``, ``local[*]``, ``local[N, F]``."""


def localThreads(master: str) -> str | None:
    """Return the threads a local ``master`` names (``"2"``, ``"*"``; ``local`` is ``"1"``), None for another master."""
    match = _LOCAL_MASTER.fullmatch(master.strip())
    return None if match is None else match.group(1) or "1"


def retryingMaster(master: str) -> str:
    """Return ``master``, a local one made to retry failed tasks (``local[2]`` becomes
    ``local[2,4]``): Spark's local mode otherwise runs every task once, whatever
    ``spark.task.maxFailures`` says. A local master that names its retries keeps them."""
    match = _LOCAL_MASTER.fullmatch(master)
    if match is None or match.group(2) is not None:
        return master
    return f"local[{match.group(1) or 1},{TASK_ATTEMPTS}]"


def sameMaster(requested: str, running: str) -> bool:
    """Whether a session on ``running`` is what ``requested`` asks for: local masters are
    compared by their threads (``local`` is ``local[1]``, ``local[*]`` one per core), not
    their retries."""
    return _threads(requested) == _threads(running)


def _threads(master: str) -> str:
    threads = localThreads(master)
    if threads is None:
        return master.strip()
    return f"local[{os.cpu_count() if threads == '*' else threads}]"


def underSparkSubmit() -> bool:
    """Whether spark-submit (or the pyspark shell) started this process and its JVM."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def uiWanted(ui: bool | None = None) -> bool:
    """Whether a session sparkjet starts shows Spark's web UI: ``ui`` if given, else yes unless
    ``SPARKJET_UI`` turns it off."""
    if ui is not None:
        return ui
    return os.environ.get(UI_VARIABLE, "").strip().lower() not in _OFF


def isConnect(session: SparkSession) -> bool:
    """Whether ``session`` is a Spark Connect session: no SparkContext, no JVM in this process."""
    return type(session).__module__.startswith("pyspark.sql.connect.")


def remoteWanted(remote: str | None = None, master: str | None = None) -> str | None:
    """Return the Spark Connect URL a session started here reaches, or None for a classic one:
    ``remote`` if given, else PySpark's ``SPARK_REMOTE``, else, where ``spark.api.mode`` is
    ``connect`` (``SPARK_API_MODE``, or PySpark's default mode), the master, as PySpark's
    builder does: a Connect server started in this process on it."""
    remote = remote or os.environ.get(REMOTE_VARIABLE) or None
    if remote is not None:
        return remote
    mode = os.environ.get(API_MODE_VARIABLE, "").strip().lower()
    if mode not in ("classic", "connect"):
        mode = default_api_mode()
    return master or DEFAULT_MASTER if mode == "connect" else None


def embeddedSession(
    master: str | None = None, appName: str = "sparkjet", ui: bool | None = None, remote: str | None = None
) -> SparkSession:
    """Return the active SparkSession, or start one.

    Args:
        master: the master URL of a session started here; another than the running session's, or
            spark-submit's, is a SessionError.
        appName: the name of a session started here.
        ui: whether a session started here shows Spark's web UI (see ``uiWanted``).
        remote: the Spark Connect URL of a session started here (see ``remoteWanted``).

    Under spark-submit the session keeps every setting spark-submit gave; sparkjet only adds what
    it needs and the user did not set (docs/internals/core-dag-on-spark.md, "Sessions")."""
    active = activeSession()
    if active is not None:
        _checkActive(active, master, remote)
        return readyForSparkjet(active)
    conf = _submittedConf()
    submitted = conf.get("spark.master", None)
    if submitted is not None:
        _checkMaster(master, submitted, "spark-submit set --master")
    url = remoteWanted(remote, submitted or master)
    if url is not None and not _LOCAL_MASTER.fullmatch(url.strip()):
        checkServerListens(url)
        return readyForSparkjet(SparkSession.builder.remote(url).getOrCreate())
    conf.set("spark.master", retryingMaster(url or submitted or master or DEFAULT_MASTER))
    conf.setIfMissing("spark.app.name", appName)
    showsUi = underSparkSubmit() or uiWanted(ui)
    settings = _sparkjetSettings(started=submitted is None, master=conf.get("spark.master"), ui=showsUi)
    _addShippedZipToExecutorPath(conf)
    for key, value in settings.items():
        conf.setIfMissing(key, value)
    with loopbackOnly(conf, started=submitted is None):
        if url is None:
            os.environ.pop(CONNECT_MODE_VARIABLE, None)  # inherited from a parent that was a Connect client
            session = SparkSession.builder.config(conf=conf).getOrCreate()
        else:  # PySpark's local Connect server, started here on the master (its URL) with these settings
            conf.setIfMissing(CONNECT_ADDRESS, LOOPBACK)
            settings = dict(conf.getAll())
            with warnings.catch_warnings():  # PySpark sets the server's static settings again, each a warning
                warnings.filterwarnings("ignore", "Failed to set spark", UserWarning)
                session = SparkSession.builder.remote(settings.pop("spark.master")).config(map=settings).getOrCreate()
    if not isConnect(session):
        announceUi(session.sparkContext)
    return readyForSparkjet(session)


CONNECT_PORT = 15002
"""The port of a Spark Connect URL that names none (PySpark's default)."""

PROBE_SECONDS = 10.0
"""How long a Spark Connect server's port may take to accept a connection before sparkjet says it is not there."""


def shownUrl(url: str) -> str:
    """Return a Spark Connect URL as it may be shown: without its parameters, a token among them."""
    return url.split(";", 1)[0]


def checkServerListens(url: str) -> None:
    """Refuse a Spark Connect URL whose host and port accept no connection, at once: PySpark's
    client would retry it for minutes, saying nothing."""
    address = re.match(r"sc://([^/:;]+)(?::([0-9]+))?", url.strip())
    if address is None:
        return  # PySpark's builder names what is wrong with it
    host, port = address.group(1), int(address.group(2) or CONNECT_PORT)
    try:
        socket.create_connection((host, port), timeout=PROBE_SECONDS).close()
    except OSError as error:
        raise SessionError(
            f"No Spark Connect server answers at '{shownUrl(url)}' ({error.strerror or error}): start one there "
            "(PySpark's sbin/start-connect-server.sh), or correct the URL (Jet(remote=...), sparkjet run "
            f"--remote, or {REMOTE_VARIABLE})"
        ) from None


@contextlib.contextmanager
def loopbackOnly(conf: SparkConf, started: bool) -> Iterator[None]:
    """Start, in the block, the JVM of a local session listening on 127.0.0.1 alone: its web UI
    and its driver, which Spark binds to ``SPARK_LOCAL_IP`` (the UI, without it, to every
    interface). Nothing is changed where sparkjet does not start the JVM (``started``: not
    spark-submit; no JVM already running), the master is not local, or the user chose an address
    (``SPARK_LOCAL_IP``, ``spark.driver.bindAddress`` or ``spark.driver.host``); the variable is
    the JVM's alone, this process's environment is left as it was."""
    master = conf.get("spark.master", DEFAULT_MASTER)
    chosen = LOCAL_IP_VARIABLE in os.environ or any(conf.contains(key) for key in _ADDRESS_SETTINGS)
    if not started or SparkContext._gateway is not None or chosen or _LOCAL_MASTER.fullmatch(master) is None:
        yield
        return
    os.environ[LOCAL_IP_VARIABLE] = LOOPBACK
    try:
        yield
    finally:
        os.environ.pop(LOCAL_IP_VARIABLE, None)


def announceUi(sc: SparkContext) -> None:
    """Say where the web UI of ``sc`` is, as PySpark's shell does (nothing if it has none): its
    real address, the port Spark took when 4040 was in use."""
    if sc.uiWebUrl:
        print(f"Spark UI: {sc.uiWebUrl}", file=sys.stderr, flush=True)


def readyForSparkjet(session: SparkSession) -> SparkSession:
    """Return ``session`` with sparkjet shipped to its executors (sparkjet and its pure-Python
    dependencies as one zip, as ``--py-files`` would, once per SparkContext) unless its master
    is local; to a Spark Connect server always, as the session's artifacts (once per session);
    a session given to ``Jet(spark=...)`` goes through here too."""
    if isConnect(session):
        shipping.shipToServer(session)
    else:
        shipping.shipTo(session.sparkContext)
    return session


def _submittedConf() -> SparkConf:
    """Return the settings spark-submit gave, read from its JVM; none outside spark-submit."""
    if underSparkSubmit():
        SparkContext._ensure_initialized()
    return SparkConf()


def _sparkjetSettings(started: bool, master: str, ui: bool = True) -> dict[str, str]:
    """Return the settings sparkjet adds where the user set none; ``started``: sparkjet starts
    the JVM itself (not spark-submit), so it also quiets the JVM's log. Without ``ui``, Spark's
    UI is turned off (with it, nothing is set: Spark's default, on, or the user's setting counts).

    On a local master, Python workers get this process's ``sys.path`` and sparkjet's worker
    daemon. On any other master their path is the zip shipped to them alone, under its file name
    (it lies in their executor's directory, where the daemon starts): the driver's paths mean
    nothing on another machine, and a user ships their own modules as in PySpark."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths += [p for p in sys.path if p and os.path.isdir(p) and p not in paths]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    settings = {
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.executorEnv.PYTHONPATH": os.environ["PYTHONPATH"],
        "spark.python.daemon.module": WORKER_DAEMON,
    }
    if shipping.shipsTo(master):
        shipped = shipping.bundle()
        settings["spark.executorEnv.PYTHONPATH"] = shipped.zipPath.name
        if not shipped.shipsSparkjet:
            del settings["spark.python.daemon.module"]
    if not ui:
        settings["spark.ui.enabled"] = "false"
    if started:
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{_LOG4J2}"
    return settings


def _addShippedZipToExecutorPath(conf: SparkConf) -> None:
    """Where the user set the executors' PYTHONPATH, put the shipped zip in front of it (the
    daemon sparkjet names must find sparkjet there), and keep the rest of what they set."""
    key = "spark.executorEnv.PYTHONPATH"
    user = conf.get(key, None)
    if user is None or not shipping.shipsTo(conf.get("spark.master")):
        return
    conf.set(key, os.pathsep.join([shipping.bundle().zipPath.name, *([user] if user else [])]))


def _checkActive(active: SparkSession, master: str | None, remote: str | None) -> None:
    """Refuse a master or a Connect URL the running session is not of (see ``_checkMaster``)."""
    if isConnect(active) and master is not None:
        raise SessionError(
            f"Jet(master='{master}'): a Spark Connect session already runs in this process, and Spark runs one "
            "session per process; leave the master out to use that session (Jet(), or Jet(spark=session)), or "
            "run this job in another process"
        )
    if not isConnect(active) and remote is not None:
        raise SessionError(
            f"Jet(remote='{remote}'): a classic SparkSession already runs in this process on "
            f"'{active.sparkContext.master}', and Spark runs one session per process; leave remote out to use "
            "that session (Jet(), or Jet(spark=session)), or run this job in another process"
        )
    if not isConnect(active):
        _checkMaster(master, active.sparkContext.master, "a SparkSession already runs in this process on")


def _checkMaster(requested: str | None, running: str, what: str) -> None:
    if requested is not None and not sameMaster(requested, running):
        raise SessionError(
            f"Jet(master='{requested}'): {what} '{running}', and Spark runs one session per "
            "process; leave the master out to use that session (Jet(), or Jet(spark=session)), "
            "or run this job in another process"
        )


@contextlib.contextmanager
def interruptsHeld() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) while the block starts a session, then raise Interrupted if it
    came: a JVM interrupted while it starts is left running, holding the terminal, and a
    py4j call interrupted prints a traceback. The handler before the block is restored (not
    the one a new SparkContext installs)."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    received = []

    def acknowledge(signum, frame) -> None:
        if not received:  # at once, and without Python's buffered stderr (no re-entrant write)
            os.write(
                sys.stderr.fileno(),
                b"sparkjet: interrupted (Ctrl-C) while the Spark session starts: stopping once it has started\n",
            )
        received.append(signum)

    signal.signal(signal.SIGINT, acknowledge)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        interrupted = Interrupted("interrupted (Ctrl-C) while the Spark session started")
        interrupted.acknowledged = True  # said already: planner/interrupts.saidAlready skips it
        raise interrupted


def activeSession() -> SparkSession | None:
    """Return the SparkSession active in this process, if any."""
    return SparkSession.getActiveSession()


def isStopped(session: SparkSession) -> bool:
    """Whether ``session``'s SparkContext was stopped (a Spark Connect session: it was)."""
    return session.is_stopped if isConnect(session) else session.sparkContext._jsc is None


def _sessionKey(session: SparkSession) -> int:
    """What Jet clients share: a classic session's SparkContext, a Connect session itself."""
    return id(session) if isConnect(session) else id(session.sparkContext)


class SharedSessions:
    """The sessions Jet clients took without being given one: each client that takes one is
    counted, and a session sparkjet started is stopped when the last of them shuts down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: collections.Counter = collections.Counter()
        self._started: set[int] = set()

    def take(self, master: str | None, ui: bool | None = None, remote: str | None = None) -> SparkSession:
        """Return the session to run on (see ``embeddedSession``), counting one more user."""
        with self._lock:
            startsOne = activeSession() is None
            with interruptsHeld():
                session = embeddedSession(master, ui=ui, remote=remote)
            key = _sessionKey(session)
            if startsOne:
                self._started.add(key)
            self._users[key] += 1
            return session

    def release(self, session: SparkSession) -> None:
        """Count one user fewer; stop the session if sparkjet started it and none is left."""
        with self._lock:
            key = _sessionKey(session)
            self._users[key] -= 1
            if self._users[key] > 0:
                return
            del self._users[key]
            if key in self._started:
                self._started.discard(key)
                stopSession(session)


def stopSession(session: SparkSession) -> None:
    """Stop ``session`` without waiting for PySpark's accumulator server to notice: it polls
    once a second, so ``stop()`` waited for it, 0.85 s in the median (benchmarks/startup.py); its
    thread now ends in the background (no Spark job sends it updates once the context stopped).
    A Spark Connect session is released on its server (which a local one's stop stops too)."""
    if isConnect(session):
        session.stop()
        return
    sc = session.sparkContext
    server = sc._accumulatorServer
    if server is not None:
        sc._accumulatorServer = None
    try:
        session.stop()
    finally:
        if server is not None:
            threading.Thread(target=server.shutdown, name="sparkjet-accumulator-stop", daemon=True).start()


sharedSessions = SharedSessions()
"""The sessions of this process's Jet clients."""
