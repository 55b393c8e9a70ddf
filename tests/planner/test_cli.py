"""The sparkjet command: plan a script without running it, run it with drawings, reports and
progress, and report failures in one line."""

import importlib.metadata
import os
import pathlib
import sys
from collections import Counter

import pytest

from sparkjet.planner.cli import main
from sparkjet.planner.progress import CLEAR_LINE
from tests.conftest import run, tokenize
from tests.planner.test_progress import FakeTerminal, shownLines
from tests.planner.test_report import Page

SCRIPT = """
import re
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import Jet

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


def test_plan_of_a_script_that_asks_for_figures_plans_the_jobs_before_it_stops(tmp_path, capsys):
    tutorial = pathlib.Path(__file__).resolve().parents[2] / "tutorials" / "05_seeing_your_plan.py"
    assert main(["plan", str(tutorial), "--output", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert '"count each long word-prepare" -> "count each long word"' in captured.out
    assert "stopped where it asked for figures: Job 'job-" in captured.err
    assert "was only planned (sparkjet plan): it has no metrics" in captured.err


def test_plan_writes_dot_and_svg(script, tmp_path, capsys):
    dot, svg = tmp_path / "plan.dot", tmp_path / "plan.svg"
    assert main(["plan", str(script), "--dot", str(dot), "--svg", str(svg)]) == 0
    assert dot.read_text().startswith("digraph DAG {")
    assert "<svg" in svg.read_text()
    captured = capsys.readouterr()
    assert "wrote the plan of job-" in captured.err and "wrote the plan" not in captured.out


def test_plan_makes_the_directories_its_files_go_in(script, tmp_path, capsys):
    dot, svg = tmp_path / "out" / "plan.dot", tmp_path / "pictures" / "of" / "plan.svg"
    assert main(["plan", str(script), "--dot", str(dot), "--svg", str(svg)]) == 0
    assert dot.read_text().startswith("digraph DAG {") and "<svg" in svg.read_text()


def test_a_file_where_a_directory_should_be_is_named_in_one_line(script, tmp_path, capsys):
    (tmp_path / "out").write_text("")
    assert main(["plan", str(script), "--dot", str(tmp_path / "out" / "plan.dot")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"sparkjet: OutputError: Cannot write the Core DAG's DOT text to '{tmp_path}/out/plan.dot': "
        f"'{tmp_path}/out' is a file, not a directory; give a path whose directories you can create and write in"
    ]


def test_svg_without_dot_program_writes_dot_text_and_says_how_to_install(
    script, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    svg = tmp_path / "plan.svg"
    assert main(["plan", str(script), "--svg", str(svg)]) == 0
    assert not svg.exists()
    assert (tmp_path / "plan.dot").read_text().startswith("digraph")
    assert "apt-get install graphviz" in capsys.readouterr().err


def test_missing_script_exits_with_a_reason(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "no script at" in capsys.readouterr().err


def test_failing_script_exits_non_zero_with_one_line_and_the_scripts_frames(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(
        "from sparkjet.pipeline import Pipeline, Sources\n"
        "from sparkjet.planner import Jet\n"
        "p = Pipeline.create()\n"
        "p.readFrom(Sources.items([1])).map(str)\n"
        "Jet().newJob(p)\n"
    )
    assert main(["plan", str(path)]) == 1
    reason, *frames = capsys.readouterr().err.splitlines()
    assert reason == (
        "sparkjet: PlanningError: These transforms have nothing attached to them: [map] "
        "(defined at bad.py:4); attach a stage or a sink (writeTo) to each, or remove it"
    )
    assert frames == [f'  File "{path}", line 5, in <module>', "    Jet().newJob(p)"]


def test_run_passes_the_master_to_every_jet_the_script_makes(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKJET_MASTER", "restored-after-the-test")
    monkeypatch.delenv("SPARKJET_MASTER")
    seen = tmp_path / "master.txt"
    script = tmp_path / "which_master.py"
    script.write_text(
        "from sparkjet.planner import Jet\n"
        f"open({str(seen)!r}, 'w').write(Jet()._master)\n"
    )
    assert main(["run", "--master", "local[3]", str(script)]) == 0
    assert seen.read_text() == "local[3]"


RUN_SCRIPT = """
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import Jet

jet = Jet()
for lines in (["a b", "b c"], ["d", "d", "d"]):
    p = Pipeline.create()
    (p.readFrom(Sources.items(lines))
      .flatMap(lambda line: line.split())
      .groupingKey(wholeItem())
      .aggregate(AggregateOperations.counting())
      .writeTo(Sinks.list("counts")))
    jet.newJob(p).join()
