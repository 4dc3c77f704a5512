"""Quotes: where a requirement's verbatim quote begins and ends in a chunk's text, and what kind of text it is.

A sentence that leans on the text before it is quoted from the sentence it points at (`with_context`); one that
introduces a list runs on over its points (`with_list`, `points_after`); a long one is cut around its modal verb
(`excerpt`); `locate` finds a quote an LLM proposes; `is_verbatim` is the verbatim check Verify makes (the chunk
text at the quote's offsets, whitespace normalized, and nothing else); `non_binding` says when text explains
rather than binds. Pure functions over text: the extract node (agents/extract.py) numbers and records what they
find.
"""

from __future__ import annotations

import re
from typing import Any

from agents.modality import rx
from agents.state import EvidenceItem
from engine.config import EvidenceSettings
from engine.ingest.sentences import split_sentences
from engine.ingest.structure import FIRST_LABELS, UNFINISHED
from engine.text import MODAL_ANCHOR, in_table_row, leans_on_context, normalize_ws, withdrawn

# An amending instruction of an act that changes others ("(b) in paragraph 3, the first subparagraph is replaced by
# the following:", "Article 7 is amended as follows:"): the text after it is another act's, inserted.
_AMENDING = rx(r"\b(?:is|are)\s+(?:hereby\s+)?(?:replaced|amended|inserted|added|deleted|repealed|renumbered)\b",
               r"\bas\s+follows\s*:\s*$")


def amends(sentence: str) -> bool:
    """The sentence is an amending instruction: quoted as it stands, never run on over the text it inserts nor
    read with the sentence before it. Pure."""
    return _AMENDING.search(sentence) is not None


REFERS_ELSEWHERE = rx(r"\b(?:as\s+)?(?:set\s+out|described|specified|referred\s+to|defined)\s+in\s+"
                        r"(?:section|rule|article|paragraph|part|chapter|schedule)\b",
                        r"^\s*(?:such|these|those|the\s+foregoing|the\s+above|this|that)\b",
                        r"\bthe\s+foregoing\b", r"\bsuch\s+(?:records?|information|persons?|measures?|data)\b",
                        r"\b(?:in\s+accordance\s+with|under|pursuant\s+to)\s+(?:section|rule|article|paragraph)\b")
# Text that explains or illustrates rather than binds, recognised from the document's structure
# (section path or heading) or the sentence's own opening ("Guidance:", "For example, ...").
_NON_BINDING_SECTION = rx(r"\b(?:recitals?|guidance|notes?|examples?|explanatory|commentary|preamble|whereas|"
                          r"discussion|rationale|"
                           r"illustrations?|background|not\s+(?:yet\s+)?in\s+force)\b")
_NON_BINDING_TEXT = rx(r"^\s*(?:guidance|note|example|illustration|for\s+example|for\s+instance|e\.g\.|whereas|"
                      r"discussion|rationale|supplemental\s+guidance|commentary)\b",
                        r"^\s*\(\d{1,3}\)\s+(?:whereas\b|[A-Z][a-z]+\s+(?:should|ought)\b)",
                        r"^\s*recommendations?\s*:")  # a control's "Recommendation:" beside its "Requirement:"


# A section that tells the reader how to apply or use the text (a licence's "APPENDIX: How to apply the Apache
# License to your work", "How to Apply These Terms to Your New Programs"): instructions for a notice, not terms.
_HOW_TO = re.compile(r"^\W*(?:appendix\W*)?how\s+to\s+(?:apply|use)\b", re.IGNORECASE)


