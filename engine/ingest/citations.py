"""How a provision is cited: "Art. 33(1)", "§ 990.21(a)(2)(i)", "Section 4.2(b)", "Recital 85", "Annex I",
a control by its id: "AC-2(1)".

Ingest stores each block's citation and the offsets of the points inside it in the chunk's metadata
(`citation`, `points`); a quote is cited by the block's citation plus the point it starts in. Chunks
stored before citations existed get one derived from their section path and number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.text import normalize_ws

PREFIXES = {"control": "", "article": "Art. ", "§": "§ ", "section": "Section ", "": "Section ", "rule": "Rule ",
            "regulation": "Regulation ",
            "recital": "Recital ", "part": "Part ", "title": "Title ", "chapter": "Chapter ", "subpart": "Subpart ",
            "annex": "Annex ", "schedule": "Schedule ", "appendix": "Appendix "}
_PATH_KIND = re.compile(r"^(?P<word>Article|Art\.|§|Section|Rule|Regulation|Recital|Part|Title|Chapter|Subpart|Annex|"
                        r"Schedule|Appendix)\s*(?P<num>\S+)", re.IGNORECASE)


def format_citation(kind: str, number: str, position: str = "") -> str:
    """'Art. 33(1)' from ('article', '33', '(1)'); '' when there is no number to cite."""
    if not number:
        return ""
    return f"{PREFIXES.get(kind, kind.title() + ' ')}{number}{position}"


def innermost_section(section_path: str | None) -> str:
    """The last heading of a section path ("4 Records > 4.2 Retention periods" -> "4.2 Retention periods"). Pure."""
    return section_path.split(" > ")[-1] if section_path else ""


def own_section(section_path: str | None, document_title: str | None) -> str:
    """The innermost heading of a section path, or "" where it is the document's own title (a page's opening text,
    filed under the page's title: "Debug" of the page "Debug" names no section of its own). Pure."""
    section = innermost_section(section_path)
    return "" if normalize_ws(section).casefold() == normalize_ws(document_title or "").casefold() else section


def derived_citation(section_number: str, section_path: str) -> str:
    """A citation from a chunk's section number and path alone (chunks stored before citations)."""
    if not section_number:
        last = innermost_section(section_path)
        return last if last.lower() in ("preamble",) else ""
    if section_number.lower().startswith("recital"):
        return section_number.title()
    last = innermost_section(section_path)
    match = _PATH_KIND.match(last)
    kind = ""
    if match and section_number.startswith(match.group("num").rstrip(".")):
        word = match.group("word").lower()
        kind = "article" if word.startswith("art") else word
    return format_citation(kind, section_number)


def chunk_citation(section_number: str, section_path: str, metadata: Mapping[str, Any] | None) -> str:
    """The citation of a chunk's block: stored at ingest, else derived."""
    stored = (metadata or {}).get("citation")
    return stored if isinstance(stored, str) and stored else derived_citation(section_number, section_path)


def quote_citation(section_number: str, section_path: str, metadata: Mapping[str, Any] | None,
                   doc_offset: int | None = None) -> str:
    """The citation of a quote that starts at `doc_offset` in the document text: the block's citation
    plus the point (a), (i) ... it starts in; a table row's own requirement id where the quote starts in
    one ("2.1.1" in section "V2.1")."""
    base = chunk_citation(section_number, section_path, metadata)
    points = (metadata or {}).get("points") or []
    if doc_offset is None or not points:
        return base
    row = next((p[1] for p in points if len(p) > 3 and p[2] == "row" and int(p[0]) <= doc_offset < int(p[3])), None)
    if row is not None:
        return str(row)
    if not base:
        return ""
    inside = [p[1] for p in points if len(p) < 3 and int(p[0]) <= doc_offset]
    return base + (inside[-1] if inside else "")
