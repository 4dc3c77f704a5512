"""Readers for each source format. Each returns a `ParsedDocument`: the normalized full text
(what quotes are later checked against) and blocks (section bodies, or ObliQA passages) with
offsets into that text."""

from __future__ import annotations

import json
import logging
import re
import unicodedata
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from engine.errors import IngestError, printable
from engine.ingest import oscal
from engine.ingest.citations import format_citation
from engine.ingest.sentences import wrap_width, wrapped_break
from engine.ingest.structure import (
    PROVISIONS,
    Heading,
    Positions,
    control_heading,
    enumerator,
    is_caps_heading,
    is_eu_style,
    is_title_line,
    parse_heading,
    recital_number,
    titled_run_in,
)
from engine.text import normalize_ws

FORMATS = ("pdf", "docx", "html", "md", "txt", "obliqa", "oscal")
_EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".html": "html", ".htm": "html", ".md": "md",
    ".markdown": "md", ".txt": "txt", ".text": "txt", ".json": "obliqa", ".yaml": "oscal", ".yml": "oscal",
    ".xml": "oscal",
}
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


def sniff_format(data: bytes) -> str | None:
    """Format from the content alone: PDF, DOCX and HTML by their signatures, else plain text when
    the bytes read as text; None for anything else (binary)."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        import io
        import zipfile

        try:
            return "docx" if "word/document.xml" in zipfile.ZipFile(io.BytesIO(data)).namelist() else None
        except (zipfile.BadZipFile, ValueError, OSError):
            return None
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return "txt" if _as_text(data) is not None else None


def detect_format(path: Path, data: bytes) -> str:
    """Format from the extension (JSON must look like ObliQA passages).

    A file without an extension (`NOTICE`, `GPL-3`, `Apache-2.0`: a numeric suffix is a version,
    not an extension) is recognised by its content; an unknown extension is refused.
    """
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is not None:
        return fmt
    if path.suffix and not path.suffix[1:].isdigit():
        raise IngestError(str(path), f"unknown format '{printable(path.suffix)}'",
                          f"use --format with one of {', '.join(FORMATS)}")
    sniffed = sniff_format(data)
    if sniffed is None:
        raise IngestError(str(path), "no extension, and the content is binary, not text",
                          f"is this the right file? If it is a document, use --format with one of {', '.join(FORMATS)}")
    return sniffed


def normalize(text: str) -> str:
    """NFC, Unix newlines, no trailing spaces, at most one blank line, no control characters."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u00a0", " ").replace("\u200e", "").replace("\u200f", "").replace("\ufeff", "")
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _as_text(data: bytes) -> str | None:
    """The bytes decoded (UTF-8, else Latin-1) when they read as text, None when they look binary."""
    if b"\x00" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    shown = sum(ch.isprintable() or ch.isspace() for ch in text[:20000])
    if text and shown / min(len(text), 20000) < 0.95:
        return None
    return text


def _check_text(path: Path, data: bytes) -> str:
    text = _as_text(data)
    if text is None:
        raise IngestError(str(path), "binary content where text was expected", "is this the right file?")
    return text


def heading_of(line: str, *, in_provision: bool = False) -> tuple[str, str, int] | None:
    """(section number, heading title, level) when a plain line looks like a heading (see engine.ingest.structure)."""
    heading = parse_heading(line, in_provision=in_provision)
    return None if heading is None else (heading.number, heading.title, heading.level)


_BREAK_AFTER = (".", ";", ":", "!", "?", "\u2014")
_CONTINUES = (":", ";", ",", "\u2014", " and", " or")


