"""The sparkjet command: plan a script without running it, and report failures in one line."""

import pytest

from planner.cli import main

SCRIPT = """
import re
from pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from planner import Jet

p = Pipeline.create()
(p.readFrom(Sources.files({directory!r}))
  .flatMap(lambda line: line.split())
  .groupingKey(wholeItem())
  .aggregate(AggregateOperations.counting())
  .writeTo(Sinks.list("counts")))
Jet().newJob(p).join()
print("script ran")
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "job.py"
    path.write_text(SCRIPT.format(directory=str(tmp_path / "absent-until-run")))
    return path


def test_plan_prints_the_core_dag_without_running(script, capsys):
    assert main(["plan", str(script)]) == 0
    out = capsys.readouterr().out
    assert "script ran" in out
    assert '"group-and-aggregate-prepare" -> "group-and-aggregate"' in out


def test_plan_writes_dot_and_svg(script, tmp_path, capsys):
    dot, svg = tmp_path / "plan.dot", tmp_path / "plan.svg"
    assert main(["plan", str(script), "--dot", str(dot), "--svg", str(svg)]) == 0
    assert dot.read_text().startswith("digraph DAG {")
    assert "<svg" in svg.read_text()
    assert "wrote the plan of job-" in capsys.readouterr().out


def test_svg_without_dot_program_writes_dot_text_and_says_how_to_install(
    script, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    svg = tmp_path / "plan.svg"
    assert main(["plan", str(script), "--svg", str(svg)]) == 0
    assert not svg.exists()
    assert (tmp_path / "plan.dot").read_text().startswith("digraph")
    assert "apt-get install graphviz" in capsys.readouterr().out


def test_missing_script_exits_with_a_reason(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "no script at" in capsys.readouterr().err


def test_failing_script_exits_non_zero_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(
        "from pipeline import Pipeline, Sources\n"
        "from planner import Jet\n"
        "p = Pipeline.create()\n"
        "p.readFrom(Sources.items([1])).map(str)\n"
        "Jet().newJob(p)\n"
    )
    assert main(["plan", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "sparkjet: PlanningError: These transforms have nothing attached to them: [map]"


def test_run_passes_the_master_to_every_jet_the_script_makes(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_MASTER", "restored-after-the-test")
    monkeypatch.delenv("SPARKJET_MASTER")
    seen = tmp_path / "master.txt"
    script = tmp_path / "which_master.py"
    script.write_text(
        "from planner import Jet\n"
        f"open({str(seen)!r}, 'w').write(Jet()._master)\n"
    )
    assert main(["run", "--master", "local[3]", str(script)]) == 0
    assert seen.read_text() == "local[3]"
