"""Imports go one way: pipeline never imports planner, coredag neither, and inside coredag the
model, the Processor API, the built-in processors and the Spark runtime build on each other in
that order, with only the runtime importing pyspark; the runtime asks a processor supplier
nothing but its declared capabilities."""

import ast
import pathlib

import pytest

from tests.conftest import PROJECT

PACKAGES = {"pipeline": "sparkjet.pipeline", "planner": "sparkjet.planner", "coredag": "sparkjet.coredag"}
LAYERS = ("model", "api", "processors", "runtime")
"""The layers of sparkjet.coredag, each allowed to import those before it."""


def moduleName(path: pathlib.Path) -> str:
    """Return the name ``path`` installs as: ``coredag/model/dag.py`` -> ``sparkjet.coredag.model.dag``."""
    parts = path.relative_to(PROJECT).with_suffix("").parts
    if parts[:2] == ("planner", "sparkjet"):
        return ".".join(("sparkjet",) + parts[2:]).removesuffix(".__init__")
    return ".".join((PACKAGES[parts[0]],) + parts[1:]).removesuffix(".__init__")


def importsOf(path: pathlib.Path) -> set[str]:
    """Return the modules ``path`` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


MODULES = {moduleName(path): path for top in PACKAGES for path in sorted((PROJECT / top).rglob("*.py"))}


def layerOf(module: str) -> str | None:
    """Return the coredag layer of ``module``, or None outside the four layers."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["sparkjet", "coredag"] and len(parts) > 2 and parts[2] in LAYERS else None


def test_every_module_installs_under_sparkjet():
    assert all(name.startswith("sparkjet.") or name == "sparkjet" for name in MODULES)
    assert all(not name.partition(".")[0] in PACKAGES for path in MODULES.values() for name in importsOf(path))


@pytest.mark.parametrize("module", [name for name in MODULES if name.startswith("sparkjet.coredag")])
def test_coredag_imports_neither_the_pipeline_nor_the_planner(module):
    imported = importsOf(MODULES[module])
    assert not {name for name in imported if name.startswith(("sparkjet.pipeline", "sparkjet.planner"))}


@pytest.mark.parametrize("module", [name for name in MODULES if name.startswith("sparkjet.pipeline")])
def test_the_pipeline_never_imports_the_planner(module):
    assert not {name for name in importsOf(MODULES[module]) if name.startswith("sparkjet.planner")}


@pytest.mark.parametrize("module", [name for name in MODULES if layerOf(name)])
def test_each_coredag_layer_imports_only_the_layers_below_it(module):
    allowed = LAYERS[: LAYERS.index(layerOf(module)) + 1]
    above = {name for name in importsOf(MODULES[module]) if layerOf(name) and layerOf(name) not in allowed}
    assert not above, f"{module} ({layerOf(module)}) imports {sorted(above)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_spark_runtime_imports_pyspark(module):
    spark = {name for name in importsOf(MODULES[module]) if name.partition(".")[0] in ("pyspark", "py4j")}
    assert not spark or layerOf(module) == "runtime", f"{module} imports {sorted(spark)}"


def test_the_runtime_asks_suppliers_nothing_but_their_capabilities():
    """What a supplier's processors do, the runtime reads from its ``Capabilities``; its only
    getattr/hasattr calls left are on the user's objects: a state key's optional
    ``partitionKey()`` (Jet's ``PartitionAware``, in processor_state.py) and a processor's optional
    count of late events dropped (in tasklet.py)."""
    probes = [
        f"{module}:{call.lineno}"
        for module, path in MODULES.items()
        if module.startswith("sparkjet.coredag.runtime")
        for call in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr")
    ]
    assert len(probes) <= 2, f"getattr/hasattr in the runtime: {probes}"


@pytest.mark.parametrize("module", [name for name in MODULES if layerOf(name) == "runtime"])
def test_the_runtime_reads_no_source_processors_module(module):
    """What a path is (``isHadoopUrl``) lives in the model, with the other paths a user gives."""
    assert "sparkjet.coredag.processors.sources" not in importsOf(MODULES[module])
