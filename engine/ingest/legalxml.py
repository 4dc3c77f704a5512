"""Legislation published as XML, read as a document. Pure: no I/O (the caller parses the bytes).

Seven schemas that publishers of legislation use, each rendered to Markdown and read like any Markdown
document (as OSCAL catalogs are, `engine.ingest.oscal`), so that a section is cited as the plain text of the
same act would be ("§ 164.308(a)", "Art. 5(1)", "Recital 12"):

* **eCFR** (the US Code of Federal Regulations as ecfr.gov and govinfo serve it): `DIV1`..`DIV9` with a `TYPE`
  and a `HEAD` ("§ 164.308 Administrative safeguards."), paragraphs `P` with their labels in the text
  ("(a)(1)(i) ..."), notes, examples, extracts and `GPOTABLE` tables; amendment citations (`CITA`), authority and
  source notes and amendment links are left out.
* **Akoma Ntoso** (OASIS LegalDocML: EU acts, UK, African, Latin American and other parliaments): an act's
  preamble (citations, "Whereas:", recitals "(1) ...", the enacting formula) before its body; chapters, sections
  and articles are headings ("Article 5 Principles relating to processing"), paragraphs and points are numbered
  paragraphs ("2. Member States shall ensure that:", "(a) ..."), annexes after the body; authorial notes are
  gathered under a "Notes" heading at the end, not read into the sentence they mark.
* **USLM** (the US Code and public laws from the Office of the Law Revision Counsel and govinfo): the same
  reading as Akoma Ntoso, whose vocabulary it shares (section, subsection, paragraph, chapeau, continuation);
  source credits and notes are left out.
* **CLML** (legislation.gov.uk): `Part`, `Chapter`, `Pblock` and `P1group` titles are headings, `P1`..`P6`
  numbered paragraphs ("1", "(1)", "(a)", "(i)"), commentaries left out.
* **Justice Canada** (Canada's consolidated Acts and regulations, laws-lois-xml): `Heading`s and `Section`s cited
  "Section 10.1" with the marginal note as title, subsections and paragraphs numbered, a schedule's bold clause
  numbers as headings ("4.7.3"), historical notes and footnotes left out, amendments not in force under their own
  heading.
* **Formex 4** (what EUR-Lex serves as an act's XML: `ACT`, `CONS.ACT`, an `ANNEX` on its own): the preamble's
  citations and recitals (`CONSID`), `DIVISION` and `ARTICLE` titles as headings, `PARAG` and list items as
  numbered paragraphs, footnotes (`NOTE`) under "Notes", quotation marks (`QUOT.START`) as marks.

* **DITA** (OASIS; the Federal Acquisition Regulation as GSA publishes it, one topic a section): a topic's title
  is a heading ("33.103 Protests to the agency."), paragraphs and list items with their labels ("(a) ...")
  paragraphs, notes after their type ("Note: ..."), definitions after their term; an empty cross-reference stands
  for its target's number; prologs, index terms and editors' comments and processing instructions are left out.

Tables are Markdown tables (a header row when the source marks one), one row a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engine.ingest.sections import markdown_table
from engine.text import normalize_ws

_OSCAL_NS = "http://csrc.nist.gov/ns/oscal"
# USLM as the Law Revision Counsel publishes it (the US Code) and as GPO does (USLM 2: public laws, statute
# compilations, bills on govinfo)
_USLM_NS = ("http://xml.house.gov/schemas/uslm/", "http://schemas.gpo.gov/xml/uslm")
_CLML_NS = "http://www.legislation.gov.uk/namespaces/legislation"
_ECFR_DIV = re.compile(r"DIV\d$")


def local(tag: Any) -> str:
    """An element's name without its namespace ('{ns}article' -> 'article'); '' for comments and the like."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _namespace(tag: Any) -> str:
    return tag[1:].split("}", 1)[0] if isinstance(tag, str) and tag.startswith("{") else ""


def kind(root: Any) -> str | None:
    """Which schema a document's root element belongs to: 'ecfr', 'fedreg', 'akn', 'uslm', 'clml', 'lims', 'formex',
    'dita', 'oscal', or None."""
    name, namespace = local(root.tag), _namespace(root.tag)
    if namespace.startswith(_OSCAL_NS) or (not namespace and name in ("catalog", "profile")):
        return "oscal"
    if name == "akomaNtoso":
        return "akn"
    if name in _DITA_ROOTS and (name == "dita" or str(root.get("class") or "").startswith("- topic/")
                                or _first(root, "title") is not None):
        return "dita"
    if namespace.startswith(_USLM_NS) or name in ("uscDoc", "lawDoc"):
        return "uslm"
    if namespace == _CLML_NS or name == "Legislation":
        return "clml"
    if name in ("ACT", "CONS.ACT", "ANNEX", "CONS.ANNEX") or (name == "CONS.DOC"):
        return "formex"
    if name in ("Statute", "Regulation") and _first(root, "Identification") is not None:
        return "lims"
    if name in _FEDREG_ROOTS:
        return "fedreg"
    if _ECFR_DIV.match(name) or name in ("ECFR", "CFRDOC", "CFRGRANULE", "DLPSTEXTCLASS") or any(
            _ECFR_DIV.match(local(el.tag)) for el in root.iter()):
        return "ecfr"
    return None


def _clean(text: str) -> str:
    """Whitespace made single spaces, none before a closing mark or after an opening bracket or quotation mark
    (inline markup set apart: "the <ref>data</ref> , which", Formex's quotation marks around "safety")."""
    text = normalize_ws(text)
    return re.sub(r"([(\[\u2018\u201c])\s+", r"\1", re.sub(r"\s+([,.;:!?)\]\u2019\u201d])", r"\1", text))


def _akn_mark(note: Any, count: int) -> str:
    return str(note.get("marker") or count)


