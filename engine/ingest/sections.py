"""From lines of text to sections: the parse result (`ParsedDocument`, its `Block`s with offsets into the
normalized text) and `SectionBuilder`, which turns headings, titles, numbered paragraphs and points into
blocks for every plain-text reader (txt, md, html, docx, pdf) in `engine.ingest.formats`."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine.ingest.citations import format_citation
from engine.ingest.sentences import wrap_width, wrapped_break
from engine.ingest.structure import (
    LABELLED,
    LETTER_LABEL,
    NUMBERED_BASE,
    PROVISIONS,
    UNFINISHED,
    Heading,
    Positions,
    control_heading,
    enumerator,
    enumerators,
    is_caps_heading,
    is_centred_title,
    is_eu_style,
    is_title_line,
    labelled_requirement,
    parse_heading,
    recital_number,
    titled_run_in,
)
from engine.text import REQUIREMENT_ID, normalize_ws


class Block(BaseModel):
    """A span of the document text that chunks are cut from (never across blocks)."""

    model_config = ConfigDict(extra="forbid")

    start: int
    end: int
    section_number: str = ""
    section_path: str = ""
    section_heading: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class ParsedDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str
    text: str
    title: str | None = None
    blocks: list[Block]
    metadata: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list, description="What the reader warned about (not stored)")


def normalize(text: str) -> str:
    """NFC, Unix newlines, no trailing spaces, at most one blank line, no control characters."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u00a0", " ").replace("\u200e", "").replace("\u200f", "").replace("\ufeff", "")
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


NOTES = "Notes"  # the heading footnotes and endnotes go under, in every format that has them


def markdown_table(rows: list[list[str]], header: list[str] | None) -> str:
    """A Markdown table, its header row the source's or an empty one (Markdown needs one), every row as wide as
    the widest. Pure."""
    width = max([len(r) for r in rows] + [len(header or [])])
    head = (header or []) + [""] * (width - len(header or []))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return "\n".join(lines)


_BREAK_AFTER = (".", ";", ":", "!", "?", "\u2014")
# Marks that close a sentence's quotation after its stop (an amending article's inserted text ends ".\u2019")
_CLOSING = "\u2019\u201d\"'"
# The heading of a table of an act's provisions against another's, whose rows name articles: no heading below it
_CORRELATION = re.compile(r"\bcorrelation\s+tables?\b|\btables?\s+of\s+(?:destinations|derivations|concordance)\b",
                          re.IGNORECASE)
# Kinds of heading that open a part of a document of their own, even under such a table ("ANNEX III")
_DOCUMENT_PARTS = frozenset({"annex", "schedule", "appendix"})
# Words a title does not end with, or open its second line with: it goes on ("... OTHER ASPECTS OF THE")
_TITLE_GOES_ON = frozenset("the of and or for to in on at by with from than as a an \u2014 \u2013 -".split())
_CONTINUES = (":", ";", ",", "\u2014", " and", " or")


# A table row that opens with its requirement's own id ("| **2.1.1** | Verify that ... |", "| V5.2.3 | ...",
# "| A.5.1 | ...", "| AC-2(1) | ...")
_ROW_ID = re.compile(rf"^\|\s*\**\s*(?P<id>{REQUIREMENT_ID})\s*\**\s*\|", re.MULTILINE)


def table_rows(text: str, start: int) -> list[list[Any]]:
    """The rows of a Markdown table in `text` (at `start` in the document) whose first cell is an id, as points
    `[row start, id, "row", row end]`: a quote of the row is cited by the requirement's id, not its section's."""
    rows = []
    for m in _ROW_ID.finditer(text):
        end = text.find("\n", m.end())
        rows.append([start + m.start(), m.group("id"), "row", start + (len(text) if end < 0 else end)])
    return rows