class _SectionBuilder:
    """Accumulates text and headings into blocks with a section path, a citation and point offsets.

    Inside a provision, a numbered paragraph ("1.", or CFR "(a)") starts a block of its own, so every
    chunk can be cited to it ("Art. 33(1)"); deeper points stay in the block and their offsets are kept
    (`metadata["points"]`). In the preamble of an EU-style act each recital is a block ("Recital 12").
    """

    def __init__(self, *, eu_style: bool = False) -> None:
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

    def _add(self, piece: str, joiner: str = "\n\n") -> tuple[int, int]:
        if self.parts:
            self.parts.append(joiner)
            self.length += len(joiner)
        start = self.length
        self.parts.append(piece)
        self.length += len(piece)
        return start, self.length

    def _path(self) -> str:
        return " > ".join(" ".join(x for x in (h.label, h.title) if x) for _, h in self.stack)

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
                parsed: Heading | None = None, run_in: bool = False) -> None:
        """A heading line, kept in the text as it is; `level` from the format (Markdown, DOCX) or its kind.
        `run_in`: the line also opens the section's first sentence ("6. Trademarks. This License does not
        grant ..."), so it is left to the body (the caller adds it) and only names the section."""
        self._close()
        text = normalize(text)
        if not text:
            return
        if parsed is None:
            parsed = parse_heading(text) if not number else Heading("", number, text, level or 1)
            parsed = parsed or control_heading(text) or Heading("", "", text, level or 1)
        if level is not None:
            parsed = parsed._replace(level=level)
        while self.stack and self.stack[-1][0] >= parsed.level:
            self.stack.pop()
        self.stack.append((parsed.level, parsed))
        self.preamble, self.special, self.position = False, None, ""
        self.positions = Positions()
        untitled = not parsed.title or re.fullmatch(r"\(.*\)", parsed.title) is not None  # "Annex A (normative)"
        self.awaiting_title = bool(parsed.kind) and untitled and not run_in
        if not run_in:
            self._add(text)

    def _retitle(self, text: str) -> None:
        """The line after 'Article 33' is its title: kept in the text, not a body."""
        level, top = self.stack[-1]
        title = f"{text} {top.title}".strip() if top.title else text
        self.stack[-1] = (level, top._replace(title=title))
        self.awaiting_title = False
        self._add(text)

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
        seen = None
        if self.preamble:
            recital = recital_number(text)
            self._special_block(f"Recital {recital}" if recital else "Preamble")
        elif self.stack and opens_section:
            self.positions.unnumbered(text)
        elif self.stack:
            seen = self.positions.see(text)
            if seen is not None and seen[0]:
                self._close()
                self.position = seen[1]
        # A point continues its lead-in's sentence ("shall designate ... where:" / "(a) ...;" / "(b) ..."),
        # so it is joined with one line break, which the sentence splitter reads as a continuation.
        continues = (seen is not None and not seen[0] and self.body_start is not None
                     and self.parts[-1].rstrip().endswith(_CONTINUES))
        start, _ = self._add(text, "\n" if continues else "\n\n")
        if self.body_start is None:
            self.body_start = start
        if seen is not None and not seen[0]:
            label = seen[1][len(self.position):] if seen[1].startswith(self.position) else seen[1]
            self.points.append([start, label])

    def _line_heading(self, line: str) -> Heading | None:
        parsed = parse_heading(line, in_provision=self.in_provision())
        if parsed is None and is_caps_heading(line) and not self.preamble:
            parsed = Heading("", "", line.strip(), 1)
        return parsed

    def text_block(self, para: str) -> None:
        """A paragraph of plain text (TXT, PDF, DOCX): headings, heading titles, numbered paragraphs and
        points. A line that opens a provision, a paragraph or a recital after a sentence end starts anew."""
        body: list[str] = []
        opens_section = False
        lines = para.split("\n")
        width = wrap_width(lines)
        for i, line in enumerate(lines):
            if body and not (body[-1].rstrip().endswith(_BREAK_AFTER) and self._opens(line)):
                body.append(line)
                continue
            if body:
                self.paragraph("\n".join(body), opens_section=opens_section)
                body, opens_section = [], False
            parsed = self._line_heading(line)
            if parsed is not None:
                run_in = _run_in(parsed, line, lines[i + 1] if i + 1 < len(lines) else "", width)
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
        return (parsed is not None and bool(parsed.kind)) or enumerator(line) is not None

    def build(self, fmt: str, title: str | None, **metadata: Any) -> ParsedDocument:
        self._close()
        return ParsedDocument(format=fmt, text="".join(self.parts), title=title, blocks=self.blocks,
                              metadata=metadata)


def _run_in(heading: Heading, line: str, following: str, width: int | None) -> bool:
    """`heading`, read from `line`, is also the start of a sentence: its title runs on into text ("6. Trademarks.
    This License does not ..."), or the next line of its paragraph continues it ("5.1. The rights granted
    under this License will terminate automatically" / "if You fail to comply ...")."""
    title = heading.title.rstrip(".:")
    opening = titled_run_in(title + ".")  # the title's title-case opening, when more text follows it
    return (opening is not None and opening != title) or (
        bool(following.strip()) and wrapped_break(line, following, width))


def run_in_title(heading: Heading) -> Heading:
    """A run-in heading's title is its words up to the first full stop ("Trademarks"); none when its line
    is a sentence from the start ("5.1. The rights granted ...")."""
    return heading._replace(title=titled_run_in(heading.title) or "")