def _text(el: Any, skip: frozenset[str] = frozenset(), notes: list[str] | None = None, *,
          note: str = "authorialNote", mark: Callable[[Any, int], str] = _akn_mark,
          literal: dict[str, str] | None = None) -> str:
    """All the text under `el`, inline markup included; elements named in `skip` are left out (their tails
    kept), those in `literal` stand for their text (a line break, a quotation mark). A note (element `note`, an
    Akoma Ntoso authorial note by default) is replaced by its mark and its text kept in `notes`."""
    literal = {"eol": " ", "br": " "} if literal is None else literal
    pieces: list[str] = []

    def add(text: str, glued: bool) -> None:
        if glued and pieces:
            pieces[-1] += text
        else:
            pieces.append(text)

    def walk(node: Any, inline: bool = False) -> None:
        if node.text:
            add(node.text, inline)
        for child in node:
            name = local(child.tag)
            glued = name in _INLINE
            if name == note and notes is not None:
                label = mark(child, len(notes) + 1)
                notes.append(f"({label}) {_clean(_text(child))}")
                pieces.append(f"({label})")
            elif name in literal:
                pieces.append(literal[name])
            elif name and name not in skip:
                walk(child, glued)
            if child.tail:
                add(child.tail, glued)

    walk(el)
    return _clean(" ".join(pieces))


# Inline markup of Akoma Ntoso and USLM that a word runs through with no space of its own: a defined term in its
# quotation marks ('"<term>dump</term>" means ...' is '"dump" means', not '" dump " means'), a reference, emphasis
_INLINE = frozenset({"term", "def", "ref", "mref", "rref", "i", "b", "u", "span", "inline", "abbr", "concept",
                     "shortTitle", "em", "strong"})


def _first(el: Any, *names: str) -> Any | None:
    return next((child for child in el if local(child.tag) in names), None)


def _html_table(el: Any, text: Callable[[Any], str]) -> str:
    """An XHTML-style table (Akoma Ntoso, USLM): rows of th/td; the first row is the header when it is all th."""
    rows = [row for row in el.iter() if local(row.tag) == "tr"]
    cells = _spanned([[(text(c).replace("|", "/"), _span(c, "rowspan"), _span(c, "colspan")) for c in row
                       if local(c.tag) in ("th", "td")] for row in rows])
    cells = [r for r in cells if any(r)]
    if not cells:
        return ""
    header = cells[0] if rows and all(local(c.tag) == "th" for c in rows[0] if local(c.tag) in ("th", "td")) else None
    return markdown_table(cells[1:] if header else cells, header)


def _span(cell: Any, attribute: str) -> int:
    value = str(cell.get(attribute) or "1")
    return max(1, min(int(value), 50)) if value.isdigit() else 1


def _spanned(rows: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """Rows of (text, rowspan, colspan) as a grid: a cell that spans rows stands in each of them, in its column, as a
    reader of the printed table reads it ("Section 15(1)" beside each of its five littering fines), and one that
    spans columns fills the first and leaves the rest empty. Pure."""
    grid: list[list[str]] = []
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill)
    for row in rows:
        out: list[str] = []
        cells = iter(row)
        column = 0
        while True:
            if column in carried:
                value, left = carried.pop(column)
                out.append(value)
                if left > 1:
                    carried[column] = (value, left - 1)
                column += 1
                continue
            cell = next(cells, None)
            if cell is None:
                break
            value, down, across = cell
            for offset in range(across):
                out.append(value if offset == 0 else "")
                if down > 1:
                    carried[column + offset] = (value if offset == 0 else "", down - 1)
            column += across
        grid.append(out)
    return grid


def _joined(label: str, text: str) -> str:
    """A number (and run-in heading) before its text: "(a) In general.\u2014It is ...", "2. Member States ..."."""
    return f"{label}{text}" if label.endswith("\u2014") else f"{label} {text}".strip()


def _heading(depth: int, text: str) -> str:
    return f"{'#' * min(depth, 6)} {text}"


# --- eCFR ---------------------------------------------------------------------------------------------------

_ECFR_DROP = frozenset({"CITA", "AUTH", "SOURCE", "SECAUTH", "XREF", "EDNOTE", "HEADER", "FTREF", "PRTPAGE",
                        "EFFDNOT", "CROSSREF"})
_ECFR_TEXT = frozenset({"P", "FP", "PSPACE", "HD1", "HD2", "HD3", "HD4", "HED", "SIG", "FTNT"})


def _ecfr(el: Any, depth: int, out: list[str]) -> None:
    name = local(el.tag)
    if name in _ECFR_DROP:
        return
    if _ECFR_DIV.match(name) and (head := _first(el, "HEAD")) is not None:
        out.append(_heading(depth, _text(head, _ECFR_DROP)))
        for child in el:
            if child is not head:
                _ecfr(child, depth + 1, out)
        return
    if name == "GPOTABLE":
        _gpo_table(el, out)
        return
    if name in _ECFR_TEXT:
        if text := _text(el, _ECFR_DROP):
            out.append(text)
        return
    if not any(local(c.tag) for c in el):  # an element of text alone ("<NOTE>...</NOTE>" without paragraphs)
        if text := _text(el, _ECFR_DROP):
            out.append(text)
        return
    if el.text and el.text.strip():
        out.append(_clean(el.text))
    for child in el:
        _ecfr(child, depth, out)


def _gpo_table(el: Any, out: list[str]) -> None:
    """A GPO table (eCFR, Federal Register): its title, then its rows under its column headings."""
    header = [_text(c) for c in el.iter() if local(c.tag) == "CHED"]
    rows = [[_text(c).replace("|", "/") for c in row if local(c.tag) == "ENT"]
            for row in el.iter() if local(row.tag) == "ROW"]
    title = _first(el, "TTITLE")
    if title is not None and _text(title):
        out.append(_text(title))
    if rows:
        out.append(markdown_table(rows, header or None))


def _ecfr_title(root: Any) -> str | None:
    head = next((el for el in root.iter() if local(el.tag) == "HEAD"), None)
    return _text(head, _ECFR_DROP) if head is not None else None


# --- Federal Register -------------------------------------------------------------------------------------------

# A rule or proposed rule as the Federal Register publishes it in GPO's XML (a day's issue, a part of it, one
# document): its preamble (summary, dates, the agency's discussion of the comments, the regulatory analyses) explains
# the rule and binds no one; its regulatory text (REGTEXT: the CFR part, subparts and sections it adds or revises)
# is the rule. The preamble is read under a `Preamble` heading (agents.quotes reads such text as non-binding), the
# amendatory instructions ("3. Delayed indefinitely, amend § 64.2011 by revising ...") with it, the regulatory
# text as the eCFR prints it: PART, Subpart, "§ 64.2011 Notification of security breaches." and its paragraphs.
_FEDREG_ROOTS = frozenset({"FEDREG", "NEWPART", "RULES", "RULE", "PRORULES", "PRORULE"})
_FEDREG_DOCS = ("RULE", "PRORULE")
_FEDREG_DROP = frozenset({"PRTPAGE", "STARS", "FRDOC", "BILCOD", "SIG", "AUTH", "FTREF", "CNTNTS", "UNITNAME",
                          "GPH", "GID"})
