"""Markdown tables, as RESULTS.md writes them."""


def row(cells: tuple[str, ...] | list[str]) -> str:
    """Return one Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def head(columns: tuple[str, ...], text: set[int]) -> list[str]:
    """Return a table's header rows: columns ``text`` aligned left, the numbers right."""
    return [row(columns), row(["---" if i in text else "--:" for i in range(len(columns))])]