def _feed_lines(builder: _SectionBuilder, text: str) -> None:
    """Paragraphs separated by blank lines; headings, titles, numbered paragraphs and points within them."""
    for para in re.split(r"\n\s*\n", normalize(text)):
        builder.text_block(para)


def _eu_style(text: str) -> bool:
    return is_eu_style(normalize(text).split("\n"))


_VERSION_LINE = re.compile(r"(?:Version|Revision|Edition)\s+\d+(?:\.\d+)*\b", re.IGNORECASE)


def parse_txt(path: Path, data: bytes) -> ParsedDocument:
    text = _check_text(path, data)
    builder = _SectionBuilder(eu_style=_eu_style(text))
    _feed_lines(builder, text)
    first = builder.parts[0].split("\n")[0] if builder.parts else ""
    looks_like_title = 0 < len(first.split()) <= 15 and not first.rstrip().endswith((".", ";", ":", ","))
    if looks_like_title:  # "GNU GENERAL PUBLIC LICENSE" / "Version 3, 29 June 2007": two versions, two titles
        after = "".join(builder.parts[:3])[len(first):].lstrip()  # the title's piece, a joiner, the next piece
        version = _VERSION_LINE.match(after)
        first = f"{first} {version.group(0)}" if version and version.group(0) not in first else first
    return builder.build("txt", first if looks_like_title else None)


def parse_md(path: Path, data: bytes) -> ParsedDocument:
    text = _check_text(path, data)
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # bold markers are not content
    builder = _SectionBuilder(eu_style=_eu_style(text))
    title = None
    para: list[str] = []

    def flush() -> None:
        if para:
            for chunk in re.split(r"\n\s*\n", "\n".join(para)):
                builder.paragraph(chunk)
            para.clear()

    lines = normalize(text).split("\n")
    # A document with several top-level headings ("# Purpose and Scope", "# Policy", ...) has no title among
    # them: each is a section (the title comes from --title or the file name).
    several_h1 = sum(bool(re.match(r"^#\s+\S", line)) for line in lines) > 1
    for line in lines:
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if match:
            flush()
            level = len(match.group(1))
            if level == 1 and title is None and not several_h1:
                title = match.group(2)
                builder.title_line(title)
            else:
                builder.heading(match.group(2), level)
        else:
            para.append(line)
    flush()
    return builder.build("md", title)


def parse_html(path: Path, data: bytes) -> ParsedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_check_text(path, data), "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    builder = _SectionBuilder()
    tags = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "td", "th", "dt", "dd"]
    for el in (soup.body or soup).find_all(tags):
        if el.find_parent(tags[6:]) is not None and el.name not in tags[:6]:
            continue
        text = el.get_text(" ", strip=True)
        if el.name in tags[:6]:
            builder.heading(text, int(el.name[1]))
            title = title or text
        else:
            builder.paragraph(text)
    return builder.build("html", title)


def _entities_as_text(root: Any) -> None:
    """Replace entity references left unexpanded in a DOCX part by text, so the text after them stays.

    python-docx parses with `resolve_entities=False` (nothing is fetched or read from disk), which
    leaves each `&name;` as a node that its text accessors skip, dropping the text that follows it.
    An internal entity with a plain-text value becomes that value; any other (external, or whose
    value holds markup or further references) stays as the literal `&name;`: never resolved.
    """
    from lxml import etree

    entities = list(root.iter(etree.Entity))
    if not entities:
        return
    dtd = root.getroottree().docinfo.internalDTD
    values = {e.name: e.content for e in (dtd.iterentities() if dtd is not None else [])
              if e.system_url is None and e.content is not None and not re.search(r"[&<%]", e.content)}
    for entity in entities:
        parent = entity.getparent()
        if parent is None:
            continue
        name = entity.text.strip("&;") if entity.text else ""
        text = values.get(name, f"&{name};") + (entity.tail or "")
        previous = entity.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + text
        else:
            previous.tail = (previous.tail or "") + text
        parent.remove(entity)


def parse_docx(path: Path, data: bytes) -> ParsedDocument:
    import io
    import zipfile

    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise IngestError(str(path), f"not a readable DOCX file ({_one_line(exc)})",
                          "re-save it from a word processor") from exc
    _entities_as_text(document.element)
    builder = _SectionBuilder(eu_style=_eu_style("\n".join(p.text for p in document.paragraphs)))
    for para in document.paragraphs:
        style = (para.style.name if para.style is not None else "") or ""
        match = re.match(r"(?:Heading|Title)\s*(\d*)", style)
        if match and para.text.strip():
            builder.heading(para.text, int(match.group(1) or 1))
        else:
            _feed_lines(builder, para.text)
    for table in document.tables:
        for row in table.rows:
            builder.paragraph(" | ".join(cell.text.strip() for cell in row.cells))
    title = document.core_properties.title or None
    return builder.build("docx", title)