_FEDREG_HD = {"HED": 1, "HD1": 2, "HD2": 3, "HD3": 4, "HD4": 5, "HD5": 5, "HD6": 5}


def _fedreg_hd(el: Any) -> str:
    """A heading's words, without the colon the preamble's captions close with ("SUMMARY:")."""
    return _text(el, _FEDREG_DROP).rstrip(" :")


class _FedReg:
    """One Federal Register document rendered: `pre` its preamble, `amended` its amendatory instructions, `reg` its
    regulatory text, each as Markdown lines; `notes` its footnotes."""

    def __init__(self, depth: int) -> None:
        self.depth = depth  # the level of the document's own headings ("## Preamble")
        self.pre: list[str] = []
        self.amended: list[str] = []
        self.reg: list[str] = []
        self.notes: list[str] = []

    def text(self, el: Any) -> str:
        return _text(el, _FEDREG_DROP | {"FTNT"})

    def preamble(self, el: Any) -> None:
        """The preamble's elements in order: captions with their paragraphs (AGY, ACT, SUM, DATES ...), the
        supplementary information's HD1-HD3 headings and paragraphs, tables, footnotes; a PART or REGTEXT inside it
        is regulatory text."""
        for child in el:
            name = local(child.tag)
            if not name or name in _FEDREG_DROP:
                continue
            if name in ("PART", "REGTEXT", "SUBPART"):
                self.regulatory(child, self.depth)
            elif name == "HD":  # a caption inside the supplementary information (its list of subjects) is an HD1's
                level = _FEDREG_HD.get(child.get("SOURCE") or "", 5)
                level = max(level, 2) if local(el.tag) == "LSTSUB" else level
                self.pre.append(_heading(self.depth + level, _fedreg_hd(child)))
            elif name == "GPOTABLE":
                _gpo_table(child, self.pre)
            elif name == "FTNT":
                self.notes.append(self.text(child))
            elif name in ("P", "FP", "EXTRACT", "NOTE") or not any(local(c.tag) for c in child):
                if text := self.text(child):
                    self.pre.append(text)
            else:
                self.preamble(child)

    def regulatory(self, el: Any, depth: int) -> None:
        """Regulatory text: PART and SUBPART headings, each SECTION's number and subject as its heading and its
        paragraphs; amendatory instructions go with the preamble."""
        name = local(el.tag)
        if not name or name in _FEDREG_DROP:
            return
        if name in ("PART", "SUBPART"):
            head = _first(el, "HD")
            if head is not None:
                self.reg.append(_heading(depth + (0 if name == "PART" else 1), _fedreg_hd(head)))
            for child in el:
                if child is not head:
                    self.regulatory(child, depth)
        elif name in ("REGTEXT", "EXTRACT"):
            for child in el:
                self.regulatory(child, depth)
        elif name == "AMDPAR":
            self.amended.append(self.text(el))
        elif name == "HD":
            self.reg.append(_heading(depth + 1, _fedreg_hd(el)))
        elif name == "SECTION":
            number, subject = _first(el, "SECTNO"), _first(el, "SUBJECT")
            self.reg.append(_heading(depth + 2, " ".join(self.text(x) for x in (number, subject) if x is not None)))
            for part in el:
                if local(part.tag) not in ("SECTNO", "SUBJECT"):
                    self.body(part)
        else:
            self.body(el)

    def body(self, el: Any) -> None:
        name = local(el.tag)
        if not name or name in _FEDREG_DROP:
            return
        if name == "GPOTABLE":
            _gpo_table(el, self.reg)
        elif name == "FTNT":
            self.notes.append(self.text(el))
        elif text := self.text(el):
            self.reg.append(text)

    def lines(self) -> list[str]:
        pre = [_heading(self.depth, "Preamble"), *self.pre]
        if self.amended:
            pre += [_heading(self.depth + 1, "Amendatory instructions"), *self.amended]
        return pre + self.reg


def _fedreg(root: Any) -> tuple[list[str], list[str], str | None]:
    """Each rule or proposed rule under `root` (itself one, or a day's issue, or a part of one): its lines, its notes
    and the title (the part's title, else the one document's subject and action: "Data Breach Reporting
    Requirements; Final rule")."""
    docs = [root] if local(root.tag) in _FEDREG_DOCS else [el for el in root.iter() if local(el.tag) in _FEDREG_DOCS]
    out: list[str] = []
    notes: list[str] = []
    for doc in docs:
        preamble = _first(doc, "PREAMB")
        subject = _first(preamble, "SUBJECT") if preamble is not None else None
        render = _FedReg(3 if len(docs) > 1 else 2)
        if len(docs) > 1:
            out.append(_heading(2, _text(subject) if subject is not None else "Rule"))
        render.preamble(doc)
        out += render.lines()
        notes += render.notes
    ptitle = next((el for el in root.iter() if local(el.tag) == "PTITLE"), None)
    title = _first(ptitle, "TITLE") if ptitle is not None else None
    if title is not None and _text(title):
        return out, notes, _text(title)
    if len(docs) == 1 and (preamble := _first(docs[0], "PREAMB")) is not None:
        subject, action = _first(preamble, "SUBJECT"), _first(preamble, "ACT")
        action_text = " ".join(_text(p) for p in action if local(p.tag) == "P") if action is not None else ""
        if subject is not None:
            return out, notes, "; ".join(x for x in (_text(subject), action_text.rstrip(".")) if x)
    return out, notes, None


# --- Akoma Ntoso and USLM -------------------------------------------------------------------------------------

# Units that a reader cites by a heading of their own: their number and heading are a heading line.
_HEADED = frozenset({"book", "tome", "part", "subpart", "title", "subtitle", "chapter", "subchapter", "division",
                     "subdivision", "section", "article", "rule", "hcontainer", "level", "schedule", "appendix",
                     "attachment", "annex", "component", "preamble"})
# Units below them: numbered paragraphs and points, each a paragraph opening with its number.
_NUMBERED = frozenset({"paragraph", "subparagraph", "subsection", "point", "indent", "alinea", "clause",
                       "subclause", "item", "subitem", "subsubitem", "proviso", "recital", "citation", "list",
                       "blockList", "listIntroduction", "definition"})
