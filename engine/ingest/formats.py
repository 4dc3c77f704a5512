"""Readers for each source format. Each returns a `ParsedDocument`: the normalized full text
(what quotes are later checked against) and blocks (section bodies, or ObliQA passages) with
offsets into that text."""

from __future__ import annotations

import csv
import html
import io
import json
import logging
import re
import warnings
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError as XmlParseError

import yaml
from defusedxml import ElementTree as SafeElementTree
from defusedxml.common import DefusedXmlException

from engine.errors import IngestError, printable
from engine.ingest import asciidoc, legalxml, odt, oscal, rst, sheets
from engine.ingest.numbering import Numbering, formatted
from engine.ingest.sections import (
    NOTES,
    Block,
    ParsedDocument,
    SectionBuilder,
    eu_style,
    feed_lines,
    markdown_table,
    normalize,
)
from engine.ingest.structure import Heading, enumerator, is_caps_heading, parse_heading
from engine.search.spelling import dictionary_words, is_word
from engine.text import normalize_ws

FORMATS = ("pdf", "docx", "odt", "xlsx", "csv", "html", "md", "rst", "adoc", "txt", "xml", "obliqa", "oscal")
_EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".odt": "odt", ".xlsx": "xlsx", ".xlsm": "xlsx", ".csv": "csv", ".html": "html",
    ".htm": "html", ".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt", ".json": "obliqa",
    ".yaml": "oscal", ".yml": "oscal", ".xml": "xml", ".dita": "xml", ".rst": "rst", ".rest": "rst",
    ".adoc": "adoc", ".asciidoc": "adoc",
}


def sniff_format(data: bytes) -> str | None:
    """Format from the content alone: PDF, DOCX and HTML by their signatures, else plain text when
    the bytes read as text; None for anything else (binary)."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        try:
            package = zipfile.ZipFile(io.BytesIO(data))
            if "word/document.xml" in package.namelist():
                return "docx"
            if "xl/workbook.xml" in package.namelist():
                return "xlsx"
            mimetype = package.read("mimetype") if "mimetype" in package.namelist() else b""
            return "odt" if mimetype.strip() == b"application/vnd.oasis.opendocument.text" else None
        except (zipfile.BadZipFile, ValueError, OSError):
            return None
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    if head.startswith(b"<?xml") and b"<html" not in head:
        return "xml"
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


_VERSION_LINE = re.compile(r"(?:Version|Revision|Edition)\s+\d+(?:\.\d+)*\b", re.IGNORECASE)


# A notice set in a box of asterisks, as licences print their disclaimers: an edge of asterisks, lines framed by an
# asterisk at each end ("*  Covered Software is provided under this License on an "as is"       *"), an edge.
_BOX_EDGE = re.compile(r"^[ \t]*\*{8,}[ \t]*$")
_BOX_LINE = re.compile(r"^[ \t]*\*(?:[ \t]+(?P<inner>.*?))?[ \t]*\*[ \t]*$")


def unframed(text: str) -> str:
    """`text` with each box of asterisks taken off its lines: the edges blank, each framed line its own words, so
    that the notice reads as the text around it does (its heading a heading, its sentences whole) instead of one
    bulleted line per printed line ("*  Should any Covered Software prove defective in any respect, You     *").
    Only a whole box (an edge, at least one framed line, an edge) is read so. Pure."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        j = i + 1
        if _BOX_EDGE.match(lines[i]):
            while j < len(lines) and not _BOX_EDGE.match(lines[j]) and _BOX_LINE.match(lines[j]):
                j += 1
            if j < len(lines) and j > i + 1 and _BOX_EDGE.match(lines[j]):
                inner = [(m.group("inner") or "") if (m := _BOX_LINE.match(line)) else line for line in lines[i + 1:j]]
                lines[i:j + 1] = ["", *inner, ""]
        i = j
    return "\n".join(lines)


# A running header or footer line as each page prints it, its numbers aside ("Hardt  Standards Track  [Page 12]")
_PAGE_MARKS = re.compile(r"\d+")
_SENTENCE_END = (".", ":", "!", "?")


def unpaged(text: str) -> str:
    """Paginated plain text (pages split by form feeds, as the RFC Editor and typed filings print it) read as one
    text: the first and last lines of the pages that at least half of them repeat, their numbers aside (a running
    header "RFC 6749    OAuth 2.0    October 2012", a footer "Hardt    Standards Track    [Page 12]"), taken off, and
    a sentence a page break cuts ("The client MUST NOT use the authorization code" / "more than once.") read on
    across it. Text without two form feeds is returned as it is. Pure."""
    pages = text.split("\f")
    if len(pages) < 3:
        return text

    def shape(line: str) -> str:
        return _PAGE_MARKS.sub("#", normalize_ws(line))

    def edges(page: str) -> list[str]:
        lines = [line for line in page.split("\n") if line.strip()]
        return [shape(line) for line in (lines[:1] + lines[-1:])]

    seen = Counter(edge for page in pages for edge in set(edges(page)))
    running = {edge for edge, n in seen.items() if n >= max(2, len(pages) // 2)}
    kept: list[str] = []
    for page in pages:
        lines = page.split("\n")
        for end in (0, -1):  # the page's first lines, then its last: blank ones and one running line
            while lines and not lines[end].strip():
                lines.pop(end)
            if lines and shape(lines[end]) in running:
                lines.pop(end)
            while lines and not lines[end].strip():
                lines.pop(end)
        if not lines:
            continue
        if kept and not kept[-1].rstrip().endswith(_SENTENCE_END) and _goes_on(lines[0]):
            kept[-1] += "\n" + "\n".join(lines)  # the page break falls inside a sentence
        else:
            kept.append("\n".join(lines))
    return "\n\n".join(kept) + "\n"


def _goes_on(line: str) -> bool:
    """A page's first line carries on the sentence the page before left open: indented body text or a word in
    lower case, not a heading ("6.  Refreshing an Access Token" after an example that ends a page)."""
    return (line[:1].isspace() or line[:1].islower()) and heading_of(line) is None and not is_caps_heading(line)


# An entry of a table of contents: a heading, a dot leader and its page ("1.1.  Roles ..........6",
# "4.1.2.  Authorization Response . . . . . . 26"): it names a heading and is none.
_CONTENTS_ENTRY = re.compile(r"^[ \t]*\S[^\n]*?(?:[ \t]?\.){3,}[ \t]*\d+[ \t]*$", re.MULTILINE)


def parse_txt(path: Path, data: bytes) -> ParsedDocument:
    text = _CONTENTS_ENTRY.sub("", unpaged(unframed(_check_text(path, data))))
    builder = SectionBuilder(eu_style=eu_style(text))
    feed_lines(builder, text)
    first = builder.parts[0].split("\n")[0] if builder.parts else ""
    looks_like_title = 0 < len(first.split()) <= 15 and not first.rstrip().endswith((".", ";", ":", ","))
    if looks_like_title:  # "GNU GENERAL PUBLIC LICENSE" / "Version 3, 29 June 2007": two versions, two titles
        after = "".join(builder.parts[:3])[len(first):].lstrip()  # the title's piece, a joiner, the next piece
        version = _VERSION_LINE.match(after)
        first = f"{first} {version.group(0)}" if version and version.group(0) not in first else first
    return builder.build("txt", first if looks_like_title else None)


# A numbered clause whose title is set in bold and runs in to its text, as contracts in Markdown write them:
# "1. **Introduction**. This Agreement ...", "4.2 **Invoicing.** Provider will ...": the bold marks the title's end.
_BOLD_CLAUSE = re.compile(r"^(?P<number>\d{1,3}(?:\.\d{1,3})*)\.?[ \t]+(?:\*\*|__)(?P<title>[^*_\n]{1,80}?)"
                          r"(?:[.:](?:\*\*|__)|(?:\*\*|__)[.:])(?=[ \t]+\S)")  # not "1. **IT** is responsible ..."
_RUN_IN_BASE = 7  # deeper than any Markdown heading, so a clause nests under the heading above it


# Emphasis as CommonMark reads it: a marker that opens before a character and closes after one, an underscore never
# inside a word ("snake_case"), a star never a list item's bullet ("* item"), an escaped one ("\*") never
_EMPHASIS = re.compile(r"(?<![\w_\\])_(?=[^\s_])((?:[^_\n]|\n(?![ \t]*\n))+?)(?<=[^\s_\\])_(?![\w_])|"
                       r"(?<![\w*\\])\*(?=[^\s*])((?:[^*\n]|\n(?![ \t]*\n))+?)(?<=[^\s*\\])\*(?![\w*])")
_STRONG = re.compile(r"(\*\*|__)(?=\S)((?:.|\n(?![ \t]*\n))+?)(?<=\S)\1")


def _unbold(text: str) -> str:
    """Bold and italic markers are not content: "GitHub _will not_ automatically disable forks" reads as a page
    shows it ("GitHub will not automatically ..."), so a quote of it is the sentence the reader sees; so does a
    phrase marked over a line's end within its paragraph ("a nightly rate **equal to or less than the government\n
    maximum**", as a page is wrapped)."""
    return _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), _STRONG.sub(r"\2", text))


# A backslash before punctuation only keeps the mark from being read as markup ("Justice \(MoJ\)", "1\. Scope",
# "\[OJ C 227\]", as converters write them); code spans keep theirs (CommonMark's backslash escapes), and a table
# cell its escaped bar, which the table needs to tell its cells apart. An entity reference is the character it names
# ("the project&#39;s", "Building &amp; Releasing"), outside code spans.
_ESCAPED = re.compile(r"(`+)(.+?)\1|\\([!-/:-@\[-`{}~])"
                      r"|(&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)", re.DOTALL)


def _unescaped(text: str) -> str:
    """`text` as Markdown renders its backslash escapes, entity references and code spans: the mark without its
    backslash, the character an entity names, the code without its backticks (`` `POLACP041:` System
    Administrators MUST ... `` reads "POLACP041: System ..."). A fenced block (a line of three backticks) keeps its
    fences. Pure."""
    def rendered(m: re.Match[str]) -> str:
        if m.group(4) is not None:
            return html.unescape(m.group(4))
        if m.group(1) is None:
            return m.group(3)
        return m.group(0) if len(m.group(1)) >= 3 or "\n" in m.group(2) else m.group(2)

    return _ESCAPED.sub(rendered, text)