class SectionBuilder:
    """Accumulates text and headings into blocks with a section path, a citation and point offsets.

    Inside a provision, a numbered paragraph ("1.", or CFR "(a)") starts a block of its own, so every
    chunk can be cited to it ("Art. 33(1)"); deeper points stay in the block and their offsets are kept
    (`metadata["points"]`). In the preamble of an EU-style act each recital is a block ("Recital 12").
    """

    def __init__(self, *, eu_style: bool = False, sized: dict[str, int] | None = None) -> None:
        self.sized = sized or {}  # a heading's line -> its level, where the format sets headings apart by type size
        self.heading_line = ""  # the open heading's text while no body follows it
        self.parts: list[str] = []
        self.length = 0
        self.stack: list[tuple[int, Heading]] = []
        self.blocks: list[Block] = []
        self.body_start: int | None = None
        self.preamble = eu_style  # before the enacting terms: recitals and the preamble
        self.special: str | None = None  # 'Preamble' or 'Recital N' for the open block
        self.positions = Positions()
        self.position = ""  # the open block's paragraph label, '(1)'
        self.points: list[list[Any]] = []
        self.awaiting_title = False
        self.caps_title = False  # the open heading's title was its own line in capitals, and nothing followed it yet

    def _add(self, piece: str, joiner: str = "\n\n") -> tuple[int, int]:
        if self.parts:
            self.parts.append(joiner)
            self.length += len(joiner)
        start = self.length
        self.parts.append(piece)
        self.length += len(piece)
        return start, self.length

    def _path(self) -> str:
        return " > ".join(" ".join(x for x in (_shown_label(h), h.title) if x) for _, h in self.stack)

    def _close(self) -> None:
        if self.body_start is not None and self.body_start < self.length:
            metadata: dict[str, Any] = {}
            if self.special is not None:
                recital = self.special.startswith("Recital")
                number, heading = (self.special if recital else ""), self.special
                path = f"Recitals > {self.special}" if recital else self.special
                citation = self.special
            else:
                top = self.stack[-1][1] if self.stack else None
                number = (top.number + self.position) if top and top.number else ""
                heading = top.title if top else ""
                path = self._path()
                citation = format_citation(top.kind, top.number, self.position) if top and top.number else ""
                if top and not top.number and (own := re.fullmatch(r"\((\d{1,4})\)", self.position)):
                    metadata["paragraph"] = own.group(1)  # numbered under a heading of words: see _numbered_on
            if citation:
                metadata["citation"] = citation
            if self.points:
                metadata["points"] = self.points
            self.blocks.append(Block(start=self.body_start, end=self.length, section_number=number,
                                     section_path=path, section_heading=heading, metadata=metadata))
        self.body_start = None
        self.points = []

    def in_provision(self) -> bool:
        return bool(self.stack) and self.stack[-1][1].kind in PROVISIONS

    def heading(self, text: str, level: int | None = None, number: str = "", *,
                parsed: Heading | None = None, run_in: bool = False, letters: bool = False) -> None:
        """A heading line, kept in the text as it is; `level` from the format (Markdown, DOCX) or its kind.
        `run_in`: the line also opens the section's first sentence ("6. Trademarks. This License does not
        grant ..."), so it is left to the body (the caller adds it) and only names the section. `letters`: a
        heading labelled by a letter or a Roman numeral ("O. Defense of Claims") is numbered so (Markdown, where
        the heading is marked as one: `_lettered_heading`)."""
        self._close()
        text = normalize(text)
        if not text:
            return
        if parsed is None:
            parsed = parse_heading(text) if not number else Heading("", number, text, level or 1)
            parsed = parsed or control_heading(text) or _numbered_heading(text, level) or (
                _lettered_heading(text, level) if letters else None) or Heading("", "", text, level or 1)
        if level is not None:
            parsed = parsed._replace(level=level)
        while self.stack and self.stack[-1][0] >= parsed.level:
            self.stack.pop()
        parsed = _within_letter(parsed, self.stack[-1][1] if self.stack else None)
        if self.preamble and self.stack and (parsed.kind or parsed.number):
            self.stack = []  # the rubric over the act ends with its preamble: "Chapter I ...", not "DIRECTIVES > ..."
        self.stack.append((parsed.level, parsed))
        # the enacting terms begin with a chapter or an article; a heading of neither that opens the document
        # (the Official Journal's "DIRECTIVES" over an act's title) leaves its recitals recitals
        opening = not (parsed.kind or parsed.number) and not self.length
        self.preamble = self.preamble and opening
        self.special, self.position = None, ""
        self.caps_title = False
        self.positions = Positions()
        untitled = not parsed.title or re.fullmatch(r"\(.*\)", parsed.title) is not None  # "Annex A (normative)"
        self.awaiting_title = bool(parsed.kind) and untitled and not run_in
        if not run_in:
            self._add(text)
        self.heading_line = "" if run_in or not self.sized else normalize_ws(text)

    def _title_goes_on(self, line: str) -> bool:
        """`line` goes on with the open heading's title, both set in one type as one heading ("Part A – Internal
        Capital Adequacy" / "Assessment Process"): the title takes it, kept in the text."""
        if not (self.heading_line and self.stack and self.sized):
            return False
        joined = f"{self.heading_line} {normalize_ws(line)}"
        if joined not in self.sized:
            return False
        self._title_more(line)
        self.heading_line = joined
        return True

    def _retitle(self, text: str) -> None:
        """The line after 'Article 33' is its title: kept in the text, not a body."""
        level, top = self.stack[-1]
        title = f"{text} {top.title}".strip() if top.title else text
        self.stack[-1] = (level, top._replace(title=title))
        self.awaiting_title = False
        self.caps_title = is_caps_heading(text)
        self._add(text)

    def _title_wraps(self, line: str) -> bool:
        """`line`, in capitals, goes on with the open heading's title in capitals, set on the line before: where
        that line ends on a word no title ends with or `line` opens with one no title opens with ("CHAPTER II" /
        "CONSUMER INFORMATION FOR CONTRACTS OTHER THAN" / "DISTANCE OR OFF-PREMISES CONTRACTS"; "... AND RIGHT OF
        WITHDRAWAL" / "FOR DISTANCE AND OFF-PREMISES CONTRACTS"), as a two-column page wraps a chapter's title."""
        if not (self.caps_title and self.stack and is_caps_heading(line)):
            return False
        title = self.stack[-1][1].title.split()
        return bool(title) and (title[-1].lower() in _TITLE_GOES_ON or line.split()[0].lower() in _TITLE_GOES_ON)

    def _title_more(self, line: str) -> None:
        """`line` goes on with the open heading's title: the title takes it, kept in the text."""
        level, top = self.stack[-1]
        self.stack[-1] = (level, top._replace(title=f"{top.title} {line.strip()}".strip()))
        self._add(line.strip())

    def title_line(self, text: str) -> None:
        """The document title: kept in the text, but not a section of its own."""
        self._close()
        if normalize(text):
            self._add(normalize(text))

    def _special_block(self, name: str) -> None:
        if self.special != name or self.body_start is None:
            self._close()
            self.special = name

    def paragraph(self, text: str, *, opens_section: bool = False) -> None:
        """A block of body text; `opens_section`: it begins with its section's run-in heading, whose number
        is no paragraph number."""
        text = normalize(text)
        if not text:
            return
        if self.awaiting_title and self.stack and is_title_line(text):
            self._retitle(text)
            return
        self.awaiting_title = False
        self.caps_title = False
        self.heading_line = ""
        seen = None
        if self.preamble:
            recital = recital_number(text)
            self._special_block(f"Recital {recital}" if recital else "Preamble")
        elif self.stack and opens_section:
            self.positions.unnumbered(text)
        elif self.stack:
            seen = self.positions.see(text)
            if seen is not None and seen[0]:
                if not self._lone_lead_in():
                    self._close()
                self.position = seen[1]
        # A point continues its lead-in's sentence ("shall designate ... where:" / "(a) ...;" / "(b) ..."),
        # so it is joined with one line break, which the sentence splitter reads as a continuation; a paragraph
        # whose labels run together ("(6)(i) Develop ...") opens a paragraph of its own, as the CFR prints it.
        continues = (seen is not None and self.body_start is not None and len(enumerators(text)) < 2
                     and (not seen[0] and self.parts[-1].rstrip().endswith(_CONTINUES) or self._lone_lead_in()))
        start, _ = self._add(text, "\n" if continues else "\n\n")
        if self.body_start is None:
            self.body_start = start
        if seen is not None and not seen[0]:
            label = seen[1][len(self.position):] if seen[1].startswith(self.position) else seen[1]
            self.points.append([start, label])
        self.points.extend(table_rows(text, start))

    def _lone_lead_in(self) -> bool:
        """The open block is one paragraph that stops where no sentence ends ("The scanning ... is performed by"):
        the lead-in of the numbered list after it, so it opens the first point's block rather than a block of its
        own, and no chunk or quote ends at "by"."""
        return (self.body_start is not None and self.body_start == self.length - len(self.parts[-1])
                and UNFINISHED.search(self.parts[-1]) is not None)

    def _sized(self, line: str) -> int | None:
        """The level of the heading `line` is by its type size (`sized`), or None; no work for a format without."""
        return self.sized.get(normalize_ws(line)) if self.sized else None

    def _line_heading(self, line: str) -> Heading | None:
        parsed = parse_heading(line, in_provision=self.in_provision())
        if parsed is not None and parsed.kind not in _DOCUMENT_PARTS and self._in_correlation_table():
            return None  # "Article 5(2)  Article 3(3), point m": a row of the table, the articles of two acts
        level = self._sized(line)
        if parsed is not None and not parsed.kind and self.sized and level is None:
            return None  # "9. Many institutions are working within their existing": where the type tells headings
            # ("Critical functions" in 16 points), a numbered line in the body's type is a paragraph's first line
        if parsed is None and level is not None:
            parsed = Heading("", "", line.strip(), level)  # "Governance", set in 24-point type
        if parsed is None and is_caps_heading(line) and not self.preamble:
            parsed = Heading("", "", line.strip(), 1)
        return parsed

    def _in_correlation_table(self) -> bool:
        """Under an act's correlation table (EU acts: "ANNEX II / Correlation table"; UK: "Table of Destinations"),
        whose rows pair an old act's articles with the new one's: none of them opens a provision."""
        return any(_CORRELATION.search(f"{h.title} {h.number}") for _, h in self.stack)

    def text_block(self, para: str) -> None:
        """A paragraph of plain text (TXT, PDF, DOCX): headings, heading titles, numbered paragraphs and
        points. A line that opens a provision, a paragraph or a recital after a sentence end starts anew."""
        if not self.in_provision() and is_centred_title(para) and not is_caps_heading(para):
            self.heading(para, parsed=Heading("", "", para.strip(), 1))  # "Preamble", set apart and indented
            return
        body: list[str] = []
        opens_section = False
        lines = para.split("\n")
        width = wrap_width(lines)
        for i, line in enumerate(lines):
            if body and not (body[-1].rstrip().rstrip(_CLOSING).endswith(_BREAK_AFTER) and self._opens(line)
                             or self._sized(line) is not None):  # a heading by its type, after "plans.3"
                body.append(line)
                continue
            if body:
                self.paragraph("\n".join(body), opens_section=opens_section)
                body, opens_section = [], False
            if self._title_goes_on(line):
                continue
            parsed = self._line_heading(line)
            if parsed is None and (label := labelled_requirement(line, self._labelled_level())) is not None:
                self.heading(line, parsed=label, run_in=True)  # "Provision 5.1-1 Where passwords are used ..."
                body, opens_section = [line], True
                continue
            if parsed is None and (lead := _long_run_in(line, self.in_provision())) is not None:
                self.heading(line, parsed=lead, run_in=True)  # "Section 3.1. Powers. The business ..." on one line
                body, opens_section = [line], True
                continue
            if parsed is not None and not (parsed.kind or parsed.number) and self.awaiting_title and self.stack:
                self._retitle(line.strip())  # "CHAPTER I" / "GENERAL PROVISIONS": the chapter's title, in capitals
            elif parsed is not None and not (parsed.kind or parsed.number) and self._title_wraps(line):
                self._title_more(line)
            elif parsed is not None:
                run_in = self._sized(line) is None and _run_in(  # a heading by its type runs into nothing
                    parsed, line, lines[i + 1] if i + 1 < len(lines) else "", width)
                self.heading(line, parsed=run_in_title(parsed) if run_in else parsed, run_in=run_in)
                if run_in:
                    body, opens_section = [line], True
            elif self.awaiting_title and self.stack and is_title_line(line):
                self._retitle(line.strip())
            else:
                body.append(line)
        if body:
            self.paragraph("\n".join(body), opens_section=opens_section)

    def _opens(self, line: str) -> bool:
        parsed = parse_heading(line, in_provision=self.in_provision())
        return (parsed is not None and bool(parsed.kind)) or enumerator(line) is not None or (
            self._sized(line) is not None) or labelled_requirement(line, 0) is not None

    def _labelled_level(self) -> int:
        """A labelled requirement's level: under the clause it stands in, beside the requirement before it."""
        return next((level + 1 for level, h in reversed(self.stack) if h.kind not in LABELLED), NUMBERED_BASE + 1)

    def notes(self, notes: list[str]) -> None:
        """A document's footnotes and endnotes ("(1) OJ C 155, ..."), each a paragraph under a heading of their own,
        `NOTES`, not read into the last section; nothing when there are none."""
        if notes:
            self.heading(NOTES, 1)
            for note in notes:
                self.paragraph(note)

    def build(self, fmt: str, title: str | None, **metadata: Any) -> ParsedDocument:
        self._close()
        _numbered_on(self.blocks)
        return ParsedDocument(format=fmt, text="".join(self.parts), title=title, blocks=self.blocks,
                              metadata=metadata)