def _unwrap_pdf(text: str) -> str:
    """Join hard-wrapped lines of extracted PDF text back into sentences."""
    text = re.sub(r"(\w)-\n(?=[a-z])", r"\1", text)
    return re.sub(r"(?<![.!?:;\n])\n(?=[a-z(])", " ", text)


def parse_pdf(path: Path, data: bytes) -> ParsedDocument:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise IngestError(str(path), "the PDF is encrypted",
                              "decrypt it first, e.g. 'qpdf --decrypt in.pdf out.pdf'")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except IngestError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise IngestError(str(path), f"corrupt or unreadable PDF ({type(exc).__name__}: {_one_line(exc)})",
                          "check the file opens in a PDF viewer, or export it again") from exc
    text = "\n\n".join(_unwrap_pdf(normalize(p)) for p in pages)
    if not text.strip():
        raise IngestError(str(path), "the PDF has no extractable text (scanned images?)", "OCR it first")
    builder = _SectionBuilder(eu_style=_eu_style(text))
    _feed_lines(builder, text)
    title = (info.title if info and info.title else None) or None
    return builder.build("pdf", title, pages=len(pages))


_HEADING_LIKE = re.compile(r"^[^.;:]{1,120}$")


def _obliqa_path(passage_id: str, headings: dict[str, str]) -> str:
    parts = [p for p in passage_id.strip().rstrip(".").split(".") if p]
    path = []
    for i in range(1, len(parts)):
        key = ".".join(parts[:i])
        if key in headings:
            path.append(f"{key} {headings[key]}")
    path.append(passage_id.strip())
    return " > ".join(path)


_JSON_SHAPES = ("a JSON file is read as an OSCAL catalog or resolved profile ({\"catalog\": ...}) or as "
                "ObliQA passages (a list of {ID, DocumentID, PassageID, Passage})")


def _oscal_document(path: Path, loaded: Any) -> ParsedDocument:
    if oscal.is_profile(loaded):
        raise IngestError(str(path), "an OSCAL profile that is not resolved: it names controls of other catalogs",
                          "resolve it to a catalog first (compliance-trestle: 'trestle author profile-resolve'), "
                          "then ingest the resolved catalog")
    if not oscal.is_catalog(loaded):
        raise IngestError(str(path), "not an OSCAL catalog (no top-level 'catalog' object)", _JSON_SHAPES)
    parsed = parse_md(path, oscal.to_markdown(loaded).encode("utf-8"))
    return parsed.model_copy(update={"format": "oscal", "metadata": {**parsed.metadata, "oscal": "catalog"}})


def parse_oscal(path: Path, data: bytes) -> ParsedDocument:
    """An OSCAL catalog or resolved profile in JSON or YAML (engine.ingest.oscal); OSCAL XML is refused with
    the command that converts it."""
    if data.lstrip()[:1] == b"<":
        raise IngestError(str(path), "OSCAL XML is not read directly",
                          "convert it to JSON first (compliance-trestle: 'trestle import -f FILE -o NAME' writes "
                          "JSON), then ingest that")
    try:
        loaded = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise IngestError(str(path), f"invalid YAML or JSON ({_one_line(exc)})", _JSON_SHAPES) from exc
    return _oscal_document(path, loaded)