def non_binding(chunk: EvidenceItem, sentence: str = "", paragraph: str = "") -> str | None:
    """What kind of non-binding text this is (guidance, note, example, recital, discussion...), or None when
    it binds; `paragraph`: the opening of the paragraph the sentence stands in ("Discussion: ..." makes each of
    its sentences commentary, as catalogues mark a control's explanation). Pure."""
    for where in (chunk.get("section_path", ""), chunk.get("section_heading", "")):
        found = _NON_BINDING_SECTION.search(where or "")
        if found:
            return _KIND.get(found.group(0).lower().rstrip("s"), found.group(0).lower().rstrip("s"))
    if any(_HOW_TO.match(heading) for heading in (chunk.get("section_path") or "").split(" > ")):
        return "guidance"
    found = _NON_BINDING_TEXT.search(sentence) or _NON_BINDING_TEXT.search(paragraph)
    if found is None:
        return None
    opening = normalize_ws(found.group(0).lower())
    return "recital" if opening.startswith("(") else next(
        (kind for word, kind in _KIND.items() if opening.startswith(word)), "guidance")


_KIND = {"discussion": "discussion", "rationale": "discussion", "commentary": "discussion",
         "supplemental": "guidance", "whereas": "recital", "preamble": "recital", "recital": "recital",
         "for example": "example",
         "for instance": "example", "e.g.": "example", "example": "example", "illustration": "example",
         "note": "note", "guidance": "guidance", "not in force": "not in force", "not yet in force": "not in force"}


def is_verbatim(chunk_text: str, char_start: int, char_end: int, quote: str) -> bool:
    """True when `quote` is exactly the chunk text at [char_start, char_end) (whitespace normalized)."""
    if not (0 <= char_start < char_end <= len(chunk_text)):
        return False
    return normalize_ws(chunk_text[char_start:char_end]) == normalize_ws(quote) != ""


def _word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", text[start:end])]


# A clause boundary: the word after one of these (or after a line break) may open an excerpt.
_CLAUSE_END = (",", ";", ":", ")")
MIN_AFTER_MODAL = 12  # words an excerpt keeps from the modal verb on
# A sentence's last words beyond the limit are kept when there are at most this many (its closing condition:
# "... assessed as critical by vendors or when working exploits exist").
TAIL_SLACK = 10


def whole_sentences(text: str, start: int, end: int) -> bool:
    """`text[start:end]` begins where a sentence begins and ends where one ends. Pure."""
    spans = split_sentences(text)
    return any(s.start == start for s in spans) and any(s.end == end for s in spans)


def long_enough(text: str, start: int, end: int, limits: EvidenceSettings, whole: bool | None = None) -> bool:
    """At least `limits.min_quote_words` words, or whole sentences of at least `limits.min_sentence_words`, or a
    whole sentence that says its provision is withdrawn (engine.text.withdrawn: "[Withdrawn: Incorporated into
    FS-1.]" is all such a control says)."""
    n = len(text[start:end].split())
    if n >= limits.min_quote_words:
        return True
    return (n >= limits.min_sentence_words or withdrawn(text[start:end])) and (
        whole if whole is not None else whole_sentences(text, start, end))


def excerpt(text: str, start: int, end: int, limits: EvidenceSettings, lead: int = 0,
             whole: bool = True, anchor_at: int | None = None) -> tuple[int, int] | None:
    """A contiguous span of at most `limits.max_quote_words` words (plus `lead`, the words of sentences
    prepended for context) holding the sentence's modal verb; None for a span too short to quote
    (`long_enough`; `whole`: the span is whole sentences). The span keeps the sentence's beginning (its
    subject, and a time or condition stated first: "On an annual basis ..., the officer must ...") whenever
    the modal verb and `MIN_AFTER_MODAL` words after it fit; otherwise it opens at the earliest clause
    boundary that lets them fit, or 8 words before the modal verb. `anchor_at`: hold that offset instead of the
    modal verb (a time the sentence states beyond the first excerpt)."""
    most = limits.max_quote_words + lead
    words = _word_spans(text, start, end)
    if len(words) <= most:
        return (start, end) if long_enough(text, start, end, limits, whole) else None
    own = start + _offset(words, lead, start)  # where the sentence itself begins, after its context
    modal = MODAL_ANCHOR.search(text[own:end])
    anchor = anchor_at if anchor_at is not None else own + (modal.start() if modal else 0)
    at = next((i for i, (s, _) in enumerate(words) if s >= anchor), 0)
    earliest = max(0, at + min(MIN_AFTER_MODAL, len(words) - at) - most)
    boundaries = [i for i in range(earliest, at + 1)
                  if i == 0 or text[words[i - 1][1] - 1] in _CLAUSE_END or "\n" in text[words[i - 1][1]:words[i][0]]]
    first = boundaries[0] if boundaries else max(0, at - 8)
    first = min(first, len(words) - most)
    last = first + most - 1
    if len(words) - 1 - last <= TAIL_SLACK:
        last = len(words) - 1
    # In a list ("... in any case where: (a) ...; (b) ..."), end where a point ends, never inside one or at
    # the next point's label: cut before the last label the span reaches, once it holds a first point.
    labels = [i for i in range(max(first, at) + 1, min(last + 2, len(words)))
              if "\n" in text[words[i - 1][1]:words[i][0]] and _POINT.match(text, words[i][0])]
    if len(labels) >= 2:
        last = labels[-1] - 1
    return words[first][0], words[last][1]