def _numbered_on(blocks: list[Block]) -> None:
    """Paragraphs numbered through the document under headings of words are cited by their numbers: APRA's guides
    number paragraphs 1-51 under "Governance", "Risk management" and the like ("What does paragraph 36 of CPG 229
    say?"), as supervisors' guidelines do. Told from a list under each heading ("1." in each of a policy's
    sections) by the numbers running on from one heading to the next at least twice and never starting again at
    1. Each such block gets its number as its section number and "Paragraph 36" as its citation; the mark
    `_close` left (`metadata["paragraph"]`) goes."""
    marked = [b for b in blocks if "paragraph" in b.metadata]
    runs: list[tuple[str, list[int]]] = []  # (section path, its paragraphs' numbers) in the document's order
    for block in marked:
        number = int(block.metadata["paragraph"])
        if runs and runs[-1][0] == block.section_path:
            runs[-1][1].append(number)
        else:
            runs.append((block.section_path, [number]))
    on = sum(after[1][0] == before[1][-1] + 1 for before, after in zip(runs, runs[1:], strict=False))
    numbered = on >= 2 and not any(numbers[0] == 1 for _, numbers in runs[1:])
    for block in marked:
        number = block.metadata.pop("paragraph")
        if numbered:
            block.section_number = number
            block.metadata["citation"] = format_citation("paragraph", number)