jet.shutdown()
"""


@pytest.mark.spark
def test_run_draws_and_reports_each_job_in_numbered_files(spark, tmp_path, capsys):
    script = tmp_path / "two_jobs.py"
    script.write_text(RUN_SCRIPT)
    svg, html = tmp_path / "plan.svg", tmp_path / "report.html"
    assert main(["run", "--svg", str(svg), "--html", str(html), str(script)]) == 0
    for drawing in (svg, tmp_path / "plan-2.svg"):
        assert 'class="node vertex"' in drawing.read_text() and " s busy" in drawing.read_text()
    reports = [Page(path.read_text()) for path in (html, tmp_path / "report-2.html")]
    sinks = [report.rows("vertex")[-1] for report in reports]
    assert [(sink["name"], sink["items-in"]) for sink in sinks] == [
        ("listSink(counts)", "3"), ("listSink(counts)", "1")
    ]
    captured = capsys.readouterr()
    assert captured.err.count("drew the plan of job-") == 2 and captured.err.count("wrote the report of job-") == 2
    assert "drew the plan" not in captured.out and "wrote the report" not in captured.out


def test_run_gives_the_script_everything_after_it(tmp_path):
    seen = tmp_path / "argv.txt"
    script = tmp_path / "echo_args.py"
    script.write_text(f"import sys\nopen({str(seen)!r}, 'w').write(repr(sys.argv[1:]))\n")
    assert main(["run", str(script), "--svg", str(tmp_path / "theirs.svg"), "--master", "x"]) == 0
    assert seen.read_text() == repr(["--svg", str(tmp_path / "theirs.svg"), "--master", "x"])
    assert not (tmp_path / "theirs.svg").exists()


@pytest.mark.parametrize("scriptArgs", [["--", "x"], ["--"], ["a", "--", "x"], ["--", "--", "x"]])
def test_run_gives_the_script_a_separator_as_python_would(tmp_path, scriptArgs):
    seen = tmp_path / "argv.txt"
    script = tmp_path / "echo_args.py"
    script.write_text(f"import sys\nopen({str(seen)!r}, 'w').write(repr(sys.argv[1:]))\n")
    assert main(["run", str(script), *scriptArgs]) == 0
    assert seen.read_text() == repr(scriptArgs)


def test_run_refuses_an_unknown_option_before_the_script(tmp_path, capsys):
    script = tmp_path / "job.py"
    script.write_text("")
    with pytest.raises(SystemExit) as exit:
        main(["run", "--top", "5", str(script)])
    assert exit.value.code == 2
    assert "sparkjet's options go before SCRIPT, the script's own after it" in capsys.readouterr().err


def test_run_asked_for_a_report_of_a_script_without_jobs_says_so(tmp_path, capsys):
    script = tmp_path / "idle.py"
    script.write_text("print('no job')\n")
    assert main(["run", "--html", str(tmp_path / "report.html"), str(script)]) == 1
    assert capsys.readouterr().err == f"sparkjet: {script} submitted no job\n"


def test_help_shows_how_to_draw_and_report_a_run(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert "sparkjet run --svg plan.svg --html report.html -m sparkjet.examples.word_count" in out


@pytest.mark.spark
def test_run_shows_progress_on_a_terminal_and_erases_it(spark, tmp_path, monkeypatch):
    script = tmp_path / "slow.py"
    script.write_text(
        "from sparkjet.planner import Jet\n"
        "from tests.planner.test_progress import slowPipeline\n"
        "Jet().newJob(slowPipeline(), name='slow-run').join()\n"
    )
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["run", str(script)]) == 0
    assert any(text.startswith("slow-run: stage ") for text in shownLines(terminal))
    assert terminal.getvalue().endswith(CLEAR_LINE)


def test_version_names_the_installed_package(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"sparkjet {importlib.metadata.version('sparkjet')}\n"


def test_html_after_the_script_is_the_scripts_and_sparkjet_says_it_wrote_no_report(tmp_path, capsys):
    seen = tmp_path / "argv.txt"
    script = tmp_path / "echo_args.py"
    script.write_text(f"import sys\nopen({str(seen)!r}, 'w').write(repr(sys.argv[1:]))\n")
    assert main(["run", str(script), "--html", "report.html"]) == 0
    assert seen.read_text() == "['--html', 'report.html']"
    assert not (tmp_path / "report.html").exists()
    assert (
        f"sparkjet: --html after {script} went to the script, so sparkjet wrote no report; sparkjet's "
        f"options go before SCRIPT: sparkjet run --html FILE {script}"
    ) in capsys.readouterr().err


HABITS_SCRIPT = """
from sparkjet.pipeline import Pipeline, Sources
p = Pipeline.create()
words = p.readFrom(Sources.items(["a", "b", "a"]))
words.{call}
"""


@pytest.mark.parametrize(
    "call, said",
    [
        ("count()", "'BatchStage' object has no attribute 'count': sparkjet speaks Jet; use "
                    ".aggregate(AggregateOperations.counting())"),
        ("groupingKey(str).reduceByKey(max)", "'BatchStageWithKey' object has no attribute 'reduceByKey': "
                                              "sparkjet speaks Jet; use .aggregate(AggregateOperations.reducing("),
        ("collect()", "use .writeTo(Sinks.list(name)), then jet.getList(name) once the job has run"),
        ("join(words)", "use .hashJoin(other, JoinClause.onKeys(leftKeyFn, rightKeyFn), mapFn)"),
        ("groupingkey(str)", "AttributeError: 'BatchStage' object has no attribute 'groupingkey'. "
                             "Did you mean: 'groupingKey'?"),
    ],
)
def test_pyspark_habits_get_jets_names_and_typos_pythons_suggestion(tmp_path, capsys, call, said):
    script = tmp_path / "habit.py"
    script.write_text(HABITS_SCRIPT.format(call=call))
    assert main(["run", str(script)]) == 1
    assert said in capsys.readouterr().err


def test_a_misspelt_name_keeps_pythons_suggestion(tmp_path, capsys):
    script = tmp_path / "typo.py"
    script.write_text("from sparkjet.pipeline import Pipeline\nPipeline.create()\nPipelin.create()\n")
    assert main(["run", str(script)]) == 1
    assert "NameError: name 'Pipelin' is not defined. Did you mean: 'Pipeline'?" in capsys.readouterr().err


JOBS = "sparkjet_cli_jobs"
"""A package of the user's jobs, on sys.path as if installed: what ``-m`` names."""

