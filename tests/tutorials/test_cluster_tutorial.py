"""Tutorial 06 starts a standalone cluster, runs tutorial 01 on it with sparkjet run, stops it."""

import re
import runpy
import socket

import pytest

from tests.conftest import PROJECT

SCRIPT = PROJECT / "tutorials" / "06_running_on_a_spark_cluster.py"


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