# A link reads as its text, as a rendered page shows it: "[NCSC guidance](https://www.ncsc.gov.uk/...)", an image
# as its alt text, a reference link "[the policy][1]" as its text, an autolink "<https://...>" as its address; a
# reference's definition ("[1]: https://...") shows nothing. A bracket escaped ("\[OJ C 227\]") opens no link. A
# link's text may run over a line's end within its paragraph ("[GSA IT Service\nDesk](...)", as a page is wrapped).
_LINK = re.compile(r"(?<!\\)!?\[((?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]\n]*\])*)\]"
                   r"(?:\((?:[^()\s]|\([^()\s]*\))+(?:\s+\"[^\"\n]*\")?\)|\[[^\[\]\n]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^<>\s]+)>")
LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\[\]\n]+\]:\s+\S+(?:\s+[\"'(].*[\"')])?\s*$")


def _delinked(text: str) -> str:
    """`text` with its Markdown links read as their text, autolinks as their address. Pure."""
    return _AUTOLINK.sub(r"\1", _LINK.sub(lambda m: m.group(1), text))


def _as_rendered(text: str) -> str:
    """A heading's or a footnote's Markdown as a page shows it: links as their text, escapes as their marks. Pure."""
    return _unescaped(_delinked(text))


# A list item that opens with an element anchored by a clause number, as some publishers mark up an agreement:
# "4. <span class="header_2" id="4">Payment & Taxes</span>" (the section), "    6. <span ... id="4.6">Payment
# Dispute.</span>  If Customer ..." (a clause with its run-in title), "<span id="13.2">" (an untitled clause).
_ANCHORED_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:\d{1,3}|[a-zA-Z]{1,3})[.)][ \t]+<(?P<tag>span|a)\b[^>]*?\bid=[\"']"
                            r"(?P<id>\d{1,3}(?:\.\d{1,3})*)[\"'][^>]*>(?P<inner>.*?)</(?P=tag)>(?P<rest>.*)$")
_INLINE_TAG = re.compile(r"</?(?:span|label|a|font|u|ins|mark)\b[^>]*>", re.IGNORECASE)
# ... and in any Markdown, the tags that only style or label their text ('<span class="coverpage_link">Purpose</span>')
_PRESENTATIONAL = re.compile(r"</?(?:span|label|font|mark)\b[^>]*>", re.IGNORECASE)
_NESTED_ITEM = re.compile(r"^[ \t]{2,}(?=(?:\d{1,3}|[a-zA-Z]{1,3}|[ivx]{1,5})[.)][ \t]|[-*+][ \t])")


def _anchored_clauses(text: str) -> str:
    """Markdown whose clauses are list items anchored by their numbers (at least three) as Markdown the reader
    structures: an item that is only its anchored title is a heading ("## 4 Payment & Taxes", deeper items one
    level further), and so is an anchored run-in title, its clause's text the paragraph after it ("### 4.6 Payment
    Dispute." / "If Customer ..."); an anchor around the clause's own words gives it its number; nested items lose
    their indentation; inline HTML tags go, their text stays. Other Markdown loses only its presentational tags
    (`_PRESENTATIONAL`)."""
    lines = text.split("\n")
    if sum(bool(_ANCHORED_ITEM.match(line)) for line in lines) < 3:
        return _PRESENTATIONAL.sub("", text)
    out: list[str] = []
    for line in lines:
        found = _ANCHORED_ITEM.match(line)
        if found is None:
            out.append(_INLINE_TAG.sub("", _NESTED_ITEM.sub("", line)))
            continue
        number, inner = found.group("id"), _INLINE_TAG.sub("", found.group("inner")).strip()
        rest = _INLINE_TAG.sub("", found.group("rest")).strip()
        depth = len(found.group("indent").expandtabs(4)) // 4
        heading = f"{'#' * min(6, 2 + depth)} {number} {inner}"
        if not rest:
            out.extend(["", heading, ""])
        elif len(inner.split()) <= 10 and inner.endswith((".", ":")) and "**" not in inner:
            out.extend(["", heading, "", rest, ""])
        else:
            out.extend(["", f"{number} {inner} {rest}".rstrip(), ""])
    return "\n".join(out)


_MD_NOTE = re.compile(r"^\[\^([^\]\s]+)\]:[ \t]*(.*)$")
_MD_NOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")


def md_footnotes(text: str) -> tuple[str, list[str]]:
    """Markdown footnotes ("...within 72 hours[^bd]." and "[^bd]: Business days exclude holidays.", its lines
    indented under it going on): the text with each reference as the number a renderer shows ("72 hours (1).")
    and its definition taken out, and the notes ("(1) Business days exclude holidays."), numbered in the order they
    are referred to; a definition never referred to keeps its label. Pure."""
    lines, kept, bodies, current = text.split("\n"), [], {}, None
    for line in lines:
        match = _MD_NOTE.match(line)
        if match:
            current = match.group(1)
            bodies[current] = [match.group(2)]
        elif current is not None and (line.startswith(("  ", "\t")) or not line.strip()):
            bodies[current].append(line)
        else:
            current = None
            kept.append(line)
    if not bodies:
        return text, []
    numbers: dict[str, str] = {}

    def mark(match: re.Match[str]) -> str:
        label = match.group(1)
        if label not in bodies:
            return match.group(0)
        number = numbers.setdefault(label, str(len(numbers) + 1))
        before = match.string[match.start() - 1:match.start()]
        return f" ({number})" if before.isalnum() else f"({number})"

    body = _MD_NOTE_REF.sub(mark, "\n".join(kept))
    order = [*numbers, *(label for label in bodies if label not in numbers)]
    notes = [f"({numbers.get(label, label)}) {normalize_ws(' '.join(bodies[label]))}".strip() for label in order]
    return body, notes


_HTML_TABLE = re.compile(r"<table\b[^>]*>.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_HTML_ROW = re.compile(r"<tr\b[^>]*>(.*?)</tr\s*>", re.IGNORECASE | re.DOTALL)
_HTML_CELL = re.compile(r"<t([dh])\b[^>]*>(.*?)</t[dh]\s*>", re.IGNORECASE | re.DOTALL)
_BOLD_CELL = re.compile(r"^\s*<(strong|b)\b[^>]*>.*</\1\s*>\s*$", re.IGNORECASE | re.DOTALL)


def _cell_text(inner: str) -> str:
    """A table cell's text: its tags gone, entities read, white space one space, a pipe escaped. Pure."""
    return normalize_ws(html.unescape(re.sub(r"<[^>]+>", " ", inner))).replace("|", "\\|")


def md_html_tables(text: str) -> str:
    """Markdown with its HTML tables (as GitHub renders them: "<table><tr><td>Critical</td><td>Extreme ...</td>")
    as Markdown tables, each row a line of its cells' text (its header the first row where that row is <th> or bold
    cells), so that a row is read, quoted and cited as a Markdown table's is, not as tags. Pure."""
    def table(match: re.Match[str]) -> str:
        rows = [_HTML_CELL.findall(row) for row in _HTML_ROW.findall(match.group(0))]
        rows = [row for row in rows if row]
        if not rows:
            return match.group(0)
        head = rows[0] if all(kind.lower() == "h" or _BOLD_CELL.match(inner) for kind, inner in rows[0]) else None
        body = [[_cell_text(inner) for _, inner in row] for row in (rows[1:] if head else rows)]
        header = [_cell_text(inner) for _, inner in head] if head else None
        return "\n\n" + markdown_table(body, header) + "\n\n" if body else match.group(0)

    return _HTML_TABLE.sub(table, text)


# Front matter: the metadata block a static-site generator reads before the page (Jekyll's and Hugo's YAML between
# "---" lines, Hugo's TOML between "+++"): the page's settings, not its text; its title names the page.
_FRONT_MATTER = re.compile(r"\A\ufeff?(---|\+\+\+)[ \t]*\r?\n(.*?)\r?\n\1[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title[ \t]*[:=][ \t]*(.+?)[ \t]*$", re.MULTILINE)


def md_front_matter(text: str) -> tuple[str, str | None]:
    """(the page without its front matter, the title it gives or None). A block whose lines are not settings
    ("key: value", "key = value", a list item, a comment) is no front matter but the page's own text (a horizontal
    rule). Pure."""
    found = _FRONT_MATTER.match(text)
    if found is None or not all(re.match(r"^\s*(?:#|-\s|[\w.-]+\s*[:=]|$)", line) or line[:1].isspace()
                                for line in found.group(2).splitlines()):
        return text, None
    title = _FRONT_TITLE.search(found.group(2))
    value = title.group(1).strip().strip("'\"") if title else ""
    return text[found.end():], html.unescape(value) or None


# Template tags that a static-site generator fills in before it renders a page's Markdown (Jekyll's and Eleventy's
# Liquid: "{% include 'banner.html' %}", "{{ page.title }}"; Hugo's shortcodes: "{{< ref "x.md" >}}", "{{% notice
# %}}"), read as the page shows them where the page cannot be built here: a tag in a link's address is part of the
# address (the link reads as its text); a tag of the text with a quoted argument shows that argument ('ask in {%
# slack_channel "travel" %}' -> "ask in travel"), one with a value's path in the site's data the value's name ('{%
# data variables.contact.contact_support %}' -> "contact support"); a picture's tag, an include (not followed), a
# block's opening and closing, a control, a comment with its text and a value the site's settings give show
# nothing. Text between "{% raw %}" and "{% endraw %}" is kept as it is written.
_TEMPLATE_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}(.*?)\{%-?\s*endraw\s*-?%\}", re.DOTALL)
_TEMPLATE_COMMENT = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}|\{\{<\s*/\*.*?\*/\s*>\}\}",
                               re.DOTALL)
