"""The docs site's sources: the API reference documents every name ``sparkjet`` exports (and leaves out the library's own calls), each page
is reachable from a table of contents, and neither the docs, the tutorials they show nor the README cite what only the
team knows (seed documents, issue numbers, commit hashes). ``make docs`` builds the site and fails
on any warning; CI runs it."""

import importlib
import inspect
import re

import pytest

import sparkjet
from tests.conftest import PROJECT

DOCS = PROJECT / "docs"
AUTODOC = re.compile(r"^\.\. auto(?:class|function):: (\S+)$", re.MULTILINE)
TOCTREE = re.compile(r"^```\{toctree\}\n(.*?)^```", re.DOTALL | re.MULTILINE)
INTERNAL = re.compile(r"\bseed 0\d\d|\bseed[- ]\d{3}\b|\bissue \d+|\bissues? #\d+|\b(?:at|commit) [0-9a-f]{7,40}\b", re.IGNORECASE)


def sourcePages() -> list:
    """Return the docs' Markdown pages, the build left out."""
    return sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.parts)


def documentedNames() -> list[str]:
    """Return the names the API reference's pages document, as autodoc is given them."""
    return [name for page in sorted((DOCS / "api").glob("*.md")) for name in AUTODOC.findall(page.read_text())]


def test_the_api_reference_documents_every_name_sparkjet_exports_once():
    documented = documentedNames()
    exported = {f"sparkjet.{name}" for name in sparkjet.__all__}
    assert exported - set(documented) == set()
    assert len(documented) == len(set(documented))


def test_every_page_is_in_a_table_of_contents():
    listed = {DOCS / "index.md"}
    for page in sourcePages():
        for block in TOCTREE.findall(page.read_text()):
            entries = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(":")]
            listed |= {(page.parent / f"{entry}.md").resolve() for entry in entries}
    assert [str(page.relative_to(DOCS)) for page in sourcePages() if page.resolve() not in listed] == []


READ_BY_USERS = [PROJECT / "README.md", *sourcePages(), *sorted((PROJECT / "tutorials").glob("*.md"))]


@pytest.mark.parametrize("page", READ_BY_USERS, ids=lambda path: str(path.relative_to(PROJECT)))
def test_no_page_cites_what_only_the_team_knows(page):
    assert INTERNAL.findall(page.read_text(encoding="utf-8")) == []


def test_the_tutorials_the_docs_include_are_every_tutorial():
    included = {page.name for page in (DOCS / "tutorials").glob("[0-9][0-9]_*.md")}
    assert included == {page.name for page in (PROJECT / "tutorials").glob("[0-9][0-9]_*.md")}


def documentedObject(dottedName: str):
    """Return the object an API page documents, by the dotted name autodoc is given."""
    module, _, name = dottedName.rpartition(".")
    while True:
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError:
            module, _, outer = module.rpartition(".")
            name = f"{outer}.{name}"
            return getattr(documentedObject(f"{module}.{outer}"), name.split(".")[-1])


def test_no_docstring_the_reference_shows_cites_what_only_the_team_knows():
    cited = {}
    for dottedName in documentedNames():
        documented = documentedObject(dottedName)
        members = vars(documented).items() if inspect.isclass(documented) else []
        for name, value in [("", documented), *members]:
            found = INTERNAL.findall(inspect.getdoc(value) or "") if not name.startswith("_") else []
            if found:
                cited[f"{dottedName}.{name}".rstrip(".")] = found
    assert cited == {}


EXCLUDED = re.compile(r"^\.\. autoclass:: (\S+)\n   :exclude-members: (.+)$", re.MULTILINE)


def excludedMembers() -> list[tuple[str, str]]:
    """Return each (class, member) an API page leaves out of the reference: the library's own calls."""
    return [
        (dottedName, member.strip())
        for page in sorted((DOCS / "api").glob("*.md"))
        for dottedName, members in EXCLUDED.findall(page.read_text())
        for member in members.split(",")
    ]


def test_the_members_the_reference_leaves_out_exist_and_no_page_a_user_reads_calls_them():
    """The stage-building calls (``Pipeline.attach``...) are the library's own; a member renamed
    would show up again unnoticed, and one a tutorial calls must be documented."""
    left = excludedMembers()
    assert left, "the API pages leave no member out"
    assert [f"{name}.{member}" for name, member in left if not hasattr(documentedObject(name), member)] == []
    called = {
        f"{name}.{member}": str(page.relative_to(PROJECT))
        for name, member in left
        for page in READ_BY_USERS + sorted((PROJECT / "tutorials").glob("*.py"))
        if re.search(rf"\.{member}\(", page.read_text(encoding="utf-8"))
    }
    assert called == {}