def _offset(words: list[tuple[int, int]], lead: int, start: int) -> int:
    """Characters from `start` to the first word after the `lead` prepended words."""
    return words[lead][0] - start if 0 < lead < len(words) else 0


_POINTER = re.compile(r"^\s*(?:such|these|those|this|that)\s+([a-z][\w-]{2,})", re.I)


def with_context(text: str, spans: list[Any], i: int, most: int = 3) -> tuple[int, int]:
    """Where a quote of `span` starts, and how many words before the sentence it takes: a sentence that
    leans on text before it is quoted from the sentence it points at, so the quote names what it speaks
    of: "Such reports must ..." from the nearest of the `most` sentences before it that mentions reports,
    "They must ..." from the sentence before. `i`: the sentence's index in `spans`."""
    span = spans[i]
    sentence = text[span.start:span.end]
    if i == 0 or not leans_on_context(sentence):
        return span.start, 0
    back = 1
    noun = _POINTER.match(sentence)
    if noun:
        stem = noun.group(1).lower()[:5]
        back = next((b for b in range(1, min(most, i) + 1)
                     if stem in text[spans[i - b].start:spans[i - b].end].lower()), 1)
    start = spans[i - back].start
    return start, len(text[start:span.start].split())


# A list point's label at a line start: "(a)", "a)", "(iv)", "1.", "(1)", "-", "*", "\u2022".
# ... and the levels stacked on it: "(a)(1)(i) Standard: ..."
_STACKED = r"(?:\([a-zA-Z\d]{1,4}\))+"
_STACK = re.compile(_STACKED)
# ... and a catalogue's lettered item, a single letter ("a. Disable accounts ..."; a short word that ends a hard-wrapped
# line's sentence, "law. The", is no label)
_POINT = re.compile(rf"(?:\(?[a-z]{{1,4}}\)|[a-z]\.|\(?\d{{1,3}}[.)]|\([A-Z]{{1,3}}\)|[-*\u2022\u25aa])"
                    rf"(?=\s|{_STACKED}\s)")
_LIST_LEAD_IN = (":", "\u2014", "\u2013", "-")  # "A firm must:", "Rules may make provision\u2014"


