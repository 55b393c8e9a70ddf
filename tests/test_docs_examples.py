"""Every Python block of the README and of the docs runs, so no example rots: a page's blocks run
in order in one namespace, in a directory holding ``books/`` (the guide's input, a slice of the
bundled corpus), as a reader would run them one after the other. Where the text after a block
says what it prints, the next block shows exactly that; a word count's counts are compared with
an independent count."""

import contextlib
import io
import re
from collections import Counter

import pytest

from tests.conftest import PROJECT, tokenize

PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
FENCE = re.compile(r"^```(\S*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
LINES_IN_BOOKS = 300


def pages() -> list:
    """Return the README and the docs' Markdown pages that hold Python blocks."""
    documents = [PROJECT / "README.md", *sorted((PROJECT / "docs").rglob("*.md"))]
    documents = [path for path in documents if "_build" not in path.parts]
    return [path for path in documents if PYTHON_BLOCK.search(path.read_text(encoding="utf-8"))]


def pageParameter(path):
    """A page as a test parameter, marked ``spark`` when its examples run a job."""
    marks = [pytest.mark.spark] if "Jet(" in path.read_text(encoding="utf-8") else []
    return pytest.param(path, id=str(path.relative_to(PROJECT)), marks=marks)


def examples(path) -> list[tuple[int, str, str | None]]:
    """Return each Python block of ``path`` with the line it starts at and, where the prose right
    after it says what it prints, the block that follows that prose (else None)."""
    text = path.read_text(encoding="utf-8")
    fences = list(FENCE.finditer(text))
    found = []
    for fence, following in zip(fences, [*fences[1:], None]):
        if fence.group(1) != "python":
            continue
        between = text[fence.end():following.start()] if following else ""
        shown = following.group(2) if following and "prints" in between and following.group(1) != "python" else None
        found.append((text.count("\n", 0, fence.start()) + 2, fence.group(2), shown))
    return found


@pytest.fixture
def books(tmp_path, corpusLines, monkeypatch):
    """A working directory holding ``books/``, and the Counter of its words."""
    (tmp_path / "books").mkdir()
    lines = corpusLines[:LINES_IN_BOOKS]
    (tmp_path / "books" / "a.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return Counter(word for line in lines for word in tokenize(line))


@pytest.mark.parametrize("page", [pageParameter(path) for path in pages()])
def test_every_python_block_of_a_page_runs(page, books, request):
    if "Jet(" in page.read_text(encoding="utf-8"):
        request.getfixturevalue("spark")  # the suite's session: the examples' Jet() runs on it
    namespace = {"__name__": "__docs_example__"}
    for line, code, shown in examples(page):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{page}:{line}", "exec"), namespace)
        if shown is not None:
            assert printed.getvalue() == shown, f"the block after {page.name}:{line} shows other output"
    if "counts" in namespace and isinstance(namespace["counts"], dict):
        assert namespace["counts"] == books


def test_the_examples_are_found_on_the_pages_that_teach_with_them():
    found = {str(path.relative_to(PROJECT)) for path in pages()}
    assert {"README.md", "docs/guide/pipeline.md", "docs/guide/streams.md", "docs/guide/core-dag.md"} <= found
