"""Word's automatic numbering, rendered as the document shows it.

A DOCX paragraph numbered by Word ("4.2 Retention periods", "(a) the model ...") holds only its words: the number
is drawn from the document's numbering part (`word/numbering.xml`), by the list and level the paragraph or its
style names. Without it a policy's sections lose the numbers an auditor cites and its points their labels.

`Numbering(document).label(paragraph)` counts as Word does for the common case, one counter per list instance
(`w:num`), a level restarting the levels under it, `w:startOverride` and `w:start` honoured, and formats the
level's `w:lvlText` ("%1.%2", "(%1)") with each level's `w:numFmt` (decimal, letters, roman numerals; a bullet is
"•", as HTML's and OpenDocument's are read, so a bulleted list stays points of its lead-in). Pure apart from its
counters.
"""

from __future__ import annotations

import re
from typing import Any

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_ROMAN = [(1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")]


def _roman(n: int) -> str:
    out = ""
    for value, letters in _ROMAN:
        while n >= value:
            out, n = out + letters, n - value
    return out


def _letters(n: int) -> str:
    """1 -> a, 26 -> z, 27 -> aa (Word repeats the letter)."""
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if n > 0 else ""


def formatted(n: int, fmt: str) -> str:
    """A counter in a level's number format. Pure."""
    return {"decimal": str(n), "decimalZero": f"{n:02d}", "lowerLetter": _letters(n),
            "upperLetter": _letters(n).upper(), "lowerRoman": _roman(n), "upperRoman": _roman(n).upper(),
            "none": ""}.get(fmt, str(n))


def _int(text: str | None, default: int) -> int:
    """A whole number from an attribute, or `default` where it holds none (a damaged or hand-written part)."""
    return int(text) if text and text.isdigit() else default


def _val(el: Any, tag: str) -> str | None:
    child = el.find(f"{_W}{tag}") if el is not None else None
    return child.get(f"{_W}val") if child is not None else None


class Numbering:
    """The numbering of one document, counted in reading order (call `label` once per paragraph, in order)."""

    def __init__(self, document: Any) -> None:
        self.levels: dict[str, dict[int, tuple[str, str, int]]] = {}  # abstractNumId -> ilvl -> (fmt, text, start)
        self.lists: dict[str, tuple[str, dict[int, int]]] = {}  # numId -> (abstractNumId, ilvl -> startOverride)
        self.counts: dict[str, list[int]] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return  # no numbering part: no numbered paragraph
        for abstract in root.iter(f"{_W}abstractNum"):
            levels = {}
            for lvl in abstract.iter(f"{_W}lvl"):
                levels[_int(lvl.get(f"{_W}ilvl"), 0)] = (
                    _val(lvl, "numFmt") or "decimal", _val(lvl, "lvlText") or "", _int(_val(lvl, "start"), 1))
            self.levels[abstract.get(f"{_W}abstractNumId", "")] = levels
        for num in root.iter(f"{_W}num"):
            overrides = {}
            for override in num.iter(f"{_W}lvlOverride"):
                if (start := _val(override, "startOverride")) and start.isdigit():
                    overrides[_int(override.get(f"{_W}ilvl"), 0)] = int(start)
            self.lists[num.get(f"{_W}numId", "")] = (_val(num, "abstractNumId") or "", overrides)

    def _numbered(self, paragraph: Any) -> tuple[str, int] | None:
        """(numId, ilvl) from the paragraph's own properties, else its style's (and the styles it is based on)."""
        elements = [paragraph._p.pPr]
        style = paragraph.style
        while style is not None:
            elements.append(style.element.pPr)
            style = style.base_style
        num_id = ilvl = None
        for ppr in elements:
            numpr = ppr.find(f"{_W}numPr") if ppr is not None else None
            if numpr is None:
                continue
            num_id = num_id if num_id is not None else _val(numpr, "numId")
            ilvl = ilvl if ilvl is not None else _val(numpr, "ilvl")
        if num_id is None or num_id == "0" or num_id not in self.lists:
            return None
        return num_id, _int(ilvl, 0)

    def label(self, paragraph: Any) -> str | None:
        """The paragraph's number as Word shows it ("4.2", "(a)", "iii.", "•" for a bullet), or None: not numbered."""
        numbered = self._numbered(paragraph)
        if numbered is None:
            return None
        num_id, ilvl = numbered
        abstract, overrides = self.lists[num_id]
        levels = self.levels.get(abstract, {})
        if ilvl not in levels or ilvl > 8:  # Word's nine levels
            return None

        def start(level: int) -> int:
            return overrides.get(level, levels.get(level, ("", "", 1))[2])

        counts = self.counts.setdefault(num_id, [start(i) - 1 for i in range(9)])
        counts[ilvl] += 1
        for deeper in range(ilvl + 1, len(counts)):
            counts[deeper] = start(deeper) - 1
        fmt, text, _ = levels[ilvl]
        if fmt == "bullet":  # the mark a browser and LibreOffice show too, whatever the font's own character
            return "\u2022"

        def level_number(match: re.Match[str]) -> str:
            level = int(match.group(1)) - 1
            count = counts[level] if 0 <= level < len(counts) else 0
            return formatted(max(count, start(level)), levels.get(level, (fmt, "", 1))[0])

        return re.sub(r"%(\d)", level_number, text).strip() or None