def _run_in(heading: Heading, line: str, following: str, width: int | None) -> bool:
    """`heading`, read from `line`, is also the start of a sentence: its title runs on into text ("6. Trademarks.
    This License does not ..."), or the next line of its paragraph continues it ("5.1. The rights granted
    under this License will terminate automatically" / "if You fail to comply ...")."""
    title = heading.title.rstrip(".:")
    opening = titled_run_in(title + ".")  # the title's title-case opening, when more text follows it
    return (opening is not None and opening != title) or (
        bool(following.strip()) and wrapped_break(line, following, width))


# A paragraph set on one line (a word processor's, a web page's) that opens with its clause's number and title:
# "Section 3.1. Powers. The business and affairs of the corporation shall be managed ...", "7. Termination. Either
# party may ..."
_LONG_RUN_IN = re.compile(r"^(?P<lead>(?:(?:Section|Article|Rule|Regulation|Clause|\u00a7)\s*)?\d{1,3}(?:\.\d{1,3})*"
                          r"\.?\s+[A-Z][^.!?:\n]{0,80}?[.:])\s+\S")


def _long_run_in(line: str, in_provision: bool) -> Heading | None:
    """The heading a long line opens with when its clause's number and title-case title run into its text (a line
    short enough is read whole by `parse_heading`), titled by those words; None otherwise. Pure."""
    found = _LONG_RUN_IN.match(line.strip())
    if found is None or len(line.split()) <= 14:
        return None
    lead = re.sub(r"^((?:\S+\s+)?\d[\d.]*?\d|(?:\S+\s+)?\d)\.(?=\s)", r"\1", found.group("lead"))  # "Section 3.1."
    parsed = parse_heading(lead, in_provision=in_provision)
    title = parsed.title.rstrip(".:") if parsed is not None else ""
    if parsed is None or not parsed.number or titled_run_in(title + ".") != title:
        return None
    return parsed._replace(title=title)