def with_list(text: str, spans: list[Any], i: int, most: int) -> int:
    """Where a quote of `span` ends: a sentence that introduces a list ("A firm must:", "Rules may make
    provision\u2014") runs on over the items that follow it, up to `most` words, so that the quote says what
    is required rather than that something is. `i`: the sentence's index in `spans`."""
    span = spans[i]
    if (not text[span.start:span.end].rstrip().endswith(_LIST_LEAD_IN) and not _opens_its_list(text, span)
            and not _leads_in_unpunctuated(text, spans, i)):
        return span.end
    end = span.end
    levels: set[str] = set()  # the kinds of label its points, and the lists nested in them, are numbered with
    _inner_levels(text, span, levels)  # the first point, where the lead-in holds it
    # A lead-in that is itself a point of a list ("-   POLACP042: ... MUST ... conduct an account audit to check:")
    # leads into the points indented under it; once they are, the next point of its own kind indented no deeper is
    # its sibling ("-   POLACP043: A user leaving MUST ..."), a requirement of its own, and ends the list. (Points
    # not indented under it, as flattened text sets them, run on as before.)
    own = _labels(text, span.start)
    own_kind, own_indent = (_kind(own[0], set()), _indent(text, span.start)) if own else (None, 0)
    nested = False  # a point indented under the lead-in was seen
    while i + 1 < len(spans) and len(text[span.start:end].split()) < most:
        if in_table_row(text, spans[i + 1].start):
            break  # a table's rows are quoted one by one with their header (agents.extract), not run on from here
        labels = _labels(text, spans[i + 1].start)
        if labels and own_kind is not None:
            indent = _indent(text, spans[i + 1].start)
            if nested and indent <= own_indent and _kind(labels[0], levels) == own_kind:
                break
            nested = nested or indent > own_indent
        if labels and spans[i] is not span and re.search(r"\w$", text[spans[i].start:spans[i].end].rstrip()):
            labels = []  # a line of wrapped text that opens with a number ("... added under section\n 7. This"),
            # after words that end no sentence or point: no point of any list (the lead-in's own first point aside)
        if labels is None and (levels or spans[i] is not span) and re.search(r"\n[ \t]*\n",
                                                                         text[spans[i].end:spans[i + 1].start]):
            break  # a paragraph after its points, or after the one paragraph it leads into: the list has ended
        if labels:
            kinds = [_kind(label, levels) for label in labels]
            # a point numbered as an outer level ("(b) Standard: ..." after "(iv) ...") ends the list; one of
            # another kind that opens its own list ("(A)", "(1)", "(i)") is nested in the point before it
            if levels and kinds[0] not in levels and labels[0] not in _FIRST_LABELS:
                break
            levels.update(kinds)
        i += 1
        end = spans[i].end
        _inner_levels(text, spans[i], levels)
    return end


# A point's label as lettered contract clauses number them too ("a. Customer will ...", "b)", "(ii)", "1.", "-")
_ANY_POINT = re.compile(r"\s*(?:\(?[a-zA-Z]{1,4}[.)]|\(?\d{1,3}[.)]|\([a-zA-Z\d]{1,4}\)|[-*\u2022\u25aa])\s")


def _opens_point(text: str, at: int) -> bool:
    """A list point opens a line at `at`."""
    return not text[text.rfind("\n", 0, at) + 1:at].strip(" \t") and _ANY_POINT.match(text, at) is not None


def _in_point(text: str, span: Any) -> bool:
    """The sentence `span` is a point of a list or goes on one on the point's own line ("(A) Security reminders
    (Addressable). Periodic security updates.": the second sentence is the point's too), unless it opens a list
    of its own ("(ii) Implementation specifications. Implement:" is the lead-in of "(A) ...")."""
    if _opens_point(text, span.start):
        return True
    line = text.rfind("\n", 0, span.start) + 1
    return (_opens_point(text, line + len(text[line:span.start]) - len(text[line:span.start].lstrip(" \t")))
            and not text[span.start:span.end].split("\n", 1)[0].rstrip().endswith(_LIST_LEAD_IN))


def lead_in_of(text: str, spans: list[Any], i: int, most: int) -> int | None:
    """The index of the lead-in whose list holds the point `spans[i]` ("Upon any expiration or termination:" over
    "b. Upon Customer's request, Provider will delete ..."), where it runs on over that point; None where the
    sentence opens no line with a list label or no lead-in before it runs on to it."""
    if not _opens_point(text, spans[i].start):
        return None
    k = i - 1
    while k >= 0 and _in_point(text, spans[k]):
        k -= 1
    if k < 0 or i - k > 12:
        return None
    return k if with_list(text, spans, k, most) >= spans[i].end else None


def opening_points(text: str) -> int:
    """How many sentences at the start of `text` are points of a list (a chunk that opens inside a list whose
    lead-in the chunk before holds: "(e) approve and periodically review ...;"). Pure."""
    spans = split_sentences(text)
    n = 0
    while n < len(spans) and _in_point(text, spans[n]):
        n += 1
    return n


