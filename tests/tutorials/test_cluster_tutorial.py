"""Tutorial 06 starts a standalone cluster, runs tutorial 01 on it with sparkjet run, directly or
through a Spark Connect server on it, and stops everything."""

import json
import os
import pathlib
import re
import runpy
import socket
import textwrap

import pytest

from tests.conftest import CLIENT_VARIABLES, CONNECT, PROJECT, run
from tests.test_installed_examples import installedVenv, succeeded

SCRIPT = PROJECT / "tutorials" / "06_running_on_a_spark_cluster.py"

CLIENT_NOTE = textwrap.dedent(
    """
    import atexit, json, os, sys

    def note():
        if os.path.basename(sys.argv[0]) == "sparkjet":
            pyspark = sys.modules.get("pyspark")
            jvm = pyspark is not None and pyspark.SparkContext._gateway is not None
            seen = {"jvm": jvm, "connect": "pyspark.sql.connect.session" in sys.modules}
            with open(os.environ["CLIENT_NOTE"], "a") as note:
                note.write(json.dumps(seen) + "\\n")

    atexit.register(note)
    """
)
"""A sitecustomize module noting, as the ``sparkjet`` command exits, whether its process ever
started a JVM (a classic SparkContext's: PySpark keeps its gateway once launched) and whether it
made a Spark Connect session."""


@pytest.mark.spark  # no session of its own, but it starts JVMs: out of a quick -m "not spark" run
def test_cluster_tutorial_counts_the_words_on_two_workers_and_stops_the_cluster(
    smallCorpus, tmp_path, capsys
):
    directory, expected = smallCorpus
    svg, logs = tmp_path / "plan.svg", tmp_path / "cluster"
    module = runpy.run_path(str(SCRIPT))
    args = ["--input", str(directory), "--top", "5", "--svg", str(svg), "--directory", str(logs)]
    top = module["main"](args)

    assert [count for _, count in top] == [count for _, count in expected.most_common(5)]
    assert all(expected[word] == count for word, count in top)
    printed = capsys.readouterr().out
    port = int(re.search(r"A master at spark://127\.0\.0\.1:(\d+) with 2 workers", printed)[1])
    assert f"run --master spark://127.0.0.1:{port} " in printed
    assert re.search(rf"^\s+{top[0][1]}  {top[0][0]}$", printed, re.MULTILINE)
    assert printed.endswith("The cluster is stopped\n")
    assert svg.read_text().startswith("<?xml")
    # Spark may start a spare executor while the application stops, so each worker ran one or more
    executorLogs = [sorted(logs.glob(f"worker-{n}/app-*/*/stderr")) for n in (1, 2)]
    assert all(executorLogs), executorLogs
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def refused(port: int) -> bool:
    """Whether 127.0.0.1 refuses connections on ``port``."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.spark
def test_cluster_tutorial_counts_the_words_through_a_connect_server_on_the_cluster_and_stops_both(
    request, smallCorpus, tmp_path
):
    """As a user runs it: sparkjet installed from its wheel in a venv of its own, run outside the
    checkout, no PYTHONPATH; SPARK_REMOTE set (to a server nobody runs) chooses the Connect way."""
    if request.config.getoption("--spark-master") != CONNECT:
        pytest.skip("the Connect set runs it: pytest --spark-master=connect -m connect")
    directory, expected = smallCorpus
    scripts = installedVenv(tmp_path / "venv", request.getfixturevalue("wheel"))
    site = succeeded(run([scripts / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]))
    (pathlib.Path(site.stdout.strip()) / "sitecustomize.py").write_text(CLIENT_NOTE)
    note, svg, logs = tmp_path / "client.json", tmp_path / "plan.svg", tmp_path / "cluster"
    leftOut = {"PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", *CLIENT_VARIABLES}
    environment = {name: value for name, value in os.environ.items() if name not in leftOut}
    environment |= {"SPARK_REMOTE": "sc://localhost:1/", "CLIENT_NOTE": str(note)}
    args = ["--input", str(directory), "--top", "5", "--svg", str(svg), "--directory", str(logs)]
    done = run([scripts / "python", str(SCRIPT), *args], cwd=tmp_path, env=environment)
    printed = succeeded(done).stdout

    top = runpy.run_path(str(SCRIPT))["topWords"](printed)
    assert [count for _, count in top] == [count for _, count in expected.most_common(5)]
    assert all(expected[word] == count for word, count in top)
    assert printed.startswith("SPARK_REMOTE is set, so the word count goes through Spark Connect: a server")
    master = int(re.search(r"A master at spark://127\.0\.0\.1:(\d+) with 2 workers", printed)[1])
    server = int(re.search(r"A Spark Connect server at sc://localhost:(\d+)/ on that master", printed)[1])
    command = f"$ SPARK_CONNECT_AUTHENTICATE_TOKEN=<token> {scripts / 'sparkjet'} run --remote sc://localhost:{server}/ "
    assert command in printed
    assert printed.endswith("The server and the cluster are stopped\n")
    assert svg.read_text().startswith("<?xml")
    assert json.loads(note.read_text()) == {"jvm": False, "connect": True}, "the word count's process is a Connect client"
    assert "token=" not in printed and "token=" not in done.stderr
    executorLogs = [sorted(logs.glob(f"worker-{n}/app-*/*/stderr")) for n in (1, 2)]
    assert all(executorLogs), executorLogs
    assert list(logs.glob("worker-*/app-*/*/*/sparkjet-*.zip")), "the session's artifacts reach the executors"
    assert "SparkConnectServer" in (logs / "connect-server.log").read_text()
    assert refused(server) and refused(master)
