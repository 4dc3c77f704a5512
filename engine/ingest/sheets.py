"""Spreadsheets (XLSX, CSV) as documents: control matrices, requirement registers, policy schedules. Pure: the
caller reads the cells.

A sheet whose rows each carry an id in one column (a control matrix: "A&A-01 | Audit and Assurance Policy and
Procedures | Establish, document, approve ... | Quarterly") is rendered a section per row, headed by its id and
its title (the cell of a column headed "... Title", "... Name"), so a control is cited by its id as a catalogue's
is; its longest text as the body, each other cell after its column's header ("Frequency: Quarterly"), which a
cell alone does not say. Any other sheet is a Markdown table under
the sheet's name, its header row first (engine.ingest.chunking keeps a small table whole with its header).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from engine.ingest.sections import markdown_table
from engine.text import normalize_ws

# an id as control matrices write them: "A&A-01", "AC-2", "AC-2(1)", "ISM-0039", "PR.AC-1", "CC6.1", "5.1.2", "V2.1.1"
# (a space only before a number: "CIS 1.1", never "Audit and Assurance 2")
_ID = re.compile(r"^(?=[A-Za-z0-9&.\-() ]*\d)(?:[A-Z][A-Za-z0-9&]*(?:[.\-][A-Za-z0-9&]+|\s\d[\d.]*)*|\d+(?:\.\d+)+)"
                 r"(?:\(\d+\))?$")
_TITLE_WORDS = 14  # a title cell is short
_TITLED = re.compile(r"\b(?:title|name|heading|subject|topic)\b", re.IGNORECASE)  # the column that names a row


# A catalogue's own id, as cited: letters, then pieces joined by '-' or '.', with a number ("MSTG-ARCH-1",
# "A&A-01", "PR.AC-1"), not a row's ordinal ("1.1") nor a group's mark ("V1")
_CATALOGUE_ID = re.compile(r"^[A-Z][A-Za-z0-9&]*(?:[.\-][A-Za-z0-9&]+)+(?:\(\d+\))?$")
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})  # typographic hyphens: a non-breaking one keeps an id whole


def _cell(value: object) -> str:
    """A cell as text: whitespace and line breaks read as single spaces, a bar (a table's separator) as a slash, a
    typographic hyphen as a hyphen ("MSTG-STORAGE\u20111" is cited, and typed, "MSTG-STORAGE-1")."""
    return normalize_ws(str(value)).replace("|", "/").translate(_HYPHENS) if value is not None else ""


def _header(rows: list[list[str]]) -> int | None:
    """The header row's index: the first row with two or more filled cells, with a row under it."""
    return next((i for i, row in enumerate(rows) if sum(bool(c) for c in row) >= 2 and i + 1 < len(rows)), None)


def _id_columns(header: list[str], body: list[list[str]]) -> list[int]:
    """The columns holding ids: most of their cells look like ids, nearly all of them different."""
    found = []
    for column in range(len(header)):
        values = [row[column] for row in body if column < len(row) and row[column]]
        if len(values) >= 2 and sum(bool(_ID.match(v)) for v in values) >= 0.8 * len(values) \
                and len(set(values)) >= 0.9 * len(values):
            found.append(column)
    return found


def _id_column(columns: list[int], body: list[list[str]]) -> int | None:
    """Of the columns holding ids, the one a reader cites a row by: a catalogue's own ids ("MSTG-ARCH-1") before
    a row's ordinal ("1.1") or a group's mark ("V1"); else the first."""
    def cited(column: int) -> float:
        values = [row[column] for row in body if row[column]]
        return sum(bool(_CATALOGUE_ID.match(v)) for v in values) / len(values)

    return max(columns, key=cited, default=None)


def _words(column: int, body: list[list[str]]) -> float:
    values = [len(row[column].split()) for row in body if column < len(row) and row[column]]
    return sum(values) / len(values) if values else 0.0


class Sheet(NamedTuple):
    """A sheet as Markdown, and the headers of the columns its rows' "Header: value" lines come from (a control
    matrix's level ticks, status, testing procedure: what describes a row, not what it requires)."""

    markdown: str
    fields: frozenset[str] = frozenset()


def render(name: str, cells: Sequence[Sequence[object]]) -> Sheet:
    """One sheet (its `name`, its rows of cell values) as Markdown, under a `## name` heading."""
    rows = [[_cell(v) for v in row] for row in cells]
    rows = [row for row in rows if any(row)]
    if not rows:
        return Sheet("")
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    filled = [c for c in range(width) if any(row[c] for row in rows)]
    rows = [[row[c] for c in filled] for row in rows]
    top = _header(rows)
    if top is None:  # a list, not a table: its cells as paragraphs
        return Sheet("\n\n".join([f"## {name}", *(" ".join(c for c in row if c) for row in rows)]))
    header, body = rows[top], rows[top + 1:]
    lead = [" ".join(c for c in row if c) for row in rows[:top]]  # a title or note above the table
    header = [h or f"Column {i + 1}" for i, h in enumerate(header)]
    columns = _id_columns(header, body)
    ident = _id_column(columns, body)
    out = [f"## {name}", *lead]
    if ident is None:
        out.append(markdown_table(body, header))
        return Sheet("\n\n".join(out))
    others = [c for c in range(len(header)) if c != ident]
    main = max(others, key=lambda c: _words(c, body), default=None)
    title = next((c for c in others if c != main and _TITLED.search(header[c]) and 0 < _words(c, body) <= _TITLE_WORDS),
                 None)

    def group(row: list[str]) -> str | None:
        """A row that heads the rows under it: no id of the cited kind, a mark in another id column, a few words
        ("V1 | | Architecture, design and threat modelling")."""
        filled = [c for c in range(len(row)) if row[c]]
        if row[ident] or not any(row[c] for c in columns) or sum(len(row[c].split()) for c in filled) > _TITLE_WORDS:
            return None
        return " ".join(row[c] for c in filled)

    grouped = any(group(row) for row in body)
    for row in body:
        if (heads := group(row)) is not None:
            out.append(f"### {heads}")
            continue
        if not row[ident]:  # a row without an id goes on the one above it ("continued ...")
            out.append(" ".join(f"{header[c]}: {row[c]}" for c in others if row[c]))
            continue
        out.append(f"{'####' if grouped else '###'} {row[ident]} {row[title] if title is not None else ''}".rstrip())
        if main is not None and row[main]:
            out.append(row[main])
        out.extend(f"{header[c]}: {row[c]}" for c in others if c not in (main, title) and row[c])
    return Sheet("\n\n".join(out), frozenset(header[c] for c in others if c not in (main, title)))
