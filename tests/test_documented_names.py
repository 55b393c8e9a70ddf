"""Every name of sparkjet's that the README, the docs and the tutorials use is importable from ``sparkjet``:
the names their Python code blocks import or use without defining, and those their text shows
called (``writePlanSvg(p, path)``) or reached into (``ItemsByTag.get(tag)``)."""

import ast
import builtins
import importlib
import inspect
import pkgutil
import re

import pytest

import sparkjet
from tests.conftest import PROJECT

DOCUMENTS = [
    PROJECT / "README.md",
    *sorted((PROJECT / "tutorials").glob("*.md")),
    *sorted(path for path in (PROJECT / "docs").rglob("*.md") if "_build" not in path.parts),
]
CODE_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
ANY_BLOCK = re.compile(r"```.*?```", re.DOTALL)
CALLED_OR_REACHED = re.compile(r"`([A-Za-z_]\w*)[(.][^`\n]*`")


def definedBySparkjet() -> dict[str, str]:
    """Return the public classes and functions sparkjet's three packages define at the top of a
    module, by name, each with its module; less the names of methods of what ``sparkjet``
    exports (``fileWatcher`` is ``Sources.fileWatcher`` in the text). The examples that ship
    with sparkjet (``planner/sparkjet/examples``, whose names tutorial 01 gives with their module)
    are not among them."""
    defined = {}
    for package in ("sparkjet.pipeline", "sparkjet.planner", "sparkjet.coredag"):
        root = importlib.import_module(package)
        modules = pkgutil.walk_packages(root.__path__, f"{package}.")
        for module in (module for module in modules if not module.name.startswith("sparkjet.planner.sparkjet")):
            for name, value in vars(importlib.import_module(module.name)).items():
                isOwn = (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ == module.name
                if isOwn and not name.startswith("_"):
                    defined.setdefault(name, module.name)
    methods = {name for export in sparkjet.__all__ for name in dir(getattr(sparkjet, export))}
    return {name: module for name, module in defined.items() if name not in methods}


def tutorialsOwnNames() -> set[str]:
    """Return the names the tutorials' scripts define themselves (``main``, ``words``...)."""
    scripts = (PROJECT / "tutorials").glob("*.py")
    trees = [ast.parse(script.read_text(encoding="utf-8")) for script in scripts]
    return {node.name for tree in trees for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def freeNames(code: str) -> set[str]:
    """Return the names a code block uses without defining or importing them."""
    tree = ast.parse(code)
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    bound |= {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    bound |= {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return used - bound - set(dir(builtins))


def importedFromSparkjet(code: str) -> set[str]:
    """Return the names a code block imports with ``from sparkjet import ...``."""
    imports = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.ImportFrom)]
    return {alias.name for node in imports if node.module == "sparkjet" for alias in node.names}


def namesUsed(document) -> set[str]:
    """Return the names ``document``'s code blocks use freely or import from sparkjet, and those
    its text shows called or reached into."""
    text = document.read_text(encoding="utf-8")
    blocks = CODE_BLOCK.findall(text)
    inBlocks = {name for block in blocks for name in freeNames(block) | importedFromSparkjet(block)}
    return inBlocks | set(CALLED_OR_REACHED.findall(ANY_BLOCK.sub("", text)))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(PROJECT)))
def test_every_name_of_sparkjets_a_document_uses_comes_from_sparkjet(document):
    ours = definedBySparkjet()
    used = namesUsed(document) - tutorialsOwnNames()
    missing = {name: ours[name] for name in used if name in ours and not hasattr(sparkjet, name)}
    assert missing == {}, f"{document.name} uses these, which `from sparkjet import ...` cannot give"
    assert all(name in sparkjet.__all__ for name in used if hasattr(sparkjet, name) and name in ours)


def test_the_readme_draws_plans_with_a_name_sparkjet_exports():
    assert "writePlanSvg" in namesUsed(PROJECT / "README.md")
    from sparkjet import writePlanSvg

    assert writePlanSvg.__module__ == "sparkjet.planner.render"
