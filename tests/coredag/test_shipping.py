"""What a session on a cluster ships: one zip of sparkjet and its pure-Python dependencies,
named by its content; the settings that let the executors' daemon import it. No JVM."""

import importlib
import os
import zipfile

import pytest

from sparkjet.coredag.runtime import session, shipping


@pytest.fixture(autouse=True)
def keptEnvironment(monkeypatch):
    """Restore the variables that making a session's settings sets in this process."""
    for key in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        if key in os.environ:
            monkeypatch.setenv(key, os.environ[key])
        else:
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shipping.buildBundle(tmp_path_factory.mktemp("cache"))


def test_the_zip_holds_sparkjet_and_its_pure_python_dependencies_but_not_spark(built):
    names = zipfile.ZipFile(built.zipPath).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"sparkjet", "attr", "attrs", "toolz", "tlz", "cloudpickle", "graphviz", "fsspec"}
    assert built.packages == tops and built.shipsSparkjet
    for module in ("sparkjet/__init__.py", "sparkjet/pipeline/stage.py", "sparkjet/planner/jet.py",
                   "sparkjet/coredag/runtime/worker_daemon.py", "sparkjet/coredag/runtime/log4j2.properties",
                   "sparkjet/py.typed", "attrs/__init__.py", "tlz/__init__.py"):
        assert module in names
    assert not [name for name in names if "__pycache__" in name or name.endswith((".pyc", ".so"))]
    assert not [name for name in names if name.startswith("sparkjet/planner/sparkjet/")]


def test_a_package_directory_imported_under_a_second_name_ships_once(tmp_path):
    """An editable install's planner/ holds sparkjet/ (the package ``sparkjet``), which a walk of
    ``sparkjet.planner``'s modules imports again as ``sparkjet.planner.sparkjet``."""
    importlib.import_module("sparkjet.planner.sparkjet")
    names = zipfile.ZipFile(shipping.buildBundle(tmp_path).zipPath).namelist()
    assert "sparkjet/__init__.py" in names
    assert not [name for name in names if name.startswith("sparkjet/planner/sparkjet/")]


def test_mmh3_travels_beside_the_zip_as_its_extension_module(built):
    assert [path.name.split(".")[0] for path in built.extensions] == ["mmh3"]
    assert built.extensions[0].suffix == ".so" and built.extensions[0].is_file()


def test_the_zip_is_named_by_its_content_and_built_once(built, tmp_path):
    assert built.zipPath.name.startswith("sparkjet-") and built.zipPath.suffix == ".zip"
    again = shipping.buildBundle(built.zipPath.parent)
    assert again.zipPath == built.zipPath
    assert [path.name for path in built.zipPath.parent.iterdir()] == [built.zipPath.name]
    assert shipping.buildBundle(tmp_path).zipPath.read_bytes() == built.zipPath.read_bytes()


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*,4]", "local-cluster[2,1,1024]"])
def test_local_masters_ship_nothing_and_their_workers_get_this_path_and_sparkjets_daemon(master):
    settings = session._sparkjetSettings(started=True, master=master)
    assert not shipping.shipsTo(master)
    assert settings["spark.python.daemon.module"] == session.WORKER_DAEMON
    assert shipping.__file__.rsplit("/coredag/", 1)[0] in settings["spark.executorEnv.PYTHONPATH"].split(":")


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://host:443"])
def test_other_masters_get_the_zip_alone_on_the_executors_path(master, monkeypatch, built):
    monkeypatch.setattr(shipping, "_bundle", built)
    settings = session._sparkjetSettings(started=False, master=master)
    assert shipping.shipsTo(master)
    assert settings["spark.executorEnv.PYTHONPATH"] == built.zipPath.name, "the driver's paths mean nothing there"
    assert settings["spark.python.daemon.module"] == session.WORKER_DAEMON
    assert "spark.ui.enabled" not in settings


def test_without_sparkjet_in_the_zip_the_executors_run_pysparks_daemon(monkeypatch, built):
    monkeypatch.setattr(shipping, "_bundle", shipping.Bundle(built.zipPath, (), frozenset({"attrs"})))
    settings = session._sparkjetSettings(started=False, master="spark://127.0.0.1:7077")
    assert "spark.python.daemon.module" not in settings


def test_a_users_executor_pythonpath_is_kept_behind_the_zip(monkeypatch, built):
    from pyspark import SparkConf

    monkeypatch.setattr(shipping, "_bundle", built)
    conf = SparkConf(loadDefaults=False).set("spark.master", "spark://h:7077")
    conf.set("spark.executorEnv.PYTHONPATH", "/opt/mine")
    session._addShippedZipToExecutorPath(conf)
    assert conf.get("spark.executorEnv.PYTHONPATH") == f"{built.zipPath.name}:/opt/mine"