def parse_obliqa(path: Path, data: bytes) -> ParsedDocument:
    """ObliQA: a JSON list of passages `{ID, DocumentID, PassageID, Passage}`, one document per file; a JSON
    OSCAL catalog is read as one (`parse_oscal`)."""
    try:
        passages = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise IngestError(str(path), f"invalid JSON ({_one_line(exc)})", _JSON_SHAPES) from exc
    if isinstance(passages, dict):
        return _oscal_document(path, passages)
    required = {"ID": str, "DocumentID": int, "PassageID": str, "Passage": str}
    if not isinstance(passages, list) or not passages:
        raise IngestError(str(path), "expected a non-empty JSON list of ObliQA passages", _JSON_SHAPES)
    for i, item in enumerate(passages):
        if not isinstance(item, dict) or any(not isinstance(item.get(k), t) for k, t in required.items()):
            raise IngestError(str(path), f"passage {i} is not an ObliQA passage",
                              "each needs ID (str), DocumentID (int), PassageID (str), Passage (str)")
    doc_ids = {item["DocumentID"] for item in passages}
    if len(doc_ids) != 1:
        raise IngestError(str(path), f"passages of several documents in one file ({sorted(doc_ids)[:5]})",
                          "ObliQA holds one document per file")
    headings = {}
    for item in passages:
        body = normalize(item["Passage"])
        if body and len(body.split()) <= 12 and _HEADING_LIKE.match(body):
            headings.setdefault(item["PassageID"].strip().rstrip("."), body)
    parts: list[str] = []
    blocks: list[Block] = []
    length = 0
    for item in passages:
        body = normalize(item["Passage"])
        if not body:
            continue
        if parts:
            parts.append("\n\n")
            length += 2
        start = length
        parts.append(body)
        length += len(body)
        pid = item["PassageID"].strip()
        blocks.append(Block(
            start=start, end=length, section_number=pid, section_path=_obliqa_path(pid, headings),
            section_heading=headings.get(pid.rstrip("."), ""),
            metadata={"ID": item["ID"], "DocumentID": item["DocumentID"], "PassageID": item["PassageID"]},
        ))
    if not blocks:
        raise IngestError(str(path), "every passage is empty")
    return ParsedDocument(format="obliqa", text="".join(parts), title=None, blocks=blocks,
                          metadata={"obliqa_document_id": next(iter(doc_ids))})


PARSERS = {"pdf": parse_pdf, "docx": parse_docx, "html": parse_html, "md": parse_md, "txt": parse_txt,
           "obliqa": parse_obliqa, "oscal": parse_oscal}


_HINTS = {"pdf": "check the file opens in a PDF viewer, or export it again",
          "docx": "re-save it from a word processor", "obliqa": _JSON_SHAPES, "oscal": _JSON_SHAPES}
_QUIET_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning, ResourceWarning)
MAX_WARNINGS = 20


class _Warnings:
    """What a reader warned about while parsing one file: pypdf logs its warnings (`invalid pdf
    header`, `EOF marker not found`), other libraries use `warnings`."""

    def __init__(self) -> None:
        self.logged: list[str] = []
        self.caught: list[warnings.WarningMessage] = []

    @property
    def messages(self) -> list[str]:
        found = [*self.logged, *(str(w.message) for w in self.caught if not issubclass(w.category, _QUIET_WARNINGS))]
        unique = list(dict.fromkeys(normalize_ws(m) for m in found if m.strip()))
        if len(unique) > MAX_WARNINGS:
            unique = [*unique[:MAX_WARNINGS], f"... and {len(unique) - MAX_WARNINGS} more warnings"]
        return unique


@contextmanager
def _collect_warnings() -> Iterator[_Warnings]:
    collected = _Warnings()

    class _Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            collected.logged.append(record.getMessage())

    logger = logging.getLogger("pypdf")
    handler, propagate = _Handler(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # otherwise logging's last-resort handler prints them to stderr, unattributed
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            collected.caught = caught
            yield collected
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = normalize_ws(str(exc))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse(path: Path, data: bytes, fmt: str = "auto") -> ParsedDocument:
    """Parse raw bytes of `path` in the given (or detected) format.

    Whatever a reader raises becomes an IngestError naming the file (a crafted file can make any
    library fail in ways it does not document); what it warned about is attributed to the file
    (`ParsedDocument.warnings`, or `IngestError.warnings` when it failed).
    """
    if not data.strip():
        raise IngestError(str(path), "the file is empty", "nothing to ingest")
    fmt = detect_format(path, data) if fmt == "auto" else fmt
    if fmt not in PARSERS:
        raise IngestError(str(path), f"unknown format '{fmt}'", f"use one of {', '.join(FORMATS)}")
    with _collect_warnings() as collected:
        try:
            parsed = PARSERS[fmt](path, data)
        except IngestError as exc:
            exc.warnings = collected.messages
            raise
        except Exception as exc:  # any reader failure is this file's error, not the run's
            error = IngestError(str(path), f"cannot read it as {fmt} ({type(exc).__name__}: {_one_line(exc)})",
                                _HINTS.get(fmt, f"check that it is a valid {fmt} file"))
            error.warnings = collected.messages
            raise error from exc
        messages = collected.messages
    if not parsed.text.strip() or not parsed.blocks:
        error = IngestError(str(path), "no text found in the file", "nothing to ingest")
        error.warnings = messages
        raise error
    return parsed.model_copy(update={"warnings": messages})