# Blocks of text.
_TEXT = frozenset({"p", "content", "intro", "wrapUp", "chapeau", "continuation", "formula", "listWrapUp", "block"})
_AKN_DROP = frozenset({"meta", "notes", "note", "sourceCredit", "noteRef", "remark", "toc", "coverPage",
                       "componentRef", "documentRef", "img", "mod", "editorialNote", "signature"})


# A unit numbered bare ("<section><num>12.</num>", "<chapter><num>IV</num>", as Laws.Africa and some parliaments
# number them) is cited with its kind: "Section 12", "Chapter IV"
_UNIT_WORDS = {name: name.capitalize() for name in ("article", "section", "chapter", "part", "subpart", "division",
                                                      "subdivision", "title", "subtitle", "book", "schedule", "annex",
                                                      "appendix", "rule")}


class _Akn:
    """One document's rendering: its lines and the notes gathered on the way."""

    def __init__(self, drop: frozenset[str]) -> None:
        self.out: list[str] = []
        self.notes: list[str] = []
        self.drop = drop

    def text(self, el: Any) -> str:
        return _text(el, self.drop | {"num", "heading", "subheading"}, self.notes)

    def label(self, el: Any) -> str:
        num, heading = _first(el, "num"), _first(el, "heading")
        number = self.text_of(num)
        title = self.text_of(heading)
        if (word := _UNIT_WORDS.get(local(el.tag))) and re.fullmatch(r"(?:\d+[A-Za-z]{0,2}|[IVXLC]+)\.?", number):
            number = f"{word} {number.rstrip('.')}"  # <num>5</num>, <num>12.</num>, <num>IV</num>: as it is cited
        if title:
            number = number.rstrip(".\u2014\u2013- ")  # "§ 552." or "Title 15—" before its heading: the number
            if title.islower():  # set in small capitals ("congressional findings and purpose", GPO's compilations)
                title = title[0].upper() + title[1:]
        return " ".join(x for x in (number, title) if x)

    def run_in(self, el: Any) -> str:
        """A paragraph's number and heading, which its text runs on from as the US Code prints it: "(a) Privacy
        obligation policy.\u2014It is the policy ..."."""
        number, title = self.text_of(_first(el, "num")), self.text_of(_first(el, "heading"))
        if title and not title.endswith((".", ":", "\u2014", "-")):
            title += ".\u2014"
        return " ".join(x for x in (number, title) if x)

    def text_of(self, el: Any) -> str:
        return _text(el, self.drop, self.notes) if el is not None else ""

    def headed(self, el: Any, depth: int) -> None:
        name = local(el.tag)
        if name == "preamble":
            self.children(el, depth, "")
            return
        label = self.label(el)
        if not label and name in ("attachment", "annex", "component", "schedule", "appendix"):
            # an annex is a document of its own, named in its preface: "ANNEX I", "Requirements ..."
            found = [next((t for t in el.iter() if local(t.tag) == tag), None) for tag in ("docNumber", "docTitle")]
            # or, where its preface names nothing, the name its metadata gives it (Akoma Ntoso 2.0's components:
            # <FRBRalias value="Schedule 1"/>)
            alias = next((str(t.get("value")) for t in el.iter() if local(t.tag) == "FRBRalias" and t.get("value")),
                         "")
            label = " ".join(self.text_of(t) for t in found if t is not None) or alias or name.capitalize()
        if label:
            self.out.append(_heading(depth, label))
            depth += 1
        self.children(el, depth, "")

    def numbered(self, el: Any, depth: int, pending: str) -> None:
        """A paragraph or point: its number opens its first text ("2. Member States shall ensure that:"); its
        heading, if it has one, runs in ("(a) In general.— ...")."""
        label = self.run_in(el) if local(el.tag) not in ("list", "blockList") else ""
        pending = " ".join(x for x in (pending, label) if x)
        if _mixed(el):  # words of its own among inline markup ("ensure that the <term>waste</term> that ..."): one text
            if text := self.text(el):
                self.out.append(_joined(pending, text))
            return
        leftover = self.children(el, depth, pending)
        if leftover:
            self.out.append(leftover)

    def children(self, el: Any, depth: int, pending: str) -> str:
        """Render `el`'s children in order; returns a label that no text has opened yet ('' when used)."""
        for child in el:
            name = local(child.tag)
            if not name or name in self.drop or name in ("num", "heading", "subheading"):
                continue
            if name == "table":
                if table := _html_table(child, self.text):
                    self.out.append(table)
            elif name == "level" and _first(child, "heading") is None:
                self.numbered(child, depth, pending)  # a numbered level without a heading is a paragraph
                pending = ""
            elif name in _HEADED:
                self.headed(child, depth)
                pending = ""
            elif name in _NUMBERED:
                self.numbered(child, depth, pending)
                pending = ""
            elif name in _TEXT and any(local(c.tag) in _TEXT | _NUMBERED | {"table"} for c in child):
                pending = self.children(child, depth, pending)  # a content block of several paragraphs
            elif name in _TEXT or not any(local(c.tag) for c in child):
                text = self.text(child)
                if text:
                    self.out.append(_joined(pending, text))
                    pending = ""
            else:
                pending = self.children(child, depth, pending)
        return pending


def _mixed(el: Any) -> bool:
    """`el` holds words of its own beside its children, none of which is a block ("<listIntroduction>ensure that the
    <term>waste</term> that they have generated ..."): its text reads as one, not child by child. Pure."""
    kids = [c for c in el if local(c.tag) not in ("num", "heading", "subheading")]
    own = (el.text or "").strip() or any((c.tail or "").strip() for c in kids)
    return bool(own) and not any(local(c.tag) in _TEXT | _NUMBERED | _HEADED | {"table"} for c in kids)


def _akn_title(root: Any) -> str | None:
    """An act's long title, else its document title or short title (Akoma Ntoso); the title its metadata gives
    (USLM's dc:title, "Title 15")."""
    meta = _first(root, "meta")
    if local(root.tag) != "akomaNtoso" and meta is not None and (found := _first(meta, "title")) is not None:
        return _text(found) or None
    document = next(iter(root), root) if local(root.tag) == "akomaNtoso" else root
    parts = [part for part in document if local(part.tag) != "meta"]  # a FRBR name in the metadata is no title
    for name in ("longTitle", "docTitle", "shortTitle", "docNumber"):
        found = next((el for part in parts for el in part.iter() if local(el.tag) == name), None)
        if found is not None and (text := _text(found, _AKN_DROP)):
            return text
    return None


