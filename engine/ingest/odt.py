"""OpenDocument text (.odt: LibreOffice, and the format the UK government and others publish documents in) read
as the paragraphs a reader sees. Pure: no I/O (the caller unzips and parses the parts).

Headings (`text:h`) with their outline level and the number the outline style draws ("4.2"); paragraphs; list
items with the number or bullet their list style draws ("a.", "2.", "•"), which their text lacks; tables a row a
line, cells between bars; footnotes and endnotes as their mark in the text ("(1)") and their text apart; tracked
changes as if accepted (deleted text is kept in a region of its own, which is not read); comments not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.ingest.numbering import formatted
from engine.text import normalize_ws

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"

# ODF's number formats, as engine.ingest.numbering names Word's
_FORMATS = {"1": "decimal", "a": "lowerLetter", "A": "upperLetter", "i": "lowerRoman", "I": "upperRoman", "": "none"}
# not read: comments, the deleted text of tracked changes, page breaks, index and table-of-contents bodies
_SKIP = {f"{_OFFICE}annotation", f"{_OFFICE}annotation-end", f"{_TEXT}tracked-changes", f"{_TEXT}soft-page-break",
         f"{_TEXT}table-of-content", f"{_TEXT}alphabetical-index", f"{_TEXT}bookmark-ref"}


@dataclass(frozen=True)
class Level:
    """One level of a list or outline style: its number format ('none' for a bullet), the bullet, what goes before
    and after the number, the first number, and how many levels' numbers it shows ("4.2": two)."""

    fmt: str = "decimal"
    bullet: str = ""
    prefix: str = ""
    suffix: str = ""
    start: int = 1
    shown: int = 1


def _levels(style: Any) -> dict[int, Level]:
    out: dict[int, Level] = {}
    for level in style:
        tag, number = level.tag, int(level.get(f"{_TEXT}level", "1") or 1)
        if tag.endswith("-style-bullet"):
            out[number] = Level(fmt="none", bullet=level.get(f"{_TEXT}bullet-char", "\u2022"))
        elif tag.endswith("-style-number") or tag.endswith("outline-level-style"):
            start = level.get(f"{_TEXT}start-value", "1")
            shown = level.get(f"{_TEXT}display-levels", "1")
            out[number] = Level(fmt=_FORMATS.get(level.get(f"{_STYLE}num-format", "1"), "decimal"),
                                prefix=level.get(f"{_STYLE}num-prefix", ""),
                                suffix=level.get(f"{_STYLE}num-suffix", ""),
                                start=int(start) if start.isdigit() else 1, shown=int(shown) if shown.isdigit() else 1)
    return out


def list_styles(*roots: Any) -> tuple[dict[str, dict[int, Level]], dict[int, Level]]:
    """The list styles by name and the outline style's levels, from content.xml's and styles.xml's roots."""
    lists: dict[str, dict[int, Level]] = {}
    outline: dict[int, Level] = {}
    for root in roots:
        if root is None:
            continue
        for style in root.iter(f"{_TEXT}list-style"):
            lists[style.get(f"{_STYLE}name", "")] = _levels(style)
        for style in root.iter(f"{_TEXT}outline-style"):
            outline = _levels(style)
    return lists, outline


def _label(counts: list[int], level: int, levels: dict[int, Level]) -> str:
    """The number a level draws for `counts` (1-based levels), with the levels above it that it shows."""
    style = levels.get(level, Level())
    if style.fmt == "none":
        return style.bullet
    first = max(1, level - style.shown + 1)
    numbers = [formatted(counts[n - 1], levels.get(n, Level()).fmt) for n in range(first, level + 1)]
    return f"{style.prefix}{'.'.join(x for x in numbers if x)}{style.suffix}".strip()