_TEMPLATE_IN_LINK = re.compile(r"(\]\()\s*(?:\{%.*?%\}|\{\{.*?\}\})", re.DOTALL)
_TEMPLATE_TAG = re.compile(r"\{%-?\s*(?P<tag>\w+)(?P<args>.*?)-?%\}|\{\{[<%]-?\s*(?P<close>/)?\s*(?P<code>[\w-]+)?"
                           r"(?P<codeargs>.*?)-?[>%]\}\}|\{\{.*?\}\}", re.DOTALL)
_TEMPLATE_SILENT = frozenset((
    "include include_relative include_cached render section layout extends block endblock if elsif else endif unless "
    "endunless for endfor break continue case when endcase assign capture endcapture increment decrement cycle "
    "tablerow endtablerow liquid echo highlight endhighlight ref relref param partial partialcached youtube vimeo "
    "gist tweet instagram figure image img picture video audio svg icon").split())


def md_templates(text: str) -> str:
    """A static-site page's Markdown with its template tags read as the page shows them (`_TEMPLATE_TAG`). Pure."""
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        kept.append(match.group(1))
        return f"\x00{len(kept) - 1}\x00"

    def shown(match: re.Match[str]) -> str:
        name = match.group("tag") or match.group("code")
        if name is None or match.group("close") or name.lower() in _TEMPLATE_SILENT or name.lower().startswith("end"):
            return ""
        args = match.group("args") or match.group("codeargs") or ""
        if argument := re.match(r"\s*([\"'])(.*?)\1", args):
            return argument.group(2)
        # a value named by its path in the site's data ('{% data variables.contact.contact_support %}'): its name
        named = re.fullmatch(r"\s*(?:[\w-]+\.)+([\w-]+)\s*", args)
        return re.sub(r"[_-]+", " ", named.group(1)) if named else ""

    text = _TEMPLATE_COMMENT.sub("", _TEMPLATE_RAW.sub(keep, text))
    text = _TEMPLATE_TAG.sub(shown, _TEMPLATE_IN_LINK.sub(r"\1#", text))
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