ECHO_MODULE = "import sys\nopen({seen!r}, 'w').write(repr([__name__, sys.argv]))\n"


@pytest.fixture
def jobs(tmp_path, monkeypatch):
    """The directory of package ``JOBS``, importable for the test, forgotten after it."""
    package = tmp_path / "site" / JOBS
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(package.parent))
    yield package
    for name in [name for name in sys.modules if name.split(".")[0] == JOBS]:
        del sys.modules[name]


def test_plan_takes_a_module_where_the_script_stands(jobs, tmp_path, capsys):
    (jobs / "job.py").write_text(SCRIPT.format(directory=str(tmp_path / "absent-until-run")))
    dot = tmp_path / "plan.dot"
    assert main(["plan", "-m", f"{JOBS}.job", "--dot", str(dot)]) == 0
    assert '"group-and-aggregate-prepare" -> "group-and-aggregate"' in dot.read_text()
    captured = capsys.readouterr()
    assert captured.out == "script ran\n"
    assert captured.err.startswith("wrote the Core DAG of job-") and captured.err.endswith(f" to {dot}\n")


def test_run_runs_a_module_with_everything_after_it_as_python_m_does(jobs, tmp_path):
    seen = tmp_path / "seen.txt"
    (jobs / "echo.py").write_text(ECHO_MODULE.format(seen=str(seen)))
    moduleArgs = ["--svg", "theirs.svg", "--", "x"]
    done = run(
        [sys.executable, "-m", f"{JOBS}.echo", *moduleArgs], env={**os.environ, "PYTHONPATH": str(jobs.parent)}, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    byPython = seen.read_text()
    assert main(["run", "-m", f"{JOBS}.echo", *moduleArgs]) == 0
    assert seen.read_text() == byPython == repr(["__main__", [str(jobs / "echo.py"), *moduleArgs]])


def test_html_after_a_module_is_the_modules_and_the_note_says_where_it_goes(jobs, tmp_path, capsys):
    (jobs / "echo.py").write_text(ECHO_MODULE.format(seen=str(tmp_path / "seen.txt")))
    assert main(["run", "-m", f"{JOBS}.echo", "--html", "report.html"]) == 0
    assert (
        f"sparkjet: --html after -m {JOBS}.echo went to the script, so sparkjet wrote no report; sparkjet's "
        f"options go before SCRIPT: sparkjet run --html FILE -m {JOBS}.echo"
    ) in capsys.readouterr().err


def test_planning_the_packaged_word_count_prints_the_plan_and_no_results(capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, "sparkjet.examples.word_count", raising=False)  # run it as python -m would
    assert main(["plan", "-m", "sparkjet.examples.word_count", "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Core DAG of 5 vertices and 4 edges\n")
    assert "most frequent words" not in out


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_missing_module_exits_with_a_reason(command, capsys):
    assert main([command, "-m", "sparkjet.examples.absent"]) == 2
    assert capsys.readouterr().err == "sparkjet: no module named 'sparkjet.examples.absent'\n"


@pytest.mark.spark
def test_the_packaged_word_count_counts_a_file_or_a_directory_given_after_it(spark, tmp_path, corpusLines, capsys):
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "first [part].txt").write_text("\n".join(corpusLines[:300]) + "\n")
    (texts / "second.txt").write_text("\n".join(corpusLines[300:500]) + "\n")
    for path, lines in ((texts, corpusLines[:500]), (texts / "first [part].txt", corpusLines[:300])):
        assert main(["run", "-m", "sparkjet.examples.word_count", str(path), "--top", "4"]) == 0
        counts = Counter(word for line in lines for word in tokenize(line))
        expected = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))[:4]
        assert capsys.readouterr().out.splitlines() == [
            f"The 4 most frequent words in {path}:", *(f"{count:>8}  {word}" for word, count in expected)
        ]