def opens_with_point(text: str) -> bool:
    """`text` opens with a point of a list (`opening_points` is not 0), read without splitting it into sentences.
    Pure."""
    return _opens_point(text, len(text) - len(text.lstrip()))


def open_lead_in(before: str, after: str) -> str | None:
    """The lead-in of a list still open where `before` ends ("The management body ... shall:" over "(a) ..." to
    "(d) ...;") and whose points go on in `after`, the text that follows it: the last sentence that does not open
    with a point, up to its first point, where it ends with a colon or a dash or stops where no sentence ends
    ("... policy requires that", `UNFINISHED`), and either `before` ends with it unfinished or its last sentence is
    a point numbered as the one `after` opens with ("(d)" then "(e)", not "(4)" then "(b)", a new paragraph).
    None where `before` does not end inside that list. Pure."""
    spans = split_sentences(before)
    k = len(spans) - 1
    while k >= 0 and _in_point(before, spans[k]):
        k -= 1
    if k < 0 or k == len(spans) - 1 and before.rstrip().endswith((".", "?", "!")):  # a list held in the last
        return None  # sentence, ended with it
    start, end = spans[k].start, spans[k].end
    points = [start + m.end() for m in re.finditer(r"\n[ \t]*", before[start:])
              if _opens_point(before, start + m.end())]
    first = next((p for p in points if p < end), end)
    lead = before[start:first].rstrip()
    if not lead.endswith(_LIST_LEAD_IN) and UNFINISHED.search(lead) is None:
        return None
    opening = _labels(after, len(after) - len(after.lstrip()))
    if points and opening:
        levels: set[str] = set()
        kinds = {_kind(labels[0], levels) for p in points if (labels := _labels(before, p))}
        if _kind(opening[0], kinds) not in kinds:
            return None
    return lead


def _inner_levels(text: str, span: Any, levels: set[str]) -> None:
    """Add to `levels` the kinds of label of the points that open a line inside `span` (a lead-in that holds its
    first point: "Implementation specifications:\n(A) Risk analysis ...")."""
    for line in re.finditer(r"\n[ \t]*", text[span.start:span.end]):
        levels.update(_kind(label, levels) for label in _labels(text, span.start + line.end()) or ())


_ROMAN = re.compile(r"(?=[ivx]+$)x{0,3}(?:ix|iv|v?i{0,3})$")
_FIRST_LABELS = FIRST_LABELS | frozenset(("-", "*", "\u2022", "\u25aa"))  # and the bullets, each its own first


def _indent(text: str, at: int) -> int:
    """The width of the blanks that open the line `at` stands on, up to `at` (a tab counts four). Pure."""
    head = text[text.rfind("\n", 0, at) + 1:at]
    blanks = head[:len(head) - len(head.lstrip(" \t"))]
    return len(blanks.replace("\t", "    "))


def _labels(text: str, at: int) -> list[str] | None:
    """The labels of a list point that opens a line at `at` ("(1)(i)" -> ["1", "i"]); None where none does."""
    if text[text.rfind("\n", 0, at) + 1:at].strip(" \t"):  # words before it on its line
        return None
    while text[at:at + 1] in (" ", "\t"):
        at += 1
    found = _POINT.match(text, at)
    if found is None:
        return None
    stacked = _STACK.match(text, found.end())
    return re.findall(r"[A-Za-z]+|\d+|[-*\u2022\u25aa]", found.group(0) + (stacked.group(0) if stacked else ""))


def _kind(label: str, levels: set[str]) -> str:
    """How a label numbers: digits, roman numerals, lower or upper letters, bullets. "v" and "x" are letters in a
    lettered list that has no roman level ("(u)", "(v)"); "i" is a roman numeral either way (as the first point of a
    nested list it ends no list, and as a letter it continues its own, whose kind stays among `levels`)."""
    if label.isdigit():
        return "digit"
    if not label.isalpha():
        return "bullet"
    if label.isupper():
        return "upper"
    if _ROMAN.match(label) and not (label in ("v", "x") and "lower" in levels and "roman" not in levels):
        return "roman"
    return "lower"