@dataclass
class Reading:
    """What a document reads as: ('heading', level, text), ('paragraph', 0, text), ('item', 0, text) (a list's,
    with its label) and ('row', 0, text) items in order, its notes ("(1) ..."), and how many tracked changes it
    holds."""

    items: list[tuple[str, int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tracked: int = 0
    lists: dict[str, dict[int, Level]] = field(default_factory=dict)
    outline: dict[int, Level] = field(default_factory=dict)
    outline_counts: list[int] = field(default_factory=lambda: [0] * 10)
    list_counts: dict[str, list[int]] = field(default_factory=dict)  # the last list of each style, to go on from

    def inline(self, el: Any) -> str:
        """A paragraph's text: spans, links, spaces (`text:s`), tabs, line breaks; a note as its mark."""
        pieces = [el.text or ""]
        for child in el:
            tag = child.tag
            if tag == f"{_TEXT}s":
                count = child.get(f"{_TEXT}c", "1")
                pieces.append(" " * (int(count) if count.isdigit() else 1))
            elif tag == f"{_TEXT}tab":
                pieces.append("\t")
            elif tag == f"{_TEXT}line-break":
                pieces.append("\n")
            elif tag == f"{_TEXT}note":
                citation = child.find(f"{_TEXT}note-citation")
                mark = normalize_ws("".join(citation.itertext())) if citation is not None else ""
                mark = f"({mark or len(self.notes) + 1})"
                body = child.find(f"{_TEXT}note-body")
                text = " ".join(self.inline(p) for p in body.iter(f"{_TEXT}p")) if body is not None else ""
                self.notes.append(f"{mark} {normalize_ws(text)}".strip())
                pieces.append(f" {mark}" if "".join(pieces)[-1:].isalnum() else mark)
            elif tag == f"{_TEXT}number" or tag in _SKIP:
                pass  # a list's or heading's number is drawn by its style (`_label`), not read twice
            else:
                pieces.append(self.inline(child))
            pieces.append(child.tail or "")
        return "".join(pieces)

    def heading(self, el: Any) -> None:
        level = int(el.get(f"{_TEXT}outline-level", "1") or 1)
        level = min(max(level, 1), 10)
        text = normalize_ws(self.inline(el))
        cached = el.find(f"{_TEXT}number")
        label = normalize_ws("".join(cached.itertext())) if cached is not None else ""
        numbered = self.outline.get(level, Level("none")).fmt != "none"
        if not label and numbered and el.get(f"{_TEXT}is-list-header") != "true":
            self.outline_counts[level - 1] += 1
            for deeper in range(level, len(self.outline_counts)):
                self.outline_counts[deeper] = 0
            label = _label(self.outline_counts, level, self.outline)
        if text:
            self.items.append(("heading", level, f"{label} {text}".strip()))

    def list(self, el: Any, depth: int, style: str, counts: list[int]) -> None:
        """A list's items with the labels its style draws; a nested list is one level deeper, in the same style
        unless it names its own."""
        style = el.get(f"{_TEXT}style-name") or style
        levels = self.lists.get(style, {})
        for item in el:
            if item.tag not in (f"{_TEXT}list-item", f"{_TEXT}list-header"):
                continue
            numbered = item.tag == f"{_TEXT}list-item"
            if numbered:
                start = item.get(f"{_TEXT}start-value")
                counts[depth - 1] = int(start) if start and start.isdigit() else (
                    counts[depth - 1] + 1 if counts[depth - 1] else levels.get(depth, Level()).start)
                for deeper in range(depth, len(counts)):
                    counts[deeper] = 0
            label = _label(counts, depth, levels) if numbered and levels else ""
            for child in item:
                if child.tag == f"{_TEXT}list":
                    self.list(child, depth + 1, style, counts)
                elif child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
                    text = normalize_ws(self.inline(child))
                    if text:
                        self.items.append(("item", 0, f"{label} {text}".strip()))
                        label = ""  # the item's second paragraph carries no number
                else:
                    self.block(child)

    def table(self, el: Any) -> None:
        for row in el.iter(f"{_TABLE}table-row"):
            cells = []
            for cell in row:
                if cell.tag == f"{_TABLE}table-cell":
                    cells.append(" ".join(normalize_ws(self.inline(p)) for p in cell.iter(f"{_TEXT}p")).strip())
            if any(cells):
                self.items.append(("row", 0, " | ".join(cells)))

    def block(self, el: Any) -> None:
        tag = el.tag
        if tag in _SKIP:
            if tag == f"{_TEXT}tracked-changes":
                self.tracked += sum(1 for _ in el.iter(f"{_TEXT}changed-region"))
            return
        if tag == f"{_TEXT}h":
            self.heading(el)
        elif tag == f"{_TEXT}p":
            text = self.inline(el)
            if text.strip():
                self.items.append(("paragraph", 0, text))
        elif tag == f"{_TEXT}list":
            # a list that goes on from an earlier one of its style ("continue numbering") counts on from it
            style = el.get(f"{_TEXT}style-name", "")
            goes_on = el.get(f"{_TEXT}continue-numbering") == "true" or el.get(f"{_TEXT}continue-list")
            counts = self.list_counts.get(style, [0] * 10) if goes_on else [0] * 10
            self.list_counts[style] = counts
            self.list(el, 1, style, counts)
        elif tag == f"{_TABLE}table":
            self.table(el)
        else:  # sections, frames and text boxes, index bodies: their paragraphs where they stand
            for child in el:
                self.block(child)


def read(content: Any, styles: Any = None) -> Reading:
    """The reading of content.xml's root (and styles.xml's, where the list and outline styles may be)."""
    reading = Reading()
    reading.lists, reading.outline = list_styles(content, styles)
    body = content.find(f"{_OFFICE}body/{_OFFICE}text")
    for el in body if body is not None else []:
        reading.block(el)
    return reading


def title(meta: Any) -> str | None:
    """The document's title from meta.xml's root."""
    found = meta.find(f"{_OFFICE}meta/{_DC}title") if meta is not None else None
    return normalize_ws("".join(found.itertext())) or None if found is not None else None