def _footnotes(root: Any) -> list[str]:
    """USLM's footnotes (GPO's `<footnote>`, set where its reference stands, its mark in a `<sup>`) taken out of
    the text into notes, "(1) So in original. ..."; each reference (`<ref class="footnoteRef">1</ref>`) left as its
    mark in brackets, "Welfare, (2)", not run into the word before it."""
    parents = {child: parent for parent in root.iter() for child in parent}
    notes: list[str] = []
    for el in list(root.iter()):
        if local(el.tag) == "ref" and "footnoteRef" in (el.get("class") or "").split():
            el.text = f" ({normalize_ws(el.text or '')}) "
        elif local(el.tag) == "footnote" and el in parents:
            sup = _first(el, "sup")
            mark = normalize_ws(_text(sup)) if sup is not None else str(len(notes) + 1)
            notes.append(f"({mark}) {_text(el, frozenset({'sup'}))}")
            parent = parents[el]
            at = list(parent).index(el)
            if el.tail:  # the text after the note stays where it was
                if at:
                    parent[at - 1].tail = (parent[at - 1].tail or "") + el.tail
                else:
                    parent.text = (parent.text or "") + el.tail
            parent.remove(el)
    return notes


def _akn(root: Any, drop: frozenset[str]) -> tuple[list[str], list[str]]:
    """Akoma Ntoso: the document under the root (act, bill, doc, ...), its preface left to the title; USLM:
    the root's main part, its footnotes gathered as notes."""
    footnotes = _footnotes(root) if kind(root) == "uslm" else []
    render = _Akn(drop | {"preface"})
    render.notes.extend(footnotes)
    if local(root.tag) != "akomaNtoso":
        render.children(root, 2, "")
        return render.out, render.notes
    documents = [el for el in root if local(el.tag)]
    render.children(documents[0] if documents else root, 2, "")
    for el in documents[1:]:
        if local(el.tag) == "components":  # Akoma Ntoso 2.0 sets a document's schedules after it, as components
            render.children(el, 2, "")
    return render.out, render.notes


# --- CLML (legislation.gov.uk) ------------------------------------------------------------------------------

_CLML_HEADED = frozenset({"Part", "Chapter", "Pblock", "PsubBlock", "P1group", "Schedule", "Appendix", "Group"})
_CLML_NUMBERED = re.compile(r"P\d$")
_CLML_DROP = frozenset({"Metadata", "Commentaries", "CommentaryRef", "Citation", "Contents", "Resources",
                        "FootnoteRef", "Footnotes", "MarginNotes", "Signature"})


def _clml_words(el: Any | None) -> str:
    return _text(el, _CLML_DROP) if el is not None else ""


def _clml_unit(root: Any) -> str:
    """What a numbered provision of the body is called, as the instrument cites it: an Act's sections ("section 12"),
    Regulations' regulations, an Order's articles, Rules' rules; '' where the kind is not told (a heading keeps its
    number alone). Pure."""
    if any(local(el.tag) == "Primary" for el in root):
        return "Section"
    title = _clml_title(root) or ""
    for word, unit in (("Regulations", "Regulation"), ("Order", "Article"), ("Rules", "Rule")):
        if re.search(rf"\b{word}\b", title):
            return unit
    return ""


def _clml(el: Any, depth: int, out: list[str], pending: str = "", unit: str = "") -> str:
    """Render `el`'s children; returns a number that no text has opened yet ('' when used). `unit`: the word a
    section's number is cited with (`_clml_unit`), none inside a Schedule (whose provisions are paragraphs)."""
    for child in el:
        name = local(child.tag)
        if not name or name in _CLML_DROP or name in ("Number", "Title", "TitleBlock", "Pnumber"):
            continue
        if name in _CLML_HEADED:
            number, title = _clml_words(_first(child, "Number")), _clml_words(_first(child, "Title", "TitleBlock"))
            first = _first(child, "P1")
            if name == "P1group" and first is not None:  # a section: its number is the P1's, its heading the group's
                number = _clml_words(_first(first, "Pnumber"))
                number = f"{unit} {number}" if unit and number else number  # "Regulation 12", "Section 3"
            label = " ".join(x for x in (number, title) if x)
            if label:
                out.append(_heading(depth, label))
            _clml(child, depth + 1 if label else depth, out, unit="" if name in ("Schedule", "Appendix") else unit)
            pending = ""
        elif _CLML_NUMBERED.match(name):
            mark = _clml_words(_first(child, "Pnumber"))
            # legislation.gov.uk prints a section's number bare ("1"), heading its group, and the rest in brackets
            if name == "P1" and local(el.tag) == "P1group":
                mark = ""
            elif name != "P1" and mark and not mark.startswith("("):
                mark = f"({mark})"
            left = _clml(child, depth, out, " ".join(x for x in (pending, mark) if x), unit)
            if left:
                out.append(left)
            pending = ""
        elif name in ("Tabular", "table"):
            if table := _html_table(child, _clml_words):
                out.append(table)
        elif name in ("Text", "Para") or not any(local(c.tag) for c in child):
            if text := _clml_words(child):
                out.append(f"{pending} {text}".strip())
                pending = ""
        else:
            pending = _clml(child, depth, out, pending, "" if name in ("Schedule", "Appendix") else unit)
    return pending


def _clml_title(root: Any) -> str | None:
    prelims = next((el for el in root.iter() if local(el.tag) in ("PrimaryPrelims", "SecondaryPrelims")), None)
    return _clml_words(_first(prelims, "Title")) or None if prelims is not None else None


# --- Formex (EUR-Lex) ----------------------------------------------------------------------------------------

_FMX_DROP = frozenset({"BIB.INSTANCE", "INFO.CONSLEG", "INFO.PROD", "MANUAL.CORRECTION", "FMX.GEN", "NO.SEQ",
                       "TOC", "SIGNATURE"})
_FMX_TEXT = frozenset({"P", "TXT", "ALINEA", "VISA", "PREAMBLE.INIT", "PREAMBLE.FINAL", "GR.CONSID.INIT", "FINAL",
                       "STI", "TI"})
