"""The daemon of sparkjet's Python workers imports PySpark from its installed package."""

import pytest

from sparkjet.coredag.runtime.worker_daemon import bundledZipsOfInstalledPackages
from sparkjet.pipeline import Pipeline, Sinks, Sources


def installedPyspark(packages, withPy4j: bool = True):
    """Lay out ``packages`` as pip does: pyspark with its bundled zips, py4j beside it."""
    lib = packages / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (packages / "pyspark" / "__init__.py").write_text("")
    if withPy4j:
        (packages / "py4j").mkdir()
        (packages / "py4j" / "__init__.py").write_text("")
    for name in ("pyspark.zip", "py4j-0.10.9.9-src.zip"):
        (lib / name).write_bytes(b"")
    return str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")


def test_the_zips_of_a_pyspark_installed_on_the_path_are_dropped(tmp_path):
    pysparkZip, py4jZip = installedPyspark(tmp_path)
    path = [pysparkZip, py4jZip, "/elsewhere", str(tmp_path)]
    assert bundledZipsOfInstalledPackages(path) == {pysparkZip, py4jZip}


def test_a_py4j_zip_stays_where_py4j_is_not_installed(tmp_path):
    pysparkZip, py4jZip = installedPyspark(tmp_path, withPy4j=False)
    assert bundledZipsOfInstalledPackages([pysparkZip, py4jZip, str(tmp_path)]) == {pysparkZip}


def test_zips_of_a_spark_home_not_on_the_path_stay(tmp_path):
    pysparkZip, py4jZip = installedPyspark(tmp_path / "spark-home")
    assert bundledZipsOfInstalledPackages([pysparkZip, py4jZip, "/elsewhere"]) == set()


def test_other_zips_stay(tmp_path):
    other = tmp_path / "pyspark" / "python" / "lib" / "mine.zip"
    installedPyspark(tmp_path)
    other.write_bytes(b"")
    assert bundledZipsOfInstalledPackages([str(other), str(tmp_path)]) == set()


@pytest.mark.spark
def test_a_python_worker_imports_pyspark_and_py4j_from_their_packages(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([0])).map(
        lambda _: (__import__("pyspark").__file__, __import__("py4j").__file__)
    ).writeTo(Sinks.list("importedFrom"))
    jet.newJob(p).join()
    [(pyspark, py4j)] = jet.getList("importedFrom")
    assert pyspark.endswith("/pyspark/__init__.py") and ".zip" not in pyspark
    assert py4j.endswith("/py4j/__init__.py") and ".zip" not in py4j
