"""The structure of legislation and standards in plain text. Pure functions, no I/O.

* Headings: `Article 33`, `CHAPTER IV`, `Section 2`, `TITLE II`, `PART 990—CLIENT RECORDS`, `Guideline 1.4` and
  `Success Criterion 1.4.3` (W3C's accessibility guidelines),
  `Subpart B—Retention`, `§ 990.21 Retention of transaction records.`, `ANNEX I`, `Annex A (normative)`,
  `Schedule 1`, `Rule 11.2.1`, and the numbered forms `4.2 Retention periods`, `1. Purpose`, `A.5.1 Retention`.
  A heading without a title on its line (`Article 33`) takes the next short line as its title.
* Positions inside a provision: numbered paragraphs `1.`, `(1)`, and points `(a)`, `a)`, `(i)`, `(A)`.
  The first style met in a provision is its paragraph level; deeper styles are points. A list that
  follows a lead-in ending in `:` is points of the paragraph that introduces it.
* Recitals: `(12) ...` blocks before the enacting terms of an EU-style act ("HAVE ADOPTED THIS
  REGULATION:"), which are recognised by their `Article N` headings.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Rank of each kind of heading in a plain-text document: a heading closes every open heading of the
# same or a deeper rank. Numbered headings without a word rank below all of them, by depth.
RANKS = {"part": 1, "annex": 1, "schedule": 1, "appendix": 1, "title": 2, "chapter": 3, "subpart": 3,
         "section": 4, "guideline": 4, "article": 5, "rule": 5, "regulation": 5, "§": 5, "control": 5,
         "success criterion": 5}
NUMBERED_BASE = 5
LABELS = {"part": "Part", "annex": "Annex", "schedule": "Schedule", "appendix": "Appendix", "title": "Title",
          "chapter": "Chapter", "subpart": "Subpart", "section": "Section", "article": "Article", "rule": "Rule",
          "regulation": "Regulation", "§": "§", "control": "", "guideline": "Guideline", "provision": "Provision",
          "requirement": "Requirement", "recommendation": "Recommendation", "success criterion": "Success Criterion"}
# Kinds of a requirement a standard labels in its text (`labelled_requirement`)
LABELLED = frozenset({"provision", "requirement", "recommendation"})
# Kinds inside which "1." starts a numbered paragraph, never a heading.
PROVISIONS = frozenset({"article", "§", "section", "rule", "regulation"})

# A letter is a number only in capitals ("Annex A", "Subpart B"): "Sections 3.1 and 3.2 ..." opens a sentence.
# An inserted provision keeps its neighbour's number with letters: "Article 4a", "section 21ZA", "regulation A20".
_NUMBER = (r"(?:\d+(?:\.\d+)*-\d+(?:\.\d+)*|\d+(?:\.\d+)*(?:(?-i:[A-Z]{1,2})|[a-z])?|[IVXLCDM]+|"
           r"(?-i:[A-Z]{1,2})\d+(?-i:[A-Z]{0,2})|(?-i:[A-Z])(?:\.\d+)*)")
_WORD_HEADING = re.compile(
    r"^(?P<word>part|title|subpart|chapter|section|sec\.|article|rule|regulation|guideline|success\s+criterion|annex|"
    r"schedule|appendix|§)"
    r"(?:(?<=§)\s*|\s+)"
    rf"(?P<num>{_NUMBER})(?!\w|\.\w)\.?(?:\s*(?:--|[-\u2013\u2014:.])\s*|\s+)?(?P<title>.*)$", re.IGNORECASE)
_NUMBERED = re.compile(r"^(?P<num>\d+(?:\.\d+)*[A-Za-z]?|[A-Z]\.\d+(?:\.\d+)*)(?P<dot>\.?)(?:\s*[-\u2013:]\s*|\s+)"
                       r"(?P<title>\S.*)$")
_RECITAL = re.compile(r"^\((?P<num>\d{1,3})\)(?:\s+|$)")
_DATE = re.compile(r"\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?"
                   r"\s+\d{4}\.?", re.IGNORECASE)
_ARTICLE_LINE = re.compile(r"^Article\s+\d+[a-z]?\b", re.IGNORECASE)
# Paragraphs inserted by an amendment carry their neighbour's number with letters: "1a." (EU consolidated texts),
# "(2A)", "(3ZA)" (UK legislation); points inserted between letters double them: "(ba)" after "(b)".
_ENUMERATORS = (
    ("N.", re.compile(r"^(?P<label>\d{1,3}[a-z]?)\.(?=\s|$)")),
    ("(N)", re.compile(r"^\((?P<label>\d{1,3}(?:[A-Z]{1,3})?)\)(?=\s|$)")),
    ("N)", re.compile(r"^(?P<label>\d{1,3})\)(?=\s|$)")),
    ("(a)", re.compile(r"^\((?P<label>[a-z]{1,5})\)(?=\s|$)")),
    ("a)", re.compile(r"^(?P<label>[a-z]{1,5})\)(?=\s|$)")),
    ("(A)", re.compile(r"^\((?P<label>[A-Z]{1,5})\)(?=\s|$)")),
)
_ROMAN = re.compile(r"^(?=[ivxlc]+$)m{0,3}(?:c[md]|d?c{0,3})(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3})$")


class Heading(NamedTuple):
    """A recognised heading: `kind` is a structural word ('article', '§', ...) or '' for a bare number."""

    kind: str
    number: str
    title: str
    level: int

    @property
    def label(self) -> str:
        """How the heading names itself in a section path: 'Article 33', 'Chapter IV', '§ 990.21', '4.2'."""
        if not self.kind or self.kind == "control":
            return self.number
        word = LABELS[self.kind]
        return f"{word} {self.number}" if word != "§" else f"§ {self.number}"


def _title_ok(title: str) -> bool:
    return not title or not title[0].islower()


_SMALL_WORDS = frozenset("a an and as at by for from in into of on or the to with under upon this that such its "
                         "your their than".split())
_RUN_IN = re.compile(r"^(?P<title>[A-Z][^.!?:]{0,80}?)[.:](?:\s+(?=\S)|$)")


def titled_run_in(title: str) -> str | None:
    """The title-case words that open `title` and end with a full stop or colon, as licences and
    contracts head their clauses ("Trademarks" of "Trademarks. This License does not ...", "Termination"
    of "Termination."); None when `title` opens with a sentence ("Records must be kept.")."""
    match = _RUN_IN.match(title)
    words = match.group("title").split() if match else []
    if not 0 < len(words) <= 8 or not all(w[0].isupper() or w[0].isdigit() or w in _SMALL_WORDS for w in words):
        return None
    return match.group("title").strip() if match else None


def parse_heading(line: str, *, in_provision: bool = False) -> Heading | None:
    """The heading a short line states, or None.

    `in_provision`: the line stands inside an article or section, where "1. ..." is a numbered
    paragraph, not a heading. A line ending like a sentence (`.` `;` `,` `:`) is no heading, except a
    `§` heading, which ends with a full stop in the CFR, and a numbered one whose title case words end
    with a full stop ("8. Termination.", "6. Trademarks. This License ...": `titled_run_in`).
    """
    line = line.strip().lstrip("#").strip().strip("*_").strip()
    words = len(line.split())
    if not line or words > 20:
        return None
    match = _WORD_HEADING.match(line)
    if match and _title_ok(match.group("title").strip()):
        word = " ".join(match.group("word").lower().split())
        kind = {"sec.": "section"}.get(word, word)  # "SEC. 3."
        number, title = match.group("num"), match.group("title").strip()
        run_in = titled_run_in(title) if title.endswith(".") else None  # "Section 3 -- License Conditions."
        if run_in is not None and run_in == title.rstrip("."):
            title = run_in
        elif kind != "§" and (title.endswith((".", ";", ",", ":")) or words > 14):
            return None
        if kind in ("section", "rule", "§") and "." in number:
            level = NUMBERED_BASE + number.count(".") + 1
        else:
            level = RANKS[kind]
        return Heading(kind, number, title.rstrip(".") if kind == "§" else title, level)
    match = _NUMBERED.match(line)
    run_in = titled_run_in(match.group("title")) if match else None  # "8. Termination.", "6. Trademarks. This ..."
    if words > 14 or line.endswith((".", ";", ",", ":")) and not re.fullmatch(r"[\d.]+", line) and run_in is None:
        return None
    if not match or not match.group("title")[0].isupper() or _DATE.fullmatch(line):
        return None  # "6 October 2025" on a title page is a date
    number = match.group("num")
    if in_provision and match.group("dot") and "." not in number:
        return None
    title = match.group("title").strip()
    bare = title.rstrip(".:")
    return Heading("", number, bare if run_in == bare else title, NUMBERED_BASE + number.count(".") + 1)


# A section's label that is a capital letter or a Roman numeral, as agreements letter their sections ("O. Defense of
# Claims", "II. Scope"): ingest numbers such headings by it (engine.ingest.sections) and questions name them by it
# ("Section O.2": agents.provisions)
LETTER_LABEL = r"[A-Z]|[IVX]{2,5}"
# A catalogue's control id: capitals and digits in pieces joined by '-' or '.', with a digit, and any
# enhancement numbers in brackets ("AC-2", "AC-2(1)", "ISM-1234", "PR.AC-1", "V2.1.1", "CC6.1", "A&A-01"), or two
# capitalised words or more before the number, as a checklist numbers its checks ("Check-Identity-01": OpenStack's).
CHECK_ID = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)+-\d{1,5}"  # a checklist's check, as headings and questions name it
_CONTROL_ID = rf"(?=[A-Z0-9&.\-]*\d)[A-Z][A-Z0-9&]*(?:[.\-][A-Z0-9]+)+(?:\(\d+\))*|{CHECK_ID}"
_CONTROL = re.compile(rf"^(?P<num>{_CONTROL_ID})(?:\s*[:\u2013\u2014-]\s*|\s+|$)(?P<title>.*)$")


def control_heading(line: str, level: int = RANKS["control"]) -> Heading | None:
    """A heading that opens with a control id ("## AC-2 Account Management", "### AC-2(1) Automated ..."),
    as catalogues and standards head their controls; None for any other line. Read only on lines a format
    marks as headings (Markdown, HTML, DOCX): in plain text an id can open a sentence."""
    match = _CONTROL.match(line.strip().strip("*_").strip())
    if match is None or not _title_ok(match.group("title")):
        return None
    return Heading("control", match.group("num"), match.group("title").strip(), level)


# A requirement's label that opens its statement, as standards number theirs in the text: "Provision 5.1-1 Where
# passwords are used ... shall be unique per device ...", "Requirement 4.2.1 The vendor shall ...". The statement
# states a duty or a permission; a table row that lists the labels ("Provision 5.1-1  M  C (1)") does not.
_LABELLED = re.compile(r"^(?P<word>Provision|Requirement|Recommendation)\s+"
                       r"(?P<num>\d{1,3}(?:\.\d{1,3})*(?:-\d{1,3})?[A-Z]{0,2})\s+(?P<text>[A-Z(\"'\u2018\u201c].*)$")
_STATES = re.compile(r"\b(?:shall|should|must|may|will|can|is|are)\b")


def labelled_requirement(line: str, level: int) -> Heading | None:
    """The requirement a line opens with its label ("Provision 5.1-1 Where passwords are used ..."), as a heading
    at `level` whose text is the line itself (run in); None for any other line. Pure."""
    found = _LABELLED.match(line.strip())
    if found is None or len(found.group("text").split()) < 4 or not _STATES.search(found.group("text")):
        return None
    return Heading(found.group("word").lower(), found.group("num"), "", level)


def is_caps_heading(line: str) -> bool:
    """An unnumbered heading in capitals ("DEFINITIONS"), never a line that continues a sentence, nor one mostly of
    figures and marks (an example's "HTTP/1.1 200 OK", a row of hexadecimal bytes "20 25 26 2B C2 A3")."""
    line = line.strip()
    marks = sum(not ch.isspace() for ch in line)
    return (line.isupper() and len(line.split()) <= 10 and len(line) > 3
            and not line.endswith((",", ";", ":", ".")) and sum(ch.isalpha() for ch in line) * 2 >= marks)


_CENTRED_INDENT = 8  # leading spaces of a plain-text line set apart as a title ("        Preamble")


def is_centred_title(paragraph: str) -> bool:
    """A paragraph of one indented line of a few title-case words and nothing else ("Preamble", "How to Apply
    These Terms to Your New Programs"): how plain-text licences and contracts head an unnumbered section.
    Words only (no figures or punctuation: "Version 3, 29 June 2007" is a version line, not a heading)."""
    if "\n" in paragraph.strip("\n") or len(paragraph) - len(paragraph.lstrip(" ")) < _CENTRED_INDENT:
        return False
    words = paragraph.split()
    return (0 < len(words) <= 10 and all(re.fullmatch(r"[A-Za-z][A-Za-z'-]*", w) for w in words)
            and words[0][0].isupper() and all(w[0].isupper() or w.lower() in _SMALL_WORDS for w in words))


def is_title_line(text: str) -> bool:
    """A line that can be the title of a heading stated alone ("Article 33" / "Notification of ...")."""
    text = text.strip()
    return ("\n" not in text and 0 < len(text.split()) <= 20 and not text.endswith((".", ";", ",", ":"))
            and enumerator(text) is None and parse_heading(text) is None)


def is_eu_style(paragraphs: list[str]) -> bool:
    """An act with `Article N` headings: its numbered blocks before the enacting terms are recitals."""
    return any(_ARTICLE_LINE.match(p.strip()) and parse_heading(p.strip().split("\n")[0]) is not None
               for p in paragraphs)


def recital_number(text: str) -> str | None:
    match = _RECITAL.match(text.strip())
    return match.group("num") if match else None


def roman_value(label: str) -> int | None:
    """1 for 'i', 4 for 'iv', ...; None when `label` is not a lowercase roman numeral."""
    if not _ROMAN.match(label):
        return None
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
    total = 0
    for i, ch in enumerate(label):
        value = values[ch]
        total += -value if i + 1 < len(label) and values[label[i + 1]] > value else value
    return total


# Labels of several levels run together where a paragraph has no text of its own, as the CFR prints them:
# "(a)(1)(i) Standard: ...", "(b)(2) ..."
_COMBINED = re.compile(r"^(?:\([A-Za-z0-9]{1,5}\)){2,4}(?=\s|$)")


def enumerators(text: str) -> list[tuple[str, str]]:
    """Every label `text` opens with, outermost first: [('(a)', 'a'), ('(N)', '1')] for "(a)(1) ..."; one for
    "2. ..." or "(b) ..."; none for a paragraph that is not enumerated."""
    text = text.lstrip()
    combined = _COMBINED.match(text)
    pieces = re.findall(r"\([A-Za-z0-9]{1,5}\)", combined.group(0)) if combined else [text]
    found: list[tuple[str, str]] = []
    for piece in pieces:
        piece = piece if not combined else piece + " "
        match = next(((style, m) for style, pattern in _ENUMERATORS if (m := pattern.match(piece))), None)
        if match is None:
            return found if combined else []
        found.append((match[0], match[1].group("label")))
    return found


def enumerator(text: str) -> tuple[str, str] | None:
    """(style, label) when `text` opens with a paragraph number or a point: ('N.', '1'), ('(a)', 'b'); the
    outermost of labels run together ("(a)(1)")."""
    found = enumerators(text)
    return found[0] if found else None


# A sentence that stops on a word no sentence ends with (a preposition, an article, a conjunction, a copula) goes on
# in the list below it: "The scanning and identification of system vulnerabilities is performed by" over "1.
# Automated security agent installed on all Linux servers."
UNFINISHED = re.compile(r"(?<!['\u2019])\b(?:by|to|of|for|with|from|in|on|at|into|onto|through|via|under|upon|than|"
                        r"the|an?|that|which|whether|is|are|be)\s*$", re.I)


FIRST_LABELS = frozenset("a A 1 i I".split())  # the label that begins a sequence, in each style


def _inserted_after(last: str, label: str) -> bool:
    """`label` is the next of the letters an amendment adds after `last` ("A" after "", "B" after "A", "ba" after
    "b", "bb" after "ba"), or the next unlettered one ("c" after "ba"). Pure."""
    if label == last + ("A" if label[-1:].isupper() else "a"):
        return True
    if len(label) == len(last) >= 1 and label[:-1] == last[:-1] and ord(label[-1]) == ord(last[-1]) + 1:
        return True
    return len(last) == 2 and len(label) == 1 and last.islower() and ord(label) == ord(last[0]) + 1


def _follows(style: str, last: str, label: str) -> bool:
    """`label` comes right after `last` in `style`'s sequence: "b" after "a", "2" after "1", "iv" after "iii", and
    past inserted ones: "1a" or "(2A)" after "1", "2" after "1a", "(ba)" after "(b)", "(c)" after "(ba)". Pure."""
    before, after = re.fullmatch(r"(\d+)([A-Za-z]*)", last), re.fullmatch(r"(\d+)([A-Za-z]*)", label)
    if before and after:
        if int(after[1]) == int(before[1]) + 1:
            return not after[2]
        return after[1] == before[1] and bool(after[2]) and _inserted_after(before[2], after[2])
    if style in ("(i)", "i)") and (a := roman_value(last)) is not None and (b := roman_value(label)) is not None:
        return b == a + 1
    return (len(last) == len(label) == 1 and ord(label) == ord(last) + 1) or (
        label.islower() and len(label) <= 2 and bool(last) and _inserted_after(last, label))


class Positions:
    """Where a provision's paragraphs and points begin: the state of one section's enumerations."""

    def __init__(self) -> None:
        self.levels: list[str] = []       # styles in order of first appearance: level 0 splits blocks; a style
        # used again deeper down ("(b)(1)(i)(a)", the CFR's "(A)(1)") has a level of its own, "(a)#2"
        self.point_styles: set[str] = set()  # styles that began after a lead-in ("shall at least:")
        self.labels: list[str] = []
        self.lead_in = False
        self.item_lead_in = False  # the paragraph before is a point or paragraph that ends in a lead-in

    def _last(self, style: str) -> str:
        index = self.levels.index(style) if style in self.levels else len(self.labels)
        return self.labels[index] if index < len(self.labels) else ""

    def _style(self, style: str, label: str) -> str:
        """'(a)' and '(i)' look alike: (i) right after (h), nothing deeper between, is a letter; otherwise a roman
        numeral when it is i, continues the numerals in use, or has several characters."""
        if style not in ("(a)", "a)"):
            return style
        letters, numerals = style, ("(i)" if style == "(a)" else "i)")
        roman = roman_value(label)
        if roman is None:
            return letters
        last_letter = self._last(letters)
        # (i) right after (h) is a letter, and so is an (i) after a numeral (numerals restart only under a new
        # parent: "(h)(2)(xiii) ..." then "(i) Information ..."); after "(h)(1) ..." and "(2) Examples are:" it
        # is (h)(2)(i)
        after_numeral = numerals in self.levels and len(self.labels) == self.levels.index(numerals) + 1
        # and so is an (i) after "(h) ...", "(7) The evaluation ... event." that announces no list below it: the
        # CFR's § 314.4(i) after (h)(7), not (h)(7)(i)
        if (_follows(letters, last_letter, label)
                and self.labels and (self.labels[-1] == last_letter or after_numeral or not self.item_lead_in)):
            return letters
        if numerals in self.levels and roman == (roman_value(self._last(numerals)) or 0) + 1:
            return numerals
        return numerals if label == "i" or len(label) > 1 else letters

    def _level(self, style: str, label: str) -> int:
        """The level of a point labelled alone: of the levels its style has, the deepest open one whose last label
        it follows ("(b)" after "(a)"); else, where it begins its style's sequence ("(a)", "(A)", "(1)") right after
        an item that announces a list ("(i) a written certification that:") and its style's level is not below
        that item's, a level of its own under the item: an item's points lie below it, as in "(b)(1)(i)(a)" (New
        York's rules), the CFR's "(A)(1)", or an "(A)" under "(ii)" where an earlier "(A)" sat under a "(1)";
        else its style's first level."""
        copies = [i for i, s in enumerate(self.levels) if s.split("#")[0] == style]
        if not copies:
            self.levels.append(style)
            return len(self.levels) - 1
        here = len(self.labels) - 1  # the level of the item before
        for i in reversed([i for i in copies if i <= here and self.labels[i]]):
            if _follows(style, self.labels[i], label):
                return i
        if self.item_lead_in and label in FIRST_LABELS and copies[0] <= here:
            below = [i for i in copies if i > here]
            if below:
                return below[0]
            self.levels.append(f"{style}#{len(copies) + 1}")
            return len(self.levels) - 1
        return copies[0]

    def unnumbered(self, text: str) -> None:
        """A paragraph whose opening number is its section's, not a paragraph's (a clause's run-in title)."""
        self.lead_in = text.rstrip().endswith((":", "\u2014"))
        self.item_lead_in = False

    def see(self, text: str) -> tuple[bool, str] | None:
        """For a paragraph: None when it is not enumerated; else (starts a new block, its label path)."""
        found = enumerators(text)
        lead_in = text.rstrip().endswith((":", "\u2014"))
        if not found:
            self.lead_in = lead_in
            self.item_lead_in = False
            return None
        first = None
        for style, label in found:  # "(a)(1)": (a) at its level, then (1) one level below it
            style = self._style(style, label)
            if style not in self.levels and self.lead_in and first is None and len(found) == 1:
                self.point_styles.add(style)  # "(a)(1)" designates a paragraph
            if len(found) == 1:
                level = self._level(style, label)
            else:
                if style not in self.levels:
                    self.levels.append(style)
                level = self.levels.index(style)
            if first is not None and level <= first[0]:
                break  # a run that does not go deeper is no run of levels; its first label stands
            # a level skipped ("(1)" then "(i)" where an "(A)" list sat between them earlier) stays empty
            self.labels = [*self.labels[:level], *[""] * (level - len(self.labels)), label]
            first = first or (level, style)
        assert first is not None
        path = "".join(f"({x})" for x in self.labels if x)
        if len(found) == 1:  # the points that follow in the same paragraph ("1. Direct report ...\n 2. Email; ...")
            for line in text.splitlines()[1:]:
                more = enumerators(line)
                if len(more) == 1 and more[0][0] == found[0][0] and _follows(first[1], self.labels[-1], more[0][1]):
                    self.labels[-1] = more[0][1]
        self.lead_in = self.item_lead_in = lead_in
        return first[0] == 0 and first[1] not in self.point_styles, path