def _opens_its_list(text: str, span: Any) -> bool:
    """The sentence is a lead-in and the first point of its list, which ends it ("Implement:\n(A) Security
    reminders (Addressable)." before "(B) ...")."""
    lead = re.search(r"[:\u2014]\s*\n[ \t]*", text[span.start:span.end])
    return lead is not None and _POINT.match(text, span.start + lead.end()) is not None


# What a lead-in with no colon says before its points ("Employees must do the following", "The licensee shall"):
# a modal verb, or words that announce a list.
_ANNOUNCES = re.compile(r"\b(?:must|shall|should|may|will|need\s+to|required\s+to|following|as\s+follows|"
                        r"includes?|including)\b", re.I)


def _leads_in_unpunctuated(text: str, spans: list[Any], i: int) -> bool:
    """The sentence introduces a list though it ends with no colon: it ends with a word, announces something
    (`_ANNOUNCES`) or stops where no sentence ends (`UNFINISHED`), and the next sentence opens a line with a list's
    first point ("- ...", "1.", "(a)")."""
    span = spans[i]
    sentence = text[span.start:span.end]
    if i + 1 >= len(spans) or not re.search(r"\w$", sentence.rstrip()) or sentence.lstrip().startswith("#"):
        return False
    if "\n" not in text[span.end:spans[i + 1].start]:  # the points open lines of their own
        return False
    labels = _labels(text, spans[i + 1].start) or []
    return bool(labels) and labels[0] in _FIRST_LABELS and (_ANNOUNCES.search(sentence) is not None or (
        UNFINISHED.search(sentence) is not None and not _opens_point(text, span.start)))


def opening_list(quote: str, ends: tuple[str, ...] = (":", "\u2014")) -> tuple[int, list[tuple[int, int]]] | None:
    """A quote that opens with a list's lead-in ("A firm must:" over its points; the lead-in ending with one of
    `ends`): the lead-in's end, before the line break its first point opens, and the points' spans; None for any
    other quote. Pure."""
    points = points_after(quote, 0, len(quote), most=50)
    lead_end = len(quote[:points[0][0]].rstrip()) if points else 0
    return (lead_end, points) if points and quote[:lead_end].endswith(ends) else None


def points_after(text: str, after: int, end: int, most: int = 8) -> list[tuple[int, int]]:
    """The list points that open a line between `after` and `end`, each up to the next (ends trimmed)."""
    starts = [after + m.end() for m in re.finditer(r"\n[ \t]*", text[after:end]) if _POINT.match(text, after + m.end())]
    bounds = [*starts, end]
    return [(a, a + len(text[a:b].rstrip())) for a, b in zip(bounds, bounds[1:], strict=False)][:most]


def _normalized_with_positions(text: str) -> tuple[str, list[int]]:
    """The whitespace-normalized text and, for each of its characters, its offset in `text`."""
    chars: list[str] = []
    positions: list[int] = []
    for word in re.finditer(r"\S+", text):
        if chars:
            chars.append(" ")
            positions.append(word.start() - 1)
        chars.extend(word.group(0))
        positions.extend(range(word.start(), word.end()))
    return "".join(chars), positions


def locate(chunk_text: str, quote: str) -> tuple[int, int] | None:
    """Offsets of `quote` in `chunk_text`, matched after whitespace normalization only; None if absent.

    The match must start and end at word boundaries: a fragment of a word is not a quote.
    """
    target = normalize_ws(quote)
    if not target:
        return None
    normalized, positions = _normalized_with_positions(chunk_text)
    at = normalized.find(target)
    while at >= 0:
        start, end = positions[at], positions[at + len(target) - 1] + 1
        if (start == 0 or not chunk_text[start - 1].isalnum()) and (
                end == len(chunk_text) or not chunk_text[end].isalnum()):
            return start, end
        at = normalized.find(target, at + 1)
    return None