_FMX_NUMBERED = frozenset({"PARAG", "NP", "ITEM", "CONSID", "NP.ECR"})
_FMX_NUMBERS = frozenset({"NO.PARAG", "NO.P", "NO.GR.SEQ"})
_FMX_LITERAL = {"QUOT.START": "\u2018", "QUOT.END": "\u2019"}


def _formex_mark(note: Any, count: int) -> str:
    """A Formex footnote's number from its id ("E0012" -> "12")."""
    return str(note.get("NOTE.ID") or count).lstrip("E0") or str(count)


_FMX_TITLED = frozenset({"DIVISION", "GR.SEQ", "ANNEX", "CONS.ANNEX", "ARTICLE", "ACT", "CONS.DOC"})


class _Formex:
    """The Formex 4 an act is published in on EUR-Lex (ACT, CONS.ACT, ANNEX): DIVISION titles and ARTICLE titles are
    headings, PARAG and list items numbered paragraphs, CONSID recitals, NOTE footnotes gathered under Notes."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.notes: list[str] = []

    def text(self, el: Any) -> str:
        return _text(el, _FMX_DROP, self.notes, note="NOTE", mark=_formex_mark, literal=_FMX_LITERAL)

    def title(self, el: Any | None) -> str:
        """A DIVISION's or ANNEX's TITLE: its TI and STI on one line ("CHAPTER I General provisions")."""
        if el is None:
            return ""
        return " ".join(t for t in (self.text(c) for c in el if local(c.tag) in ("TI", "STI")) if t)

    def render(self, el: Any, depth: int, pending: str = "") -> str:
        for child in el:
            name = local(child.tag)
            if not name or name in _FMX_DROP or name in _FMX_NUMBERS:
                continue
            if name in ("DIVISION", "GR.SEQ", "ANNEX", "ARTICLE"):
                if name == "ARTICLE":
                    label = " ".join(t for t in (self.text(c) for c in child if local(c.tag) in ("TI.ART", "STI.ART"))
                                     if t)
                else:
                    label = self.title(_first(child, "TITLE"))
                if label:
                    self.out.append(_heading(depth, label))
                self.render(child, depth + 1 if label else depth)
                pending = ""
            elif name in ("TITLE", "TI.ART", "STI.ART") and local(el.tag) in _FMX_TITLED:
                continue  # the heading above, or the document's title
            elif name in _FMX_NUMBERED:
                number = _first(child, *_FMX_NUMBERS)
                mark = self.text(number) if number is not None else ""
                left = self.render(child, depth, " ".join(x for x in (pending, mark) if x))
                if left:
                    self.out.append(left)
                pending = ""
            elif name == "TBL" or name == "TABLE":
                rows = [[self.text(c).replace("|", "/") for c in row if local(c.tag) == "CELL"]
                        for row in child.iter() if local(row.tag) == "ROW"]
                if rows := [r for r in rows if any(r)]:
                    self.out.append(markdown_table(rows, None))
            elif name in _FMX_TEXT and not any(local(c.tag) in _FMX_TEXT | _FMX_NUMBERED | {"LIST"} for c in child):
                if text := self.text(child):
                    self.out.append(_joined(pending, text))
                    pending = ""
            else:
                pending = self.render(child, depth, pending)
        return pending


# --- Justice Canada (LIMS) ---------------------------------------------------------------------------------------

# Canada's consolidated Acts and regulations as Justice Canada publishes them (laws-lois.justice.gc.ca, its
# laws-lois-xml repository): a `Statute` or `Regulation` with `Identification`, the enacting words, a `Body` of
# `Heading`s (PART, DIVISION, titled groups; a `level`) and `Section`s (`Label` "10.1", a `MarginalNote` beside
# it, `Text`, `Subsection` "(1)", `Paragraph` "(a)", `Subparagraph` "(i)", `Clause` "(A)", `Definition`s), then
# `Schedule`s: CALS tables, or provisions under group headings whose clause numbers are bold text ("4.7.3" of
# PIPEDA's Schedule 1). A section is cited "Section 10.1" with its marginal note as its title; the other marginal
# notes, historical notes (the amending citations), footnotes and the list of recent amendments are finding aids,
# not enacted text, and are left out. Amendments not yet in force are read under their own heading, which
# agents.quotes takes for text that does not bind.
_LIMS_DROP = frozenset({"MarginalNote", "HistoricalNote", "FootnoteRef", "Footnote", "RecentAmendments",
                        "BilingualItemFr", "Label", "ScheduleFormHeading", "OriginatingRef"})
_LIMS_NUMBERED = frozenset({"Subsection", "Paragraph", "Subparagraph", "Clause", "Subclause", "Definition",
                            "Item", "Provision", "SectionPiece"})
_LIMS_BLOCKS = _LIMS_NUMBERED | {"Text", "Section"}


class _Lims:
    """Justice Canada's XML rendered to Markdown lines (`out`)."""

    def __init__(self, unit: str) -> None:
        self.unit = unit  # what a section is cited as: "Section"
        self.out: list[str] = []
        self.level = 0  # the body's heading level the sections stand under
        self.scheduled = False  # within a schedule
        self.group = 2  # the depth of the group heading a schedule's numbered clauses stand under

    def words(self, el: Any | None) -> str:
        return _text(el, _LIMS_DROP) if el is not None else ""

    def labelled(self, el: Any | None) -> str:
        """A heading's label and title as one line ("PART 1 Protection of ...", "SCHEDULE 1 Principles ...")."""
        if el is None:
            return ""
        return " ".join(x for x in (self.words(_first(el, "Label")), self.words(_first(el, "TitleText"))) if x)

    def render(self, el: Any, depth: int) -> None:
        for child in el:
            name = local(child.tag)
            if not name or name in _LIMS_DROP or name in ("Identification", "TitleText"):
                continue
            if name == "Heading":
                # a schedule's headings (the amendments not in force: "— 2026, c. 3, s. 389") head its own level
                level = 1 if self.scheduled or not (child.get("level") or "").isdigit() else int(child.get("level"))
                if label := self.labelled(child):
                    self.level = level
                    self.out.append(_heading(depth + level - 1, label))
            elif name == "Section" and child.get("type") == "amending":  # the amending Act's own section
                self.body(child, self.words(_first(child, "Label")))
            elif name == "Section":
                self.section(child, depth + self.level)
            elif name == "Schedule":
                self.out.append(_heading(depth, self.labelled(_first(child, "ScheduleFormHeading")) or "Schedule"))
                saved, self.level, self.scheduled = self.level, 1, True
                self.render(child, depth + 1)
                self.level, self.scheduled = saved, False
            elif name == "GroupHeading":
                if label := self.words(_first(child, "TitleText")) or self.words(child):
                    self.out.append(_heading(depth, label))
                    self.group = depth
            elif name == "table":
                self.table(child)
            elif name in _LIMS_NUMBERED:
                self.numbered(child)
            elif name in ("Text", "Note") or name.startswith("Continued") or not any(local(c.tag) for c in child):
                if text := self.words(child):
                    self.out.append(text)
            else:
                self.render(child, depth)

    def section(self, el: Any, depth: int) -> None:
        """A section: its heading ("Section 10.1 Report to Commissioner"), then its text and subdivisions."""
        number = self.words(_first(el, "Label"))
        note = self.words(_first(el, "MarginalNote"))
        heading = " ".join(x for x in (f"{self.unit} {number}" if number else "", note) if x)
        if heading:
            self.out.append(_heading(min(depth, 6), heading))
        self.body(el)

    def numbered(self, el: Any, pending: str = "") -> None:
        """A subsection, paragraph, definition or schedule provision: its label (after a `pending` one no text has
        opened yet) before its first text."""
        self.body(el, " ".join(x for x in (pending, self.words(_first(el, "Label"))) if x))

    def body(self, el: Any, label: str = "") -> None:
        """What `el` holds: its text opened by `label`, its subdivisions; a clause number a schedule sets in bold
        at the head of its text ("4.7.3") heads the provision it numbers."""
        pending = label
        for child in el:
            name = local(child.tag)
            if not name or name in _LIMS_DROP:
                continue
            if name == "Text":
                text = self.words(child)
                if pending and text:
                    self.out.append(_joined(pending, text))
                    pending = ""
                elif text and all(local(c.tag) == "Emphasis" for c in child) and not (child.text or "").strip() and (
                        re.fullmatch(r"\d+(?:\.\d+)+", text)):
                    self.out.append(_heading(self.group + 1, text))  # "4.7.3": the clause that follows, cited so
                elif text:
                    self.out.append(text)
            elif name in _LIMS_NUMBERED:
                self.numbered(child, pending)
                pending = ""
            elif name == "table":
                self.table(child)
            elif name == "Section":  # a section an amendment not in force sets out, quoted in its text
                self.body(child, self.words(_first(child, "Label")))
            elif any(local(c.tag) in _LIMS_BLOCKS for c in child.iter() if c is not child):
                self.body(child)  # the text an amendment sets out, a note's paragraphs
            elif text := self.words(child):
                self.out.append(text)
        if pending:
            self.out.append(pending)

    def table(self, el: Any) -> None:
        """A CALS table: its title, then its rows under the last row of its head."""
        if (title := _first(el, "title")) is not None and (words := self.words(title)):
            self.out.append(words)
        head = [row for part in el.iter() if local(part.tag) == "thead" for row in part if local(row.tag) == "row"]
        rows = [[self.words(c).replace("|", "/") for c in row if local(c.tag) == "entry"]
                for part in el.iter() if local(part.tag) == "tbody" for row in part if local(row.tag) == "row"]
        header = [self.words(c).replace("|", "/") for c in head[-1] if local(c.tag) == "entry"] if head else None
        if rows:
            self.out.append(markdown_table(rows, header or None))