def run_in_title(heading: Heading) -> Heading:
    """A run-in heading's title is its words up to the first full stop ("Trademarks"); none when its line
    is a sentence from the start ("5.1. The rights granted ...")."""
    return heading._replace(title=titled_run_in(heading.title) or "")


# A heading its format marks as one (a Markdown `##`, a heading style) that opens with a clause number, whatever
# follows: "4.2 <manifest:manifest>", "4.16.1 manifest:algorithm-name" (a standard's elements and attributes), or
# nothing ("4.7.3", a clause of a schedule whose number heads its text)
_MARKED_NUMBER = re.compile(r"^(?P<num>\d{1,4}(?:\.\d{1,3})+)\.?(?:\s+(?P<title>\S.*))?$")


def _numbered_heading(text: str, level: int | None) -> Heading | None:
    """A heading the format marks as one (`level` given) that opens with a clause number two levels deep or more
    and any title or none (`parse_heading` reads a title in capitals only, as a line of plain text needs). Pure."""
    if level is None or (found := _MARKED_NUMBER.match(text.strip())) is None:
        return None
    return Heading("", found.group("num"), (found.group("title") or "").strip(), level)


# A heading the format marks as one that opens with a capital letter as its section's label, as agreements letter
# their sections ("## O. Defense of Claims; Release", "## A. How Does This Actually Work?") and cite them ("this
# Section O")
_MARKED_LETTER = re.compile(rf"^(?P<num>{LETTER_LABEL})\.\s+(?P<title>[A-Z0-9\"'\u201c(][^\n]{{0,120}})$")