# HTML set in Markdown, as a renderer shows it (GitHub, Jekyll): a heading tag is a heading, a list item a list item,
# a line break a line's end, a script, a style sheet or a button nothing, and any other tag (<strong>, <sup>, <div>,
# <ul>) only its text; not inside a code fence or a code span, nor an autolink ("<https://...>").
_MD_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_MD_HTML_ITEM = re.compile(r"<li\b[^>]*>(.*?)</li\s*>", re.IGNORECASE | re.DOTALL)
_MD_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MD_HTML_HIDDEN = re.compile(r"<(script|style|button|noscript|template)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_MD_HTML_TAG = re.compile(r"</?(?:a|abbr|b|big|center|cite|code|dd|details|div|dl|dt|em|font|i|img|ins|kbd|mark|nav|ol|"
                          r"p|s|section|small|span|strong|sub|summary|sup|u|ul)\b(?:\s[^<>]*)?/?>", re.IGNORECASE)


def md_html(text: str) -> str:
    """Markdown with the HTML set in it read as a renderer shows it (`_MD_HTML_HEADING` ...), code left as it is.
    Pure."""
    def inline(fragment: str) -> str:
        return normalize_ws(html.unescape(_MD_HTML_TAG.sub("", fragment)))

    def rendered(piece: str) -> str:
        if "<" not in piece:
            return piece
        piece = _MD_HTML_HIDDEN.sub("", piece)
        piece = _MD_HTML_HEADING.sub(lambda m: f"\n\n{'#' * int(m.group(1))} {inline(m.group(2))}\n\n", piece)
        piece = _MD_HTML_ITEM.sub(lambda m: f"\n* {inline(m.group(1))}\n" if inline(m.group(1)) else "\n", piece)
        return _MD_HTML_TAG.sub("", _MD_HTML_BREAK.sub("\n", piece))

    # fenced code blocks and code spans keep their tags: split them out, render the rest
    code = r"(^[ \t]*(?:```|~~~).*?^[ \t]*(?:```|~~~)[ \t]*$|`[^`\n]+`)"
    parts = re.split(code, text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if i % 2 else rendered(part) for i, part in enumerate(parts))


_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")


def _fenced_lines(lines: list[str]) -> set[int]:
    """The indexes of the lines inside a fenced code block (CommonMark: three or more backticks or tildes, closed by
    a fence of the same character at least as long), where "# install the tool" is a comment of the code, not a
    heading. Pure."""
    inside: set[int] = set()
    opened: str | None = None
    for i, line in enumerate(lines):
        fence = _FENCE.match(line)
        if opened is None:
            if fence is not None:
                opened = fence.group("fence")
            continue
        if fence is not None and fence.group("fence")[0] == opened[0] and len(fence.group("fence")) >= len(opened) \
                and not line.strip().lstrip(opened[0]):
            opened = None
            continue
        inside.add(i)
    return inside


def _list_ordinal(number: str, listed: list[int]) -> str:
    """The number a rendered page shows for a clause that is an item of an ordered list: CommonMark numbers a list
    from its first item's number on, whatever the later items write ("1." "1." "1." is shown 1, 2, 3), so a
    clause of a list open (`listed`: its first number and its items so far, updated in place) is numbered on; a
    dotted number ("4.2") is the clause's own. Pure but for `listed`."""
    if not number.isdigit():
        listed.clear()
        return number
    if listed:
        listed[1] += 1
        return str(listed[0] + listed[1] - 1)
    listed.extend([int(number), 1])
    return number


def parse_md(path: Path, data: bytes) -> ParsedDocument:
    written = _check_text(path, data)
    text, named = md_front_matter(written)
    if len(text) < len(written):  # a page with front matter is a static-site generator's: fill in its template tags
        text = md_templates(text)
    text, notes = md_footnotes(md_html(_anchored_clauses(md_html_tables(text))))
    # an act whose articles are Markdown headings ("### Article 3 ...") is read as one whose articles are lines
    builder = SectionBuilder(eu_style=eu_style(re.sub(r"(?m)^#{1,6}[ \t]+", "", _unbold(text))))
    title = None
    para: list[str] = []

    def flush() -> None:
        if para:
            listed: list[int] = []  # the list of clauses open: its first number and how many items it has had
            for chunk in re.split(r"\n\s*\n", "\n".join(para)):
                clause = _BOLD_CLAUSE.match(chunk.lstrip())
                if clause is None and not chunk[:1].isspace():
                    listed = []  # a paragraph at the margin ends the list; an indented one goes on with its item
                chunk = _unescaped(_unbold(_delinked(chunk)))
                if clause is not None:  # the clause names its section and opens its text
                    number, name = clause.group("number"), _unescaped(_unbold(clause.group("title"))).strip()
                    number = _list_ordinal(number, listed)
                    builder.heading(chunk.strip().split("\n")[0], parsed=Heading(
                        "", number, name, _RUN_IN_BASE + number.count(".")), run_in=True)
                    builder.paragraph(chunk, opens_section=True)
                else:
                    builder.paragraph(chunk)
            para.clear()

    lines = normalize(text).split("\n")
    # A document with several top-level headings ("# Purpose and Scope", "# Policy", ...) has no title among
    # them: each is a section (the title comes from --title or the file name).
    fenced = _fenced_lines(lines)
    several_h1 = sum(bool(re.match(r"^#\s+\S", line)) and i not in fenced for i, line in enumerate(lines)) > 1
    for i, line in enumerate(lines):
        match = None if i in fenced else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", _unbold(line))
        if match:
            flush()
            level = len(match.group(1))
            if level == 1 and title is None and not several_h1:
                title = _as_rendered(match.group(2))
                builder.title_line(title)
            else:
                builder.heading(_as_rendered(match.group(2)), level, letters=True)
        elif i in fenced or not LINK_DEFINITION.match(line):
            para.append(line)
    flush()
    builder.notes([_as_rendered(note) for note in notes])
    return builder.build("md", title or named)


_HTML_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_HTML_BLOCKS = (*_HTML_HEADINGS, "p", "li", "pre", "blockquote", "td", "th", "dt", "dd")
_DASHES = ("\u2014", "\u2013", "-", "\u2022")  # an indent's mark in a label cell, as EUR-Lex sets it


def _html_text(el: Any) -> str:
    """An element's text, its inline pieces joined by spaces, but none before a closing mark or after an opening
    bracket that markup set apart ("the <a>data</a>, which" -> "the data, which"; EUR-Lex's footnote mark "(<span>1
    </span>)" -> "(1)"). Pure."""
    text = el.get_text(" ", strip=True)
    return re.sub(r"([(\[])\s+", r"\1", re.sub(r"\s+([,.;:!?)\]])", r"\1", text))


# A footnote or endnote as HTML marks it: a class ("note", "footnote", "endnotes", EUR-Lex's "oj-note") or an ARIA
# role ("doc-footnote", "doc-endnotes") on it or around it; not a note set in a box in the text (`_box`), which
# belongs to the section it stands in.
_NOTE_CLASS = re.compile(r"(?:^|[-_])(?:foot|end)?notes?$", re.IGNORECASE)
_NOTE_ROLES = ("doc-footnote", "doc-endnote", "doc-endnotes", "doc-footnotes")
_NOTES_HEADING = (-1, NOTES)


def _note(el: Any) -> bool:
    """The element is, or is inside, a footnote or endnote. Pure."""
    for node in [el, *el.parents]:
        if getattr(node, "name", None) in (None, "body", "html", "[document]") or _box(node):
            return False
        if node.get("role") in _NOTE_ROLES or any(_NOTE_CLASS.search(c) for c in node.get("class") or []):
            return True
    return False


# A box's marker: the few words that open a note or example set apart in the text ("Note", "Note 2", "Example"),
# marked by the ARIA role "heading" or a class ("marker", "note-title", MkDocs' and Sphinx's "admonition-title").
_MARKER_CLASS = re.compile(r"(?:^|[-_])(?:marker|title)$", re.IGNORECASE)
_MARKER_WORDS = 4


def _marker(box: Any) -> Any:
    """The marker that opens the box, or None. Pure."""
    found = box.find(lambda t: t.get("role") == "heading" or any(_MARKER_CLASS.search(c) for c in t.get("class") or []))
    if found is None:
        return None
    text = found.get_text(" ", strip=True)
    opens = box.get_text(" ", strip=True).startswith(text)
    return found if opens and 0 < len(text.split()) <= _MARKER_WORDS else None


def _box(node: Any) -> bool:
    """A note or example set in a box within the text: the ARIA role "note" (W3C's specifications set a "Note" box
    inside each success criterion), an admonition (MkDocs, Sphinx: class "admonition note"), or an aside that opens
    with a marker ("Example"). Pure."""
    return (node.get("role") == "note" or "admonition" in (node.get("class") or [])
            or node.name == "aside" and _marker(node) is not None)


def _boxes_labelled(soup: Any, text_type: type) -> None:
    """Read each box's marker as the label of the text it opens ("Note" above "For requirements related to color,
    ..." -> "Note: For requirements related to color, ..."), as the box sets it apart: its first paragraph is then
    told a note or an example by its opening words, as a text-format note is ("NOTE: ..."). `text_type`: bs4's
    NavigableString."""
    for box in soup.find_all(_box):
        if (marker := _marker(box)) is None:
            continue
        text = marker.get_text(" ", strip=True)
        label = text if text.endswith((":", ".")) else f"{text}:"
        first = marker.find_next(_HTML_BLOCKS)
        if first is not None and box in first.parents and first.name not in _HTML_HEADINGS:
            first.insert(0, text_type(f"{label} "))
            marker.decompose()
        else:
            marker.replace_with(text_type(f"{label} "))


def _described(term: Any) -> Any:
    """The description (`dd`) right after a definition list's term (`dt`), or None (another term follows). Pure."""
    following = term.find_next_sibling(["dt", "dd"])
    return following if following is not None and following.name == "dd" else None


def _list_label(item: Any) -> str | None:
    """The marker a browser shows before a list item, which its text lacks: "1.", "b.", "iv." in an ordered list (its
    `type` and `start`, the item's `value`), "\u2022" in an unordered one. Pure."""
    parent = item.find_parent(["ol", "ul"])
    if parent is None:
        return None
    if parent.name == "ul":
        return "\u2022"
    start = str(parent.get("start", "1"))
    number = (int(start) if start.isdigit() else 1) - 1
    for sibling in parent.find_all("li", recursive=False):
        value = str(sibling.get("value", ""))
        number = int(value) if value.isdigit() else number + 1
        if sibling is item:
            break
    fmt = {"a": "lowerLetter", "A": "upperLetter", "i": "lowerRoman", "I": "upperRoman"}.get(
        str(parent.get("type", "1")), "decimal")
    return f"{formatted(number, fmt)}."


def _point_row(cell: Any) -> str | None:
    """A table row laid out as a list point, its label in one cell and its text in the next ("(a)" | "the model
    and serial numbers ...": how EUR-Lex sets every point and recital): the point as one line, "(a) the model
    ..."; None for any other cell. Pure."""
    row = cell.find_parent("tr")
    cells = list(row.find_all(["td", "th"], recursive=False)) if row is not None else []
    texts = [_html_text(c) for c in cells]
    if len(cells) != 2 or cells[0] is not cell or not texts[1]:
        return None
    label = texts[0]
    if label in _DASHES or (len(label.split()) == 1 and enumerator(label) is not None):
        return f"{label} {texts[1]}"
    return None


# Elements that hold blocks rather than text: where a page sets text straight in one, with no paragraph around it
# (EUR-Lex's consolidated texts: '<div class="norm"><span>1. </span><div>The provider ...</div></div>'), each run
# of its text and inline elements is read as a paragraph of its own (`_loose_text`), not dropped
_HTML_STRUCTURE = ("table", "thead", "tbody", "tfoot", "tr", "ul", "ol", "dl", "hr", "colgroup")
_HTML_CONTAINERS = ("div", "section", "article", "main", "header", "footer", "aside", "nav", "figure", "figcaption",
                    "address", "form", "fieldset", "details", "summary", "center", "body")
_HTML_BLOCKISH = (*_HTML_BLOCKS, *_HTML_STRUCTURE, *_HTML_CONTAINERS)
# A point's or paragraph's label alone, set apart from its text by markup ("1.", "1a.", "(b)", "iv)", an indent's
# dash): read with the text after it, as a browser lays them out side by side
_LABEL_ONLY = re.compile(r"(?:\(?(?:\d{1,3}[a-z]{0,2}|[a-zA-Z]|[ivxlcIVXLC]{1,6})[.)]|"
                         r"\((?:\d{1,3}[a-z]{0,2}|[a-zA-Z]{1,6})\)|[\u2014\u2013\u2022-])")
# The marks of a consolidated text (EUR-Lex): "▼B", "▼M2" open what the basic act or an amendment gives, "►M2 ...
# ◄" what an amendment replaced within a line, a line of dashes stands for text deleted: none of it is the law's
# wording
_CONSOLIDATION_MARK = re.compile(r"[\u25bc\u25ba]\s?[A-Z]{1,2}\d{0,3}\b\s?|\s?\u25c4")
_DELETED_LINE = re.compile(r"[\u2014\u2013_-]{3,}")


def _loose_text(soup: Any, text_type: type) -> None:
    """Wrap each run of text and inline elements set straight in an element that holds blocks (a div beside
    paragraphs, a section, the body, a span around a div) in a paragraph of its own, so the page's every word is
    read; not inside a paragraph, list item or cell (read with it), nor in a table's or list's own structure.
    `text_type`: bs4's NavigableString (parse_html imports bs4), plain text as against a comment or a declaration;
    an element is told by its name."""

    def tag(node: Any) -> bool:
        return getattr(node, "name", None) is not None

    def blockish(node: Any) -> bool:
        return tag(node) and (node.name in _HTML_BLOCKISH or node.find(_HTML_BLOCKISH) is not None)

    def wrap(run: list[Any]) -> None:
        if any((n.get_text() if tag(n) else str(n)).strip() for n in run):
            paragraph = soup.new_tag("p")
            run[0].insert_before(paragraph)
            for node in run:
                paragraph.append(node.extract())

    root = soup.body or soup
    for holder in [root, *root.find_all(True)]:
        if (holder.name in _HTML_BLOCKS or holder.name in _HTML_STRUCTURE
                or holder.find_parent(_HTML_BLOCKS) is not None
                or holder.name not in _HTML_CONTAINERS and holder is not root
                and not any(blockish(c) for c in holder.children)):
            continue  # read with the block around it, or an inline element read where it stands
        run: list[Any] = []
        for child in list(holder.children):
            if blockish(child):
                wrap(run)
                run = []
            elif tag(child) or type(child) is text_type:  # not a comment or a declaration
                run.append(child)
        wrap(run)


def _labels_joined(items: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A paragraph that is only a label ("1.", "(a)", an em dash) read with the paragraph after it. Pure."""
    out: list[tuple[int, str]] = []
    for level, text in items:
        if (out and level == 0 and out[-1][0] == 0 and _LABEL_ONLY.fullmatch(out[-1][1]) and text
                and not _LABEL_ONLY.fullmatch(text)):
            out[-1] = (0, f"{out[-1][1]} {text}")
        else:
            out.append((level, text))
    return out


def _unmarked(items: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The items without a consolidated text's marks (`_CONSOLIDATION_MARK`) and its lines for deleted text; an item
    that held only those left out. Pure."""
    out = []
    for level, text in items:
        bare = normalize_ws(_CONSOLIDATION_MARK.sub(" ", text))
        if bare and not _DELETED_LINE.fullmatch(bare):
            out.append((level, bare if bare != normalize_ws(text) else text))
        elif level < 0:
            out.append((level, text))
    return out


_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.IGNORECASE)
_HIDDEN_CLASSES = frozenset({"hidden", "d-none"})  # Bootstrap's and most sites' "hide this" classes


def _hidden(el: Any) -> bool:
    """The page does not show the element: its hidden attribute, an inline style that hides it, or a class that
    stylesheets hide by. Pure."""
    return (el.has_attr("hidden") or _HIDDEN_STYLE.search(str(el.get("style") or "")) is not None
            or any(c in _HIDDEN_CLASSES for c in el.get("class") or []))


# A row of links and nothing else but the marks between them ("Understanding Contrast (Minimum) | How to Meet Contrast
# (Minimum)" under each of W3C's success criteria, a breadcrumb "Home › Policies › Access"): the page's navigation to
# other pages, not its text
_LINK_SEPARATORS = re.compile(r"^[\s|\u00b7\u2022/\u203a\u00bb>\u2013\u2014-]*$")


def _link_row(el: Any) -> bool:
    """The element holds two links or more and nothing but separators between them. Pure."""
    if el.name not in ("div", "p", "span") or len(links := el.find_all("a")) < 2:
        return False
    text = el.get_text(" ")
    for link in links:
        text = text.replace(link.get_text(" "), " ", 1)
    return _LINK_SEPARATORS.match(text) is not None


# A section's number set in bold to open its first paragraph, its marginal note in a short paragraph above ("Security"
# / "<b>12 </b>(1) A health information custodian shall ..."), as Ontario's e-Laws and other legislatures' sites set
# an act: read as the section's heading ("Section 12 Security") over its text, where a page numbers three sections
# so; a Part's or a Schedule's line among them ("PART I ...") is a heading too.
_BOLD_NUMBER = re.compile(r"^\s*(\d{1,4}(?:\.\d{1,3})*)\.?\s*$")
_RUN_IN_SECTIONS = 3
_MARGINAL_NOTE_WORDS = 12


def _bold_number(el: Any) -> str | None:
    """The section number a paragraph opens with in bold, text following it; None for any other paragraph. Pure."""
    if el.name != "p":
        return None
    first: Any = next((c for c in el.children
                       if (c.get_text(strip=True) if getattr(c, "name", None) else str(c).strip())), None)
    if getattr(first, "name", None) not in ("b", "strong") or (found := _BOLD_NUMBER.match(first.get_text())) is None:
        return None
    return found.group(1) if _html_text(el)[len(first.get_text(strip=True)):].strip() else None


def _run_in_sections(items: list[tuple[int, str, str | None]]) -> list[tuple[int, str]]:
    """Items (level, text, the bold number a paragraph opens with) with each numbered paragraph read as its
    section's heading and its text, the short paragraph above it (its marginal note) the heading's title; a Part's,
    Chapter's or Schedule's line a heading above them. Unchanged where fewer than `_RUN_IN_SECTIONS` paragraphs
    open with a number. Pure."""
    if sum(1 for _, _, number in items if number) < _RUN_IN_SECTIONS:
        return [(level, text) for level, text, _ in items]
    out: list[tuple[int, str]] = []
    for level, text, number in items:
        heading = parse_heading(text) if level == 0 and not number else None
        if heading is not None and heading.kind in ("part", "chapter", "schedule", "annex"):
            out.append((_BOLD_HEADING_LEVEL - 1, text))
            continue
        if not number:
            out.append((level, text))
            continue
        title = ""
        if out and out[-1][0] == 0 and len(out[-1][1].split()) <= _MARGINAL_NOTE_WORDS and not out[-1][1].rstrip(
                ).endswith((".", ";", ":", ",")):
            title = out.pop()[1]
        out.append((_BOLD_HEADING_LEVEL, f"Section {number} {title}".strip()))
        out.append((0, text.split(None, 1)[1] if text.split(None, 1)[0].rstrip(".") == number else text))
    return out


_BOLD_HEADING_LEVEL = 7  # deeper than any heading tag: a bold line's section nests under the page's headings


def _bold_heading(el: Any) -> str | None:
    """A paragraph that is one bold line naming a numbered provision, as pages without heading tags set their
    sections ("<b>\u00a7 59.1-577. Personal data rights; consumers.</b>" on the Code of Virginia's pages): its text;
    None for any other paragraph (a bold sentence, a bold word). Pure."""
    if el.name != "p":
        return None
    parts = [c for c in el.children if getattr(c, "name", None) is not None or str(c).strip()]
    if len(parts) != 1 or getattr(parts[0], "name", None) not in ("b", "strong"):
        return None
    text = _html_text(el)
    heading = parse_heading(text)
    return text if heading is not None and heading.kind and heading.number else None


def _html_title(soup: Any) -> str | None:
    """The page's `<title>`, unless it is a file's name ("L_2022152EN.01000101.xml", as the Official Journal's pages
    are titled): then the title block a European Legislation Identifier page sets (`eli-main-title`: "REGULATION
    (EU) 2022/868 ... (Data Governance Act)"), else none (the first heading, or the file's name, stands in)."""
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    if title and not re.fullmatch(r"[\w.-]+\.[A-Za-z]{2,5}", title):
        return title
    block = soup.find(class_="eli-main-title")
    lines = [normalize_ws(p.get_text(" ", strip=True)) for p in block.find_all("p")] if block is not None else []
    return " ".join(line for line in lines if line and not line.startswith("(Text with")) or None


def parse_html(path: Path, data: bytes) -> ParsedDocument:
    """Heading tags are headings; a page that sets its structure in classes instead (EUR-Lex: "Article 5" in a
    paragraph of class "oj-ti-art", each point a table row) is read as plain text is (`feed_lines`): its articles,
    paragraphs, points and recitals found by their numbers."""
    from bs4 import BeautifulSoup, NavigableString, XMLParsedAsHTMLWarning

    # lxml's HTML parser closes an open paragraph where a block begins, as a browser does: the California code's
    # "<p><h6>1798.105.</h6> <p>Consumers' Right ...</p>..." is a heading, then its paragraphs (Python's html.parser
    # nests the rest of the page in the first <p>, and its text came before the heading that opens it). A page that
    # opens with an XML declaration (XHTML: the Official Journal's, the California code's) is a web page all the
    # same, and bs4's advice to parse it as XML is no warning about the file.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(_check_text(path, data), "lxml")
    # nor the page's navigation: HTML's <nav> (a site's menu, a specification's table of contents), which names the
    # text's headings and other pages, its words read where they stand
    for tag in soup(["script", "style", "noscript", "template", "nav"]):
        tag.decompose()
    # what the page hides is not on it (a sign-in form, a select list's duplicate, a heading for screen layouts): the
    # hidden attribute, an inline style that hides the element, or the class that common stylesheets hide it by
    for tag in soup.find_all(_hidden):
        tag.decompose()
    for tag in soup.find_all(_link_row):
        tag.decompose()
    # text marked deleted (<del>, as an edit history or a draft's changes shows it) is no longer the document's:
    # read as its reader would take it, every change accepted, <ins> kept
    deleted = soup("del")
    for tag in deleted:
        tag.decompose()
    if deleted:
        warnings.warn(f"{len(deleted)} passage(s) marked deleted (<del>) not read, as if the changes were accepted",
                      UserWarning, stacklevel=1)
    title = _html_title(soup)
    _boxes_labelled(soup, NavigableString)
    _loose_text(soup, NavigableString)
    items: list[tuple[int, str]] = []  # (heading level, 0 for a block of text, -1 for the notes' heading; its text)
    numbered: dict[int, str | None] = {}  # items that open with a section number in bold (`_bold_number`)
    skip: set[int] = set()
    noted = False
    elements = (soup.body or soup).find_all(_HTML_BLOCKS)
    # footnotes and endnotes are the notes after the page's last text that is none: a paragraph classed "footnote"
    # among the text (Ontario's e-Laws set each amendment's citation so) is read where it stands
    body_end = max((i for i, el in enumerate(elements) if el.get_text(strip=True) and not _note(el)), default=-1)
    for position, el in enumerate(elements):
        if id(el) in skip or (el.find_parent(_HTML_BLOCKS[6:]) is not None and el.name not in _HTML_HEADINGS):
            continue
        if not noted and position > body_end and _note(el):
            # footnotes under a heading of their own, not read as the last article's paragraphs ("(1) OJ L 119 ...")
            items.append(_NOTES_HEADING)
            noted = True
        if el.name == "td" and (point := _point_row(el)) is not None:
            skip.update(id(c) for c in el.find_next_siblings(["td", "th"]))
            items.append((0, point))
        elif el.name in _HTML_HEADINGS:
            items.append((int(el.name[1]), _html_text(el)))
        elif el.name == "dt" and (term := _html_text(el)) and (described := _described(el)) is not None:
            # a term and its description as one item ("Large Text: Large-scale text ... at least 3:1;"), as a
            # glossary entry or a named exception reads
            skip.add(id(described))
            items.append((0, f"{term}{'' if term.endswith((':', '.')) else ':'} {_html_text(described)}"))
        elif el.name == "li" and (label := _list_label(el)) is not None and (text := _html_text(el)):
            items.append((0, f"{label} {text}"))  # the item with the marker a browser shows
        elif (bold := _bold_heading(el)) is not None:
            items.append((_BOLD_HEADING_LEVEL, bold))
        else:
            items.append((0, _html_text(el)))
            numbered[len(items) - 1] = _bold_number(el)
    items = _labels_joined(_unmarked(_run_in_sections(
        [(level, text, numbered.get(i)) for i, (level, text) in enumerate(items)])))
    builder = SectionBuilder(eu_style=eu_style("\n\n".join(text for _, text in items)))
    tagged = any(level > 0 for level, _ in items)
    for level, text in items:
        if level:
            builder.heading(text, max(level, 1))
            title = title or (text if level > 0 else None)
        elif tagged:
            builder.paragraph(text)
        else:
            builder.text_block(normalize(text))
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


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# What a paragraph shows, as Word shows it with every tracked change accepted: deleted and moved-away runs are not
# read, inserted and moved-here runs are (python-docx's text skips runs inside w:ins, losing inserted words)
_DOCX_GONE = {f"{_W}del", f"{_W}moveFrom"}
_DOCX_CHARS = {f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n", f"{_W}noBreakHyphen": "-"}


def _docx_text(element: Any, marks: dict[tuple[str, str], str] | None = None) -> str:
    """The text of a paragraph element (w:p) or a table cell (w:tc, its paragraphs one a line), tracked insertions
    in and deletions out, hidden runs (w:vanish) left out; a footnote's or endnote's reference as its mark in
    `marks` ("(1)")."""
    if element.tag == f"{_W}tc":
        return "\n".join(_docx_text(p, marks) for p in element.iter(f"{_W}p"))
    pieces: list[str] = []

    def walk(node: Any) -> None:
        for child in node:
            tag = child.tag
            if tag in _DOCX_GONE or (tag == f"{_W}r" and child.find(f"{_W}rPr/{_W}vanish") is not None):
                continue
            if tag in _NOTE_REFERENCES and marks is not None:
                mark = marks.get((_NOTE_REFERENCES[tag], child.get(f"{_W}id", "")), "")
                pieces.append(f" {mark}" if mark and pieces and pieces[-1][-1:].isalnum() else mark)
            elif tag == f"{_W}t":
                pieces.append(child.text or "")
            elif tag in _DOCX_CHARS and not (tag == f"{_W}br" and child.get(f"{_W}type") == "page"):
                pieces.append(_DOCX_CHARS[tag])
            elif tag != f"{_W}p":  # a paragraph nested in a text box is read where it is, once
                walk(child)

    walk(element)
    return "".join(pieces)


_NOTE_REFERENCES = {f"{_W}footnoteReference": "footnote", f"{_W}endnoteReference": "endnote"}


def _docx_notes(document: Any) -> tuple[dict[tuple[str, str], str], list[str]]:
    """A DOCX's footnotes and endnotes: the mark each reference shows ("(1)" for footnotes in the order they are
    referred to, "(i)" for endnotes, as Word numbers them by default) and each note's text after its mark."""
    marks: dict[tuple[str, str], str] = {}
    for ref in document.element.body.iter(*_NOTE_REFERENCES):
        kind, note_id = _NOTE_REFERENCES[ref.tag], ref.get(f"{_W}id", "")
        if (kind, note_id) not in marks:
            count = sum(1 for k, _ in marks if k == kind) + 1
            marks[(kind, note_id)] = f"({count if kind == 'footnote' else formatted(count, 'lowerRoman')})"
    notes: list[str] = []
    for rel in document.part.rels.values():
        kind = rel.reltype.rsplit("/", 1)[-1][:-1]  # ".../footnotes" -> "footnote"
        if rel.is_external or kind not in ("footnote", "endnote"):
            continue
        try:
            part = SafeElementTree.fromstring(rel.target_part.blob)
        except (XmlParseError, DefusedXmlException) as exc:
            warnings.warn(f"its {kind}s could not be read ({_one_line(exc)}); the text is read without them",
                          UserWarning, stacklevel=1)
            continue
        texts = {note.get(f"{_W}id", ""): " ".join(_docx_text(p, marks) for p in note.iter(f"{_W}p")).strip()
                 for note in part.iter(f"{_W}{kind}")
                 if note.get(f"{_W}type") not in ("separator", "continuationSeparator", "continuationNotice")}
        notes += [f"{mark} {texts[note_id]}" for (k, note_id), mark in marks.items()
                  if k == kind and texts.get(note_id)]
    return marks, notes


def _docx_blocks(body: Any) -> Iterator[Any]:
    """The body's paragraphs and tables in order, those inside block-level content controls (w:sdt, a template's
    fields and repeating sections) included, which python-docx's iteration skips."""
    for child in body:
        if child.tag in (f"{_W}p", f"{_W}tbl"):
            yield child
        elif child.tag == f"{_W}sdt":
            content = child.find(f"{_W}sdtContent")
            if content is not None:
                yield from _docx_blocks(content)


def _tracked_changes(body: Any) -> str | None:
    """How many tracked changes a DOCX body holds ("2 insertion(s), 1 deletion(s)"), None without any."""
    inserted = sum(1 for _ in body.iter(f"{_W}ins")) + sum(1 for _ in body.iter(f"{_W}moveTo"))
    deleted = sum(1 for _ in body.iter(f"{_W}del")) + sum(1 for _ in body.iter(f"{_W}moveFrom"))
    return f"{inserted} insertion(s), {deleted} deletion(s)" if inserted or deleted else None


def _warn_tracked(counted: str | None, where: str = "") -> None:
    """A warning that a document's tracked changes (`counted`) are read as if accepted; none when it has none."""
    if counted:
        warnings.warn(f"the document has tracked changes ({counted}): read as if every change were accepted; accept "
                      f"or reject them {where}and ingest again to read another text", UserWarning, stacklevel=2)


def parse_docx(path: Path, data: bytes) -> ParsedDocument:
    import docx.text.paragraph  # each format's reader is loaded when a file of that format comes (docx.table too)

    Table, Paragraph = docx.table.Table, docx.text.paragraph.Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise IngestError(str(path), f"not a readable DOCX file ({_one_line(exc)})",
                          "re-save it from a word processor") from exc
    _entities_as_text(document.element)
    # paragraphs and tables in the order they stand, so a table is filed under the section it is in (a retention
    # schedule under "4.2 Retention periods", not under the document's last heading); a paragraph numbered by Word
    # with the number it shows ("4.2 Retention periods", "(a) ..."), which its text lacks
    numbering = Numbering(document)
    body = document.element.body
    _warn_tracked(_tracked_changes(body), "in Word ")
    marks, notes = _docx_notes(document)
    blocks: list[tuple[Any, str, bool]] = []  # (paragraph or table, its text, numbered by Word)
    for element in _docx_blocks(body):
        if element.tag == f"{_W}tbl":
            blocks.append((Table(element, document._body), "", False))
            continue
        paragraph = Paragraph(element, document._body)
        words = _docx_text(element, marks)
        label = numbering.label(paragraph) if words.strip() else None
        blocks.append((paragraph, f"{label} {words}" if label else words, label is not None))
    builder = SectionBuilder(eu_style=eu_style("\n".join(text for _, text, _ in blocks)))
    for block, text, numbered in blocks:
        if isinstance(block, Table):
            for row in block.rows:
                builder.paragraph(" | ".join(_docx_text(cell._tc, marks).strip() for cell in row.cells))
            continue
        style = (block.style.name if block.style is not None else "") or ""
        match = re.match(r"(?:Heading|Title)\s*(\d*)", style)
        if match and text.strip():
            builder.heading(text, int(match.group(1) or 1))
        elif numbered or re.match(r"toc\s*\d", style, re.IGNORECASE):
            # a table of contents' entry ("2 Terms and Definitions\t7", style "toc 1") names a heading, is none
            builder.paragraph(text)  # an item of a Word list, never a heading however short ("1. Log the disposal")
        else:
            feed_lines(builder, text)
    builder.notes(notes)
    title = document.core_properties.title or None
    return builder.build("docx", title)


def parse_odt(path: Path, data: bytes) -> ParsedDocument:
    """OpenDocument text (engine.ingest.odt): headings with their outline numbers, list items with their labels,
    tables a row a line, notes under a Notes heading, tracked changes read as if accepted (with a warning)."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        parts = {name: SafeElementTree.fromstring(package.read(name)) if name in package.namelist() else None
                 for name in ("content.xml", "styles.xml", "meta.xml")}
    except (zipfile.BadZipFile, KeyError, ValueError, XmlParseError, DefusedXmlException) as exc:
        raise IngestError(str(path), f"not a readable OpenDocument text ({_one_line(exc)})",
                          "re-save it from LibreOffice or another word processor") from exc
    if parts["content.xml"] is None:
        raise IngestError(str(path), "not an OpenDocument text: it has no content.xml",
                          "re-save it from LibreOffice or another word processor")
    reading = odt.read(parts["content.xml"], parts["styles.xml"])
    _warn_tracked(f"{reading.tracked} change(s)" if reading.tracked else None)
    builder = SectionBuilder(eu_style=eu_style("\n".join(text for _, _, text in reading.items)))
    for kind, level, text in reading.items:
        if kind == "heading":
            builder.heading(text, level)
        elif kind == "paragraph":
            feed_lines(builder, text)
        else:  # a list's item, never a heading however short; a table's row
            builder.paragraph(text)
    builder.notes(reading.notes)
    return builder.build("odt", odt.title(parts["meta.xml"]))


def _sheets_document(path: Path, rendered: list[sheets.Sheet], fmt: str, title: str | None) -> ParsedDocument:
    markdown = "\n\n".join(sheet.markdown for sheet in rendered if sheet.markdown)
    if not markdown.strip():
        raise IngestError(str(path), "every sheet is empty", "nothing to ingest")
    parsed = parse_md(path, markdown.encode("utf-8"))
    # each block names the columns whose "Header: value" lines describe a row (engine.ingest.sheets.Sheet)
    fields = sorted(set().union(*(sheet.fields for sheet in rendered)))
    blocks = [b.model_copy(update={"metadata": {**b.metadata, "fields": fields}}) for b in parsed.blocks] if fields \
        else parsed.blocks
    return parsed.model_copy(update={"format": fmt, "title": title or parsed.title, "blocks": blocks})


def parse_xlsx(path: Path, data: bytes) -> ParsedDocument:
    """A workbook (engine.ingest.sheets): each visible sheet a section, a control matrix's rows a section each,
    cited by their ids; formulas read as the values they last showed. Hidden sheets are not read (a warning names
    them)."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise IngestError(str(path), f"not a readable XLSX workbook ({_one_line(exc)})",
                          "open it in a spreadsheet program and save it again as .xlsx") from exc
    hidden = [ws.title for ws in book.worksheets if ws.sheet_state != "visible"]
    if hidden:
        warnings.warn(f"hidden sheet(s) not read: {', '.join(hidden)}", UserWarning, stacklevel=1)
    rendered = [sheets.render(ws.title, list(ws.iter_rows(values_only=True)))
                for ws in book.worksheets if ws.sheet_state == "visible"]
    title = book.properties.title if book.properties is not None else None
    book.close()
    return _sheets_document(path, rendered, "xlsx", title)


def parse_csv(path: Path, data: bytes) -> ParsedDocument:
    """A CSV (or semicolon- or tab-separated) file read as one sheet (engine.ingest.sheets)."""
    text = _check_text(path, data)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:20000], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    return _sheets_document(path, [sheets.render(path.stem, rows)], "csv", None)