def _lims_title(root: Any) -> str | None:
    """The short title an Act is cited by, else its long title (a regulation's)."""
    ident = _first(root, "Identification")
    heads = [el for el in (_first(ident, "ShortTitle"), _first(ident, "LongTitle")) if el is not None] \
        if ident is not None else []
    return next((title for el in heads if (title := _text(el, _LIMS_DROP))), None)


# --- DITA -----------------------------------------------------------------------------------------------------

# DITA (OASIS Darwin Information Typing Architecture: the US Federal Acquisition Regulation as GSA publishes it,
# and technical documentation and policies in general): each element's base type is the first token of its class
# attribute ('class="- topic/li task/step "' is a list item), else its name (a file written without its DTD's
# defaults), so that a specialisation (`concept`, `task`, `step`, `conbody`) is read as what it specialises.
_DITA_ROOTS = frozenset({"dita", "topic", "concept", "task", "reference", "glossentry", "glossgroup",
                         "troubleshooting"})
_DITA_DROP = frozenset({"prolog", "related-links", "titlealts", "draft-comment", "required-cleanup", "indexterm",
                        "index-base", "data", "data-about", "foreign", "unknown", "object", "image", "colspec",
                        "navtitle", "searchtitle"})
_DITA_BLOCKS = frozenset({"p", "shortdesc", "abstract", "lq", "pre", "lines", "ol", "ul", "sl", "dl", "note",
                          "table", "simpletable", "fig", "section", "example", "li", "sli", "dlentry", "topic",
                          "body", "bodydiv", "sectiondiv", "div", "itemgroup", "figgroup"})
_DITA_LABEL = re.compile(r"^\(?[0-9a-zA-Z]{1,6}[.)]$")  # a paragraph that is only its label: "(b)", "1."


# ... and the base types of the common specialisations, for a file without those attributes
_DITA_NAMES = {"concept": "topic", "task": "topic", "reference": "topic", "glossentry": "topic",
               "troubleshooting": "topic", "conbody": "body", "taskbody": "body", "refbody": "body",
               "glossBody": "body", "troublebody": "body", "refsyn": "section", "context": "section",
               "result": "section", "prereq": "section", "postreq": "section", "steps": "ol", "steps-unordered": "ul",
               "substeps": "ol", "step": "li", "substep": "li", "cmd": "ph", "info": "itemgroup",
               "stepresult": "itemgroup", "glossterm": "title", "glossdef": "abstract"}


def _dita_base(el: Any) -> str:
    tokens = str(el.get("class") or "").split()
    base = next((t for t in tokens if "/" in t), "")
    return base.split("/", 1)[1] if base else _DITA_NAMES.get(local(el.tag), local(el.tag))