def _lettered_heading(text: str, level: int | None) -> Heading | None:
    """A heading the format marks as one (`level` given) labelled by a capital letter ("O. Defense of Claims;
    Release") or a Roman numeral ("II. Scope"): the label is its number. None for any other line, and for a line
    of plain text, where "A. Smith" can open a sentence. Pure."""
    if level is None or (found := _MARKED_LETTER.match(text.strip())) is None or len(text.split()) > 15:
        return None
    return Heading("", found.group("num"), found.group("title").strip(), level)


def _shown_label(heading: Heading) -> str:
    """A heading's label as its section path shows it: a letter or Roman numeral that labels a heading of words
    with its full stop, as the heading reads ("A. How Does This Actually Work?", where "A How Does ..." reads as
    a sentence); any other label as `Heading.label` gives it. Pure."""
    if not heading.kind and heading.title and re.fullmatch(LETTER_LABEL, heading.number):
        return f"{heading.number}."
    return heading.label


def _within_letter(heading: Heading, parent: Heading | None) -> Heading:
    """A numbered heading under a lettered one (`_lettered_heading`), numbered from 1 again within it, is named with
    the letter, as such agreements cite it ("### 1. By GitHub" under "## O. Defense of Claims" is "Section O.1").
    Pure."""
    if (parent is not None and not parent.kind and re.fullmatch(LETTER_LABEL, parent.number)
            and not heading.kind and heading.number.isdigit()):
        return heading._replace(number=f"{parent.number}.{heading.number}")
    return heading


def feed_lines(builder: SectionBuilder, text: str) -> None:
    """Paragraphs separated by blank lines; headings, titles, numbered paragraphs and points within them."""
    for para in re.split(r"\n\s*\n", normalize(text)):
        builder.text_block(para)


def eu_style(text: str) -> bool:
    return is_eu_style(normalize(text).split("\n"))