def unwrap_pdf(text: str, sized: Mapping[str, int] | None = None) -> str:
    """Join hard-wrapped lines of extracted PDF text back into sentences: a word hyphenated at a line's end is one
    word where it is one in English ("infor-" / "mation"), and keeps its hyphen where its two halves are words and
    together they are none ("re-" / "performed", "off-" / "premises"), or where it follows an acronym ("ICT-" /
    "related")."""
    words = dictionary_words()

    def dehyphenated(m: re.Match[str]) -> str:
        head, tail = m.group(1), m.group(2)
        kept = not is_word((head + tail).lower(), words) and (all(
            _a_word(half, words) for half in (head.lower(), tail)) or len(head) > 1 and head.isupper())
        return f"{head}-{tail}" if kept else head + tail

    text = re.sub(r"(\w+)-\n([a-z]+)", dehyphenated, text)
    text = re.sub(r"(?<![.!?:;\n])\n(?=[a-z(])", " ", text)
    # a line that breaks before a figure inside a sentence ("at least once every\n10 months"), not before a
    # paragraph's number ("1. A provider ...") nor a clause's heading, set in its own type ("Wi-Fi Protected Setup" /
    # "4 Implementation of the standard")

    def joined(m: re.Match[str]) -> str:
        end = text.find("\n", m.end())
        return "\n" if sized and normalize_ws(text[m.end():end if end >= 0 else None]) in sized else " "

    return re.sub(r"(?<=[a-z,])\n(?=\d+\s)", joined, text)


