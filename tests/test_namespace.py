"""sparkjet installs as one namespace: a user's own pipeline.py or an installed package called
pipeline or planner cannot shadow it, and the wheel holds sparkjet/ with its py.typed."""

import sys
import textwrap
import zipfile

from tests.conftest import run

USER_FACING = ("Pipeline", "Sources", "Sinks", "AggregateOperations", "wholeItem", "Jet", "plan")


def test_the_user_facing_names_come_from_sparkjet_itself():
    import sparkjet

    assert all(hasattr(sparkjet, name) for name in USER_FACING)
    assert set(sparkjet.__all__) >= set(USER_FACING)


def test_a_users_own_pipeline_and_planner_modules_do_not_shadow_sparkjet(tmp_path):
    for name in ("pipeline", "planner", "coredag"):
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the user\\'s own {name}.py was imported')\n")
    installed = tmp_path / "site" / "pipeline"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("raise ImportError('the PyPI package pipeline was imported')\n")
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            """
            from sparkjet import AggregateOperations, Pipeline, Sinks, Sources, plan, wholeItem

            p = Pipeline.create()
            (p.readFrom(Sources.items(["a", "b", "a"])).groupingKey(wholeItem())
              .aggregate(AggregateOperations.counting()).writeTo(Sinks.list("counts")))
            print(len(plan(p).vertices()))
            """
        )
    )
    result = run([sys.executable, str(script)], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "4"


def test_the_wheel_installs_the_three_directories_under_sparkjet_with_py_typed(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "sparkjet/__init__.py",
        "sparkjet/py.typed",
        "sparkjet/pipeline/pipeline.py",
        "sparkjet/planner/jet.py",
        "sparkjet/coredag/model/dag.py",
        "sparkjet/coredag/runtime/log4j2.properties",
    } <= names
    assert not {name for name in names if name.split("/")[0] in ("pipeline", "planner", "coredag")}
    assert not {name for name in names if name.startswith("sparkjet/planner/sparkjet/")}