def _dita_text(el: Any, notes: list[str]) -> str:
    """The inline text under `el` (blocks inside it are read apart); a cross-reference with no text of its own
    stands for its target's name as its address gives it ("52.233-2.dita#FAR_52_233_2" -> "52.233-2"), as a
    processor prints the target's number; a footnote (`fn`) is its mark, its text kept in `notes`."""
    pieces: list[str] = [el.text or ""]
    for child in el:
        base = _dita_base(child)
        if base in _DITA_BLOCKS or base in _DITA_DROP or not local(child.tag):
            pass
        elif base == "fn":
            notes.append(f"({len(notes) + 1}) {_dita_text(child, notes)}")
            pieces.append(f"({len(notes)})")
        elif base == "xref" and not "".join(child.itertext()).strip():
            target = str(child.get("href") or "").split("#", 1)[0].rsplit("/", 1)[-1]
            pieces.append(target.rsplit(".", 1)[0] if "." in target else target)
        else:
            pieces.append(_dita_text(child, notes))
        pieces.append(child.tail or "")
    return _clean("".join(pieces))


def _dita(el: Any, depth: int, out: list[str], notes: list[str]) -> None:
    """Render one DITA element: a topic's title (and a section's or an example's) a heading over what follows, a
    paragraph or a list item its text (a label alone, "(b)", opens the text after it), a note its text after
    its type ("Note: ...", "Important: ..."), a definition its term before its description, a table its rows."""
    base = _dita_base(el)
    if base in _DITA_DROP or not local(el.tag):
        return
    if base in ("topic", "section", "example", "fig") and (title := _first_base(el, "title")) is not None:
        out.append(_heading(depth, _dita_text(title, notes)))
        for child in el:
            if child is not title:
                _dita(child, depth + 1 if base == "topic" else depth, out, notes)
        return
    if base in ("table", "simpletable"):
        _dita_table(el, out, notes)
        return
    if base == "dlentry":
        term = " ".join(_dita_text(c, notes) for c in el if _dita_base(c) == "dt")
        for child in el:
            if _dita_base(child) == "dd":
                start = len(out)
                _dita(child, depth, out, notes)
                if start < len(out) and term:
                    out[start] = f"{term}{'' if term.endswith((':', '.')) else ':'} {out[start]}"
        return
    start = len(out)
    if text := _dita_text(el, notes):
        out.append(text)
    for child in el:
        if _dita_base(child) in _DITA_BLOCKS or _dita_base(child) in ("dd", "dt"):
            _dita(child, depth, out, notes)
    if base == "note" and start < len(out):
        kind = str(el.get("type") or "note")
        label = str(el.get("othertype") or "Note") if kind == "other" else kind.capitalize()
        out[start] = f"{label}: {out[start]}"
    # a paragraph that is only its label opens the text after it ("(b)" above "(1) The contracting officer ...")
    if start + 1 < len(out) and _DITA_LABEL.match(out[start]) and not out[start + 1].startswith("#"):
        out[start:start + 2] = [f"{out[start]} {out[start + 1]}"]


def _first_base(el: Any, base: str) -> Any | None:
    return next((child for child in el if _dita_base(child) == base), None)


def _dita_table(el: Any, out: list[str], notes: list[str]) -> None:
    """A DITA table (CALS: tgroup, thead, tbody, row, entry) or simple table (sthead, strow, stentry): its title,
    then its rows under their header row (the head's rows, else none)."""
    if (title := _first_base(el, "title")) is not None and (text := _dita_text(title, notes)):
        out.append(text)
    def cell(entry: Any) -> str:
        paragraphs: list[str] = []
        _dita(entry, 7, paragraphs, notes)
        return " ".join(paragraphs).replace("|", "/")

    def headed(row: Any) -> bool:  # a head row, or a first row whose every cell is styled a heading
        return all("head" in str(c.get("outputclass") or "").lower() for c in row if local(c.tag))

    heads = {id(row) for part in el.iter() if _dita_base(part) == "thead" for row in part}
    header: list[str] | None = None
    rows: list[list[str]] = []
    for row in el.iter():
        base = _dita_base(row)
        if base in ("row", "sthead", "strow"):
            cells = [cell(c) for c in row if _dita_base(c) in ("entry", "stentry")]
            if header is None and not rows and (base == "sthead" or id(row) in heads or headed(row)):
                header = cells
            elif cells:
                rows.append(cells)
    if rows:
        out.append(markdown_table(rows, header))


def _dita_title(root: Any) -> str | None:
    topic = root if _dita_base(root) == "topic" else next((c for c in root if _dita_base(c) == "topic"), None)
    title = _first_base(topic, "title") if topic is not None else None
    return _dita_text(title, []) if title is not None else None


# --- entry point ----------------------------------------------------------------------------------------------


def to_markdown(root: Any, schema: str) -> tuple[str, str | None]:
    """The document under `root` (of `kind(root)` `schema`) as Markdown, and its title (None when it names none).
    Headings start at level 2: the title is not a section."""
    notes: list[str] = []
    if schema == "ecfr":
        out: list[str] = []
        _ecfr(root, 2, out)
        title = _ecfr_title(root)
    elif schema == "fedreg":
        out, notes, title = _fedreg(root)
    elif schema in ("akn", "uslm"):
        out, notes = _akn(root, _AKN_DROP)
        title = _akn_title(root)
    elif schema == "clml":
        out = []
        left = _clml(root, 2, out, unit=_clml_unit(root))
        if left:
            out.append(left)
        title = _clml_title(root)
    elif schema == "lims":
        canada = _Lims("Section")
        canada.render(root, 2)
        out, title = canada.out, _lims_title(root)
    elif schema == "formex":
        render = _Formex()
        doc = _first(root, "CONS.DOC") if local(root.tag) == "CONS.ACT" else root
        doc = root if doc is None else doc
        head = _first(doc, "TITLE")
        title = " ".join(render.text(p) for p in head.iter() if local(p.tag) == "P") if head is not None else None
        if local(doc.tag) in ("ANNEX", "CONS.ANNEX"):  # an annex, published as a document of its own
            render.out.append(_heading(2, render.title(head) or "Annex"))
        left = render.render(doc, 3 if local(doc.tag) in ("ANNEX", "CONS.ANNEX") else 2)
        out, notes = render.out + ([left] if left else []), render.notes
    elif schema == "dita":
        out = []
        for topic in ([root] if local(root.tag) != "dita" else list(root)):
            _dita(topic, 2, out, notes)
        title = _dita_title(root)
    else:
        raise ValueError(f"not a legislation schema: {schema}")
    if notes:
        out += ["## Notes", *notes]
    return "\n\n".join(line for line in out if line.strip()) + "\n", title