# A page number on a line of its own: "5", "- 5 -", "Page 5", "Page 5 of 12", "5/12".
_PAGE_NUMBER = re.compile(r"^\s*(?:page\s+)?[-\u2013\u2014]?\s*\d{1,4}\s*(?:(?:of|/)\s*\d{1,4})?\s*"
                          r"[-\u2013\u2014]?\s*$", re.IGNORECASE)
_EDGE_LINES = 3  # lines at the top and at the foot of a page where running heads and feet are looked for


def without_furniture(pages: list[str]) -> list[str]:
    """Each page's text less its running heads and feet: a line among its first or last `_EDGE_LINES` that recurs
    there, its numbers aside, on three in five pages and two at least ("L 333/5 EN Official Journal of the
    European Union 27.12.2022", "45 CFR Ch. I (10-1-23 Edition)", "Confidential - Acme Ltd"), or a page number
    alone. pypdf sets them inside the text where the page breaks, often inside a sentence that a quote would then
    carry them in. Never the text's own: not a line that ends as a sentence or a clause does (a provision that
    repeats "... measures taken to address each incident." keeps every one), nor one that opens a paragraph or a
    point, nor a provision's heading ("Article 5") or the title on the line after it. Pure."""
    if len(pages) < 2:
        return pages

    def key(line: str) -> str:
        return re.sub(r"\d+", "#", normalize_ws(line)).lower()

    def edges(lines: list[str]) -> set[int]:
        filled = [i for i, line in enumerate(lines) if line.strip()]
        return set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:])

    split = [page.split("\n") for page in pages]
    seen = Counter(k for lines in split for k in {key(lines[i]) for i in edges(lines)})
    running = {k for k, n in seen.items() if n >= max(2, -(-3 * len(pages) // 5))}

    def provision(line: str) -> bool:
        heading = parse_heading(line.strip())
        return heading is not None and bool(heading.kind)

    def furniture(lines: list[str], i: int) -> bool:
        if _PAGE_NUMBER.match(lines[i]):
            return True
        line, before = lines[i].strip(), next((x for x in reversed(lines[:i]) if x.strip()), "")
        # the text's own: a line that ends a sentence or a clause, opens a paragraph or a point ("2. The provider
        # shall review ... every"), a provision's heading and the title on the line after it
        own = (line.endswith((".", ";", ":", ",")) or enumerator(line) is not None or provision(line)
               or provision(before))
        return key(line) in running and not own

    return ["\n".join(line for i, line in enumerate(lines) if not (i in edge and furniture(lines, i)))
            for lines in split for edge in [edges(lines)]]


def _join_pages(pages: list[str]) -> str:
    """The pages' text in one: a page break ends a paragraph where the page ends a sentence or a heading, and is a
    line break (which `unwrap_pdf` joins where the next page opens in lower case) where a sentence runs on. Pure."""
    text = ""
    for page in (p.strip("\n") for p in pages):
        if text and page:
            text += "\n" if re.search(r"[,\w]$", text) and re.match(r"[a-z(]", page) else "\n\n"
        text += page
    return text


# A footnote's mark at the start of its line: "(1)", "1", "1)", "*", a dagger, superscript digits (not "1.", a list's)
_NOTE_MARK = re.compile(r"^(?:\(\d{1,3}\)|\d{1,3}\)?(?=\s)|[*\u2020\u2021]|[\u00b9\u00b2\u00b3\u2070-\u2079]+)")
_SMALLER = 0.85  # a footnote's type is at most this share of the body's


def _fragments(page: Any) -> list[tuple[str, float, float]]:
    """A page's text as pypdf extracts it, in the pieces it extracts it in: (text, height on the page, type size),
    less the line breaks pypdf sets inside a line (`joined_on_the_line`). The pieces joined are the page's text."""
    pieces: list[tuple[str, float, float, float]] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        # the text matrix in the page's space (tm x cm): its (e, f) where the piece starts (f: the baseline's
        # height), its (c, d) the type's scale
        c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
        pieces.append((text, tm[4] * cm[0] + tm[5] * cm[2] + cm[4], tm[4] * cm[1] + tm[5] * cm[3] + cm[5],
                       abs(size) * (c * c + d * d) ** 0.5))

    page.extract_text(visitor_text=visit)
    return joined_on_the_line(pieces)


_BASELINE = 0.2  # two pieces whose baselines differ by less than this share of the type size are on one line


def joined_on_the_line(pieces: list[tuple[str, float, float, float]]) -> list[tuple[str, float, float]]:
    """(text, height, size) of each (text, x, height, size) piece, a line break that pypdf sets at a piece's end
    taken out where the next piece goes on along the same baseline, to its right: pypdf breaks the line where a
    PDF places a word's letters apart ("ris" / "ks, and liability risks", "7. T" / "ransition climate risks", from
    APRA's CPG 229 as Acrobat wrote it), and a break read as a space would store "ris ks". Two runs of letters join
    as one word ("c" + "an", "pru" + "dent", "in" + "direct") unless the second is a word and the first is one too
    while the two together are not ("and" + "regulatory"), or the first follows a figure or a sign ("3˚C" + "or");
    a space either side, or a mark, joins as it is. Pure but for reading pyspellchecker's word list the first time
    two letters meet."""
    out: list[tuple[str, float, float]] = []
    for i, (text, x, y, size) in enumerate(pieces):
        after = next((p for p in pieces[i + 1:] if p[0]), None)
        if (text.endswith("\n") and after is not None and after[0].strip() and after[1] > x
                and abs(after[2] - y) < _BASELINE * max(size, after[3], 1.0)):
            text = text[:-1]
            left = re.search(r"[^\W\d_]+$", text)
            right = re.match(r"[^\W\d_]+", after[0])
            if left and right and _a_word(right.group(), words := dictionary_words()) and (
                    not _opens(text, left.start()) or _a_word(left.group(), words)
                    and not is_word((left.group() + right.group()).lower(), words, endings=False)):
                text += " "
        out.append((text, y, size))
    return out


_LETTERS = re.compile(r"[^\W\d_]+")


def spaced_apart(text: str) -> str:
    """`text` less the spaces pypdf sets inside a word where a PDF kerns its letters apart ("Sco pe 1 refers",
    "In f ulfilling their obligations", "Finan cial Disclosures"): two runs of letters one space apart, the first
    opening a word and the second in lower case ending one, are one word where together they are an English word
    and one of them alone is not; a run that could join either neighbour joins the one that is no word either ("f"
    + "ulfilling", not "In" + "f"). Two words stay two ("in direct", "per cent", "Corvid Labs", "a C array",
    "GNOME's and"). Pure but for reading pyspellchecker's word list the first time."""
    runs = list(_LETTERS.finditer(text))
    if len(runs) < 2:
        return text
    words = dictionary_words()
    word = [_a_word(r.group(), words) for r in runs]

    def ends(run: re.Match[str], after_word: bool) -> bool:
        return run.end() == len(text) or not re.match(r"[\w'\u2019(-]", text[run.end()]) and not (
            after_word and len(run.group()) == 1 and text[run.end()] in ".)")  # a point's label: "and d) APRA
        # will", not a word's last letter before a bracket: "(as appropriat e) to meet"

    joins = [b.start() == a.end() + 1 and text[a.end()] == " " and not (word[i] and word[i + 1])
             and _opens(text, a.start()) and ends(b, word[i]) and b.group().islower()
             and is_word((a.group() + b.group()).lower(), words, endings=False)
             for i, (a, b) in enumerate(zip(runs, runs[1:], strict=False))]
    out, last, i = [], 0, 0
    while i < len(joins):
        if joins[i] and not (i + 1 < len(joins) and joins[i + 1] and word[i] and not word[i + 2]):
            out.append(text[last:runs[i].end()])
            last = runs[i].end() + 1
            i += 2  # the run joined joins nothing more
        else:
            i += 1
    out.append(text[last:])
    return "".join(out)


def _opens(text: str, start: int) -> bool:
    """The letters at `start` of `text` open a word: after a space or an opening bracket or quote, not after a
    figure or a sign ("3˚C", "GNOME’s", "length-value")."""
    return start == 0 or text[start - 1].isspace() or text[start - 1] in "([{\"\u201c\u2018"


def _a_word(letters: str, words: frozenset[str]) -> bool:
    """A word of its own: English, and of one letter only "a" or "I" (a dictionary lists every letter), nor two or
    three small letters without a vowel ("nd" of "a nd", "th": the dictionary lists those too)."""
    if len(letters) == 1:
        return letters.lower() in ("a", "i")
    if len(letters) <= 3 and letters.islower() and not set(letters) & set("aeiouy"):
        return False
    return is_word(letters.lower(), words)


def _type_size(size: float) -> float:
    """A type size to the half point, as sizes are compared."""
    return round(size * 2) / 2


def body_size(pages: list[list[tuple[str, float, float]]]) -> float:
    """The type size most of a PDF's characters are set in (`_fragments`' pieces per page); 0 with no text."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for text, _, size in page:
            sizes[_type_size(size)] += len(text.strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def marks_raised(pages: list[list[tuple[str, float, float]]]) -> list[list[tuple[str, float, float]]]:
    """The pages with each footnote mark set in the text as a superscript ("No 1094/2010" then a raised "4" in
    smaller type, which pypdf reads as "1094/20104") written "(4)", as the notes it refers to are marked: a piece of
    one to three digits in type at most `_SMALLER` times the body's, its baseline raised above the text it follows
    on the same line. Pure."""
    body = body_size(pages)
    out = []
    for page in pages:
        marked: list[tuple[str, float, float]] = []
        before: tuple[str, float, float] | None = None  # the last piece with text
        for text, y, size in page:
            if (before is not None and re.fullmatch(r"\d{1,3}", text) and size <= _SMALLER * body
                    and not before[0].endswith("\n") and 0 < y - before[1] < before[2]):
                text = f"({text})"
            marked.append((text, y, size))
            if text.strip():
                before = (text, y, size)
        out.append(marked)
    return out


def footnotes_apart(pages: list[list[tuple[str, float, float]]]) -> tuple[list[str], list[str]]:
    """Each page's text less its footnotes, and the footnotes ("(1) OJ C 155, 30.4.2031, p. 38."), as an Official
    Journal prints them: lines in type smaller than the body's (the size most of the document's characters are set
    in) below the page's last line of body text, the first of them opening with a mark. pypdf sets them at the
    foot of the page's text, inside an article that runs on to the next page, where their marks read as
    paragraph numbers. A line that recurs at the foot of other pages (a running foot) stays for
    `without_furniture`. Pure."""
    body = body_size(pages)

    def key(text: str) -> str:
        return re.sub(r"\d+", "#", normalize_ws(text)).lower()

    def lowest(page: list[tuple[str, float, float]]) -> set[int]:
        """The page's two lowest lines: where a running foot is."""
        heights = sorted({round(y) for t, y, _ in page if t.strip()})[:2]
        return {i for i, (t, y, _) in enumerate(page) if t.strip() and round(y) in heights}

    def where(piece: tuple[str, float, float]) -> tuple[str, int]:
        return key(piece[0]), round(piece[1])

    # a running foot recurs, its numbers aside, at the same height on three in five pages, and ends no sentence
    feet: Counter[tuple[str, int]] = Counter(k for page in pages for k in {where(page[i]) for i in lowest(page)})
    texts: list[str] = []
    notes: list[str] = []
    for page in pages:
        floor = min((y for t, y, s in page if t.strip() and s >= 0.95 * body), default=None)
        foot = {i for i in lowest(page) if _PAGE_NUMBER.match(page[i][0]) or (
            feet[where(page[i])] >= max(2, -(-3 * len(pages) // 5)) and not _NOTE_MARK.match(page[i][0].strip())
            and not page[i][0].rstrip().endswith((".", ";", ":", ",")))}
        zone = [i for i, (t, y, s) in enumerate(page) if floor is not None and t.strip() and s < _SMALLER * body
                and y < floor - 1 and i not in foot]
        if not zone or not _NOTE_MARK.match(page[zone[0]][0].strip()):
            texts.append("".join(t for t, _, _ in page))
            continue
        kept, gap = "", False
        for i, (text, _, _) in enumerate(page):
            if i in zone:
                gap = True
                continue
            kept += ("\n" if gap and kept and not kept.endswith("\n") else "") + text
            gap = False
        texts.append(kept)
        for line in "".join(page[i][0] if page[i][0].endswith("\n") else page[i][0] + "\n" for i in zone).split("\n"):
            if line.strip():
                if _NOTE_MARK.match(line.strip()) or not notes:
                    notes.append(normalize_ws(line))
                else:
                    notes[-1] += " " + normalize_ws(line)
    return texts, notes


_HEADING_TYPE = 1.15  # a line set in type at least this much larger than the body's is a heading (PDF)
_CAPTION = re.compile(r"(?:figure|fig\.|table|chart|diagram|box|exhibit)\s+\d", re.IGNORECASE)


def headings_by_size(pages: list[list[tuple[str, float, float]]]) -> dict[str, int]:
    """A PDF's headings as its type sets them apart, each line (and each run of lines in one size, read as one) ->
    its level, the largest type first: APRA's guides head their paragraphs with words alone ("Governance" in 24
    points, "Risk identification" in 15, over a body in 11), which no numbering or wording tells from text. A run
    of at most three lines in one type `_HEADING_TYPE` times the body's (the size most of the characters are set
    in) or larger, of at most 15 words together; not a caption ("Figure 2. Climate change financial risks") nor a
    sentence. Pure."""
    body = body_size(pages)
    if not body:
        return {}
    lines: list[list[tuple[str, float]]] = []  # per page, (line, the type size most of its characters are in)
    for page in pages:
        mine: list[tuple[str, Counter[float]]] = [("", Counter())]
        for text, _, size in page:
            for i, segment in enumerate(text.split("\n")):
                if i:
                    mine.append(("", Counter()))
                mine[-1] = (mine[-1][0] + segment, mine[-1][1])
                mine[-1][1][_type_size(size)] += len(segment.strip())
        lines.append([(t, weights.most_common(1)[0][0]) for t, weights in mine if t.strip()])

    found: list[tuple[str, float]] = []
    for page_lines in lines:
        runs: list[tuple[list[str], float]] = []  # consecutive lines in one size larger than the body's
        for line, size in page_lines:
            if size < _HEADING_TYPE * body:
                runs.append(([], size))
                continue
            line = normalize_ws(spaced_apart(line))  # as the text will read it; the body's lines need not be
            if runs and runs[-1][1] == size and runs[-1][0]:
                runs[-1][0].append(line)
            else:
                runs.append(([line], size))
        for run, size in runs:
            whole = " ".join(run)
            if (run and len(run) <= 3 and len(whole.split()) <= 15 and re.search(r"[^\W\d_]", whole)
                    and not _CAPTION.match(whole) and not whole.endswith((".", ";", ","))):
                found.extend((line, size) for line in dict.fromkeys([*run, whole]))
    levels = {size: rank for rank, size in enumerate(sorted({z for _, z in found}, reverse=True), 1)}
    return {line: levels[size] for line, size in found}


def parse_pdf(path: Path, data: bytes) -> ParsedDocument:
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise IngestError(str(path), "the PDF is encrypted",
                              "decrypt it first, e.g. 'qpdf --decrypt in.pdf out.pdf'")
        fragments = marks_raised([_fragments(page) for page in reader.pages])
        pages, notes = footnotes_apart(fragments)
        info = reader.metadata
    except IngestError:
        raise
    except (pypdf.errors.PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise IngestError(str(path), f"corrupt or unreadable PDF ({type(exc).__name__}: {_one_line(exc)})",
                          "check the file opens in a PDF viewer, or export it again") from exc
    sized = headings_by_size(fragments)
    text = spaced_apart(unwrap_pdf(_join_pages(without_furniture([normalize(p) for p in pages])), sized))
    if not text.strip():
        raise IngestError(str(path), "the PDF has no extractable text (scanned images?)", "OCR it first")
    builder = SectionBuilder(eu_style=eu_style(text), sized=sized)
    feed_lines(builder, text)
    builder.notes([spaced_apart(note) for note in notes])
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
    """An OSCAL catalog or resolved profile in JSON or YAML (engine.ingest.oscal); XML is read as XML is
    (`parse_xml`)."""
    if data.lstrip()[:1] == b"<":
        return parse_xml(path, data)
    try:
        loaded = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise IngestError(str(path), f"invalid YAML or JSON ({_one_line(exc)})", _JSON_SHAPES) from exc
    return _oscal_document(path, loaded)


_XML_KINDS = ("read are legislation in eCFR, Federal Register, Akoma Ntoso (LegalDocML), USLM, legislation.gov.uk "
              "(CLML), Justice Canada or EUR-Lex (Formex) XML, DITA topics, and OSCAL catalogs; save another "
              "document as text, HTML or PDF")


def parse_xml(path: Path, data: bytes) -> ParsedDocument:
    """Legislation as its publisher's XML (engine.ingest.legalxml: eCFR, Federal Register, Akoma Ntoso, USLM, CLML,
    Justice Canada, Formex, DITA), read as the Markdown it renders to, or an OSCAL catalog in XML (engine.ingest.oscal);
    parsed without DTDs' entities or external references (defusedxml)."""
    try:
        root = SafeElementTree.fromstring(data)
    except DefusedXmlException as exc:
        raise IngestError(str(path), f"the XML declares entities or external references ({type(exc).__name__}), "
                          "which are not read", "remove the DOCTYPE's declarations, or export the file again") from exc
    except XmlParseError as exc:
        raise IngestError(str(path), f"invalid XML ({_one_line(exc)})",
                          "check that the file is whole (a download cut short?) and is XML") from exc
    schema = legalxml.kind(root)
    if schema == "oscal":
        return _oscal_document(path, oscal.from_xml(root))
    if schema is None:
        raise IngestError(str(path), f"XML of a kind not read here (its root element is <{legalxml.local(root.tag)}>)",
                          _XML_KINDS)
    markdown, title = legalxml.to_markdown(root, schema)
    parsed = parse_md(path, markdown.encode("utf-8"))
    return parsed.model_copy(update={"format": "xml", "title": title or parsed.title,
                                     "metadata": {**parsed.metadata, "xml": schema}})


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
    headings: dict[str, str] = {}
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


def _as_markdown(path: Path, rendered: tuple[str, str | None, list[str]], fmt: str) -> ParsedDocument:
    """A markup format read as the Markdown it renders to (`rendered`: the Markdown, its title, notes on what was
    not read, each a warning of the parse)."""
    markdown, title, notes = rendered
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    parsed = parse_md(path, markdown.encode("utf-8"))
    return parsed.model_copy(update={"format": fmt, "title": title or parsed.title})


def parse_rst(path: Path, data: bytes) -> ParsedDocument:
    """reStructuredText (engine.ingest.rst), read as the Markdown it renders to; no file it includes is read."""
    return _as_markdown(path, rst.to_markdown(_check_text(path, data)), "rst")


def parse_adoc(path: Path, data: bytes) -> ParsedDocument:
    """AsciiDoc (engine.ingest.asciidoc), read as the Markdown it renders to; no file it includes is read."""
    return _as_markdown(path, asciidoc.to_markdown(_check_text(path, data)), "adoc")


PARSERS = {"pdf": parse_pdf, "docx": parse_docx, "odt": parse_odt, "xlsx": parse_xlsx, "csv": parse_csv,
           "html": parse_html, "md": parse_md, "rst": parse_rst, "adoc": parse_adoc, "txt": parse_txt, "xml": parse_xml,
           "obliqa": parse_obliqa, "oscal": parse_oscal}


_HINTS = {"pdf": "check the file opens in a PDF viewer, or export it again",
          "docx": "re-save it from a word processor", "odt": "re-save it from LibreOffice or another word processor",
          "xlsx": "open it in a spreadsheet program and save it again as .xlsx",
          "xml": _XML_KINDS, "obliqa": _JSON_SHAPES, "oscal": _JSON_SHAPES}
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
    return _opening_under_title(parsed).model_copy(update={"warnings": messages})


def _opening_under_title(parsed: ParsedDocument) -> ParsedDocument:
    """The text a titled document opens with before its first heading (a page's introduction, a one-section
    page's whole text, a policy's "Last reviewed ..." lead) is filed under the document's own title, as a reader
    cites it ("Cookies", not no section at all). A document that states no title keeps that text under no
    section; so does a preamble or recital (it has its own citation). Pure."""
    title = normalize_ws(parsed.title or "")
    if not title:
        return parsed
    blocks = [b.model_copy(update={"section_path": title, "section_heading": title})
              if not b.section_path and not b.section_number and not b.metadata.get("citation") else b
              for b in parsed.blocks]
    return parsed.model_copy(update={"blocks": blocks})
