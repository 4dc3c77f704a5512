"""Compose: an answer made only of verified requirements; every statement cites REQ-IDs.

Rules backend: extractive, one short section per part of the question. Each part opens with a
direct answer (the answering words of its best requirement, verbatim: "Not later than 72 hours
after having become aware of it [REQ-S001]."), then the conflicts, then the supporting
requirements as quotes. Two requirements conflict only when they impose the same duty (same verb
family, same object, same recipient where named) with different figures or opposite force: two
retention periods for the same records, never a 4-hour internal report against a 72-hour
notification; or when a law and a policy give different times in answer to a part that asks only
for one. A part with no verified requirement says so while the others are answered.
"""

from __future__ import annotations

import re
from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.asks import (
    asks_exemption,
    asks_how_often,
    asks_party,
    asks_policy,
    asks_scope,
    asks_time,
    states_frequency,
    states_scope,
    states_what_is_asked,
)
from agents.duties import (
    answers_apart,
    asked_family,
    conflicting_figures,
    figures,
    kind,
    kinds_held,
    other_bearers,
    other_kinds,
    same_duty,
    same_matter,
    states_family,
)
from agents.extract import Requirement
from agents.modality import DUTIES, Modality, classify_modality, exempts
from agents.parts import broad_topic
from agents.provisions import asked_provisions, asks_all, provision_parts
from agents.quotes import opening_list, points_after
from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within
from agents.state import EvidenceState
from engine.config import AnswerSettings
from engine.ingest.citations import own_section
from engine.ingest.language import answer_language, language_name
from engine.ingest.sentences import split_sentences
from engine.terms import key_terms, key_words, tokenize
from engine.text import DATE_PHRASE, LEADING_LABELS, PERIOD, normalize_ws, read_pairs, table_pairs

if TYPE_CHECKING:
    from agents.deps import Deps

# A bound of the llm reply schema (skills/compose.md), not a tunable of the answer: AnswerSettings has those.
MAX_STATEMENTS = 8
_ANSWER = AnswerSettings()  # the defaults; a run passes its settings' group

class Statement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    requirement_ids: list[str] = Field(description="REQ-IDs the statement rests on")
    part: int = Field(default=0, description="The part of the question it answers (0-based)")
    kind: Literal["direct", "conflict", "supporting"] = Field(
        default="supporting", description="direct: the one-sentence answer; conflict: sources that differ")


class Conflict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement_ids: list[str]
    reason: str
    part: int = 0


class PartAnswer(BaseModel):
    """One part of the question, answered in its own short section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    question: str
    requirement_ids: list[str] = Field(default_factory=list, description="Verified REQ-IDs this part cites")
    missing_evidence: list[str] = Field(default_factory=list)


class ComposedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statements: list[Statement]
    conflicts: list[Conflict] = Field(default_factory=list)
    unused_requirement_ids: list[str] = Field(default_factory=list)
    composer: Literal["rules", "llm"] = "rules"
    attempt: int = Field(default=1, description="2 for the revision after a failed review")
    parts: list[PartAnswer] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The answer; a question of several parts gets one short section per part."""
        if len(self.parts) <= 1:
            return "\n".join(s.text for s in self.statements)
        lines = []
        for part in self.parts:
            lines.append(f"({part.index + 1}) {part.question}")
            mine = [s.text for s in self.statements if s.part == part.index]
            lines.extend(mine or [f"No authoritative evidence for this part: {'; '.join(part.missing_evidence)}"])
        return "\n".join(lines)


# A document that is one provision of a larger act, its title the act's name and the provision's number ("FAR 33.103
# Protests to the agency.", "HIPAA § 164.308 ...") or the number alone, as the provision heads itself ("33.103
# Protests to the agency."): not a version ("Standard Terms Version 2.1") nor a year-numbered act ("Regulation (EU)
# 2022/2554"), nor a title that opens with a code's title number ("45 CFR Part 164 ...").
_PROVISION_TITLE = re.compile(r"^\s*(?:([A-Za-z][\w&'-]*(?:\s+(?!(?:version|v|release|edition|revision|rev)\b)"
                              r"[A-Za-z(][\w&'()-]*){0,5}?)\s+)?(?:§+\s*)?\d+(?:[.-]\d+)+(?![\w/])", re.IGNORECASE)


def act_of(title: str) -> str | None:
    """The act a document is one provision of, by its title ("far" of "FAR 32.904 Determining payment due dates.",
    "" of "32.904 Determining payment due dates.": an act it does not name), or None. Pure."""
    found = _PROVISION_TITLE.match(title)
    return (found.group(1) or "").lower() if found else None


def find_conflicts(verified: list[Requirement], part_of: dict[str, int] | None = None, *,
                   overlap: float = _ANSWER.same_duty_overlap, questions: list[str] | None = None) -> list[Conflict]:
    """Pairs of requirements of different documents (not two provisions of one act, `act_of`), in the same part,
    that impose the same duty with different figures (two retention periods for the same records), or opposite
    force; and, where the part's
    question (`questions`, by part) asks only for a time, a law's and a policy's different answers to it.
    `overlap`: see `AnswerSettings.same_duty_overlap`."""
    part_of = part_of or {}
    kinds = {r.requirement_id: kind(r.exact_quote) for r in verified}
    held = kinds_held([(r.document_id, kinds[r.requirement_id]) for r in verified])
    out = []
    for a, b in combinations(verified, 2):
        part = part_of.get(a.requirement_id, 0)
        ka, kb = kinds[a.requirement_id], kinds[b.requirement_id]
        if (a.document_id == b.document_id or part != part_of.get(b.requirement_id, 0)
                or other_kinds(ka, kb, held[a.document_id], held[b.document_id])):
            continue
        if a.requirement_id[4] == b.requirement_id[4] and other_bearers(a.exact_quote, b.exact_quote):
            continue  # two laws (or two policies) binding two parties: two rules, however their figures differ
        if (a.requirement_id[4] == b.requirement_id[4] and (act := act_of(a.document_title)) is not None
                and act == act_of(b.document_title)):
            continue  # two provisions of one act, each a file of its own (FAR 33.103, FAR 33.104): two rules
        differ = conflicting_figures(a.exact_quote, b.exact_quote, overlap, same_question=True) or answers_apart(
            a.exact_quote, b.exact_quote, questions[part] if questions and part < len(questions) else None,
            families_differ=a.requirement_id[4] != b.requirement_id[4])
        opposite = {a.modality, b.modality} == DUTIES and same_duty(
            a.exact_quote, b.exact_quote, overlap)
        if differ or opposite:
            first, second = sorted((a, b), key=lambda r: (r.requirement_id[4] != "S", r.requirement_id))
            f1, f2 = figures(first.exact_quote), figures(second.exact_quote)
            why = f"{', '.join(sorted(f1))} vs {', '.join(sorted(f2))}" if differ else "opposite force"
            out.append(Conflict(requirement_ids=[first.requirement_id, second.requirement_id], reason=why,
                                part=part_of.get(a.requirement_id, 0)))
    return out


def _where(req: Requirement) -> str:
    section = own_section(req.section_path, req.document_title)  # "Debug", not "Debug (section Debug)"
    if section and re.match(r"(?:Article|Recitals?|Preamble|Annex|Schedule|Appendix|Part|Chapter|Title|Subpart|"
                            r"Section|Rule|§)(?:\s|$)", section):  # names itself: "Article 33 Notification ..."
        return f"{req.document_title} ({section})"
    return f"{req.document_title}" + (f" (section {section})" if section else "")


_DECIDING = re.compile(r"must|shall|may|should|cannot|will")
# A direct answer is its quote's clause whole up to this many words (about the longest legal sentence's main
# clause), so that it keeps the condition it is under and never opens or stops inside a sentence; a longer one is
# cut around what answers. Until 0.6.5 the bound was 45, and a 54-word sentence gave "Shall terminate"; until
# 0.6.11 a time question's answer was the words from its period on ("15 years" of "... shall be retained until
# the discharge of the applicable supervisory duties and in any case for a maximum period of 15 years, except in
# the event of pending court proceedings ..."), which dropped the condition and the party.
WHOLE_CLAUSE = 90
_WHEN = re.compile(r"^\W*when\b", re.IGNORECASE)


_LABEL_LINE = re.compile(r"^\s*[A-Z][\w-]*(?:\s+[A-Za-z][\w-]*)?:[ \t]*\n\s*(?=\S)")


# The bullet of plain-text specifications that opens a quote, a lower-case "o" and two blanks ("o  The HTTP request
# method is ...": RFCs), which whitespace normalised would leave a word ("O The HTTP request method ...")
_BULLET_O = re.compile(r"^\s*o[ \t]{2,}(?=\S)")


def _unlabelled(span: str) -> str:
    """`span` without the list labels it opens with ("(c) Security logs shall be reviewed ..." -> "Security logs
    shall be reviewed ..."): in a direct answer the label places nothing (its citation does), and the rest is
    verbatim still. A word that looks like a label ("No.", "Art.") stays: only a single letter, a roman numeral,
    a number or a bullet is one. Pure."""
    label = LEADING_LABELS.match(span)
    letters = re.sub(r"[^A-Za-z]", "", label.group(0)) if label else ""
    if not label or not span[label.end():] or len(letters) > 1 and not re.fullmatch(r"[ivxl]+", letters, re.I):
        return span
    return span[label.end():]


def direct_span(question: str, quote: str, max_words: int = _ANSWER.direct_max_words) -> str:
    """The words of `quote` that answer `question` directly, verbatim: its first clause (up to a ";"), or for a
    question that asks a time ("how long", "how often", "by when", "When must ...") the clause that states its
    first period, whole up to `WHOLE_CLAUSE` words, with the condition it is under; a longer one of several
    sentences (a list and its points) is the sentence that states the period (for any other question, the one that
    holds the most of its key terms), and a longer sentence is cut around what answers (the period, else a date,
    else the deciding verb), opening and ending where a clause does; without the list label it opens with. A
    quote that opens with a list's lead-in is its lead-in and the point that answers where a later point answers
    better than the first (`_led_point`); a table row quoted without its header, the cell that states the
    requirement (`_row_cell`). Pure."""
    quote = _row_cell(question, quote)
    quote = _BULLET_O.sub("", quote, count=1)
    # A list that opens the quote ("This Regulation does not apply to:" over "(a) managers of ...;" to "(e)
    # insurance ... intermediaries which are ... small ...;"): its lead-in with the point that answers, where a
    # later point answers better than the first
    points = points_after(quote, 0, len(quote), most=50)
    lead_end = len(quote[:points[0][0]].rstrip()) if points else 0  # before the line break its first point opens
    if points and quote[:lead_end].endswith((":", "\u2014")):
        if (led := _led_point(question, quote, 0, lead_end, later_only=True)) is not None:
            return led
        # where no point answers more than the others (none holds a word of the question its lead-in lacks, nor the
        # time it asks), the whole list, if short: the lead-in with its first point would end at that point's ";"
        # and drop the rest ("shall designate an officer in any case where: (a) ...; or (b) ...": one of two
        # conditions read as the only one)
        asked = set(key_terms(question)) - set(key_terms(quote[:lead_end]))
        if not any(asked & set(key_terms(quote[a:b])) or _timed(question) and _states_asked_time(question, quote[a:b])
                   for a, b in points) and len((whole := normalize_ws(quote).rstrip(".;: ")).split()) <= WHOLE_CLAUSE:
            return _unlabelled(whole)
    # A label of a word or two on its own line over one duty, not a list ("Control:" over "Disable visitor badges
    # at the end of each day."): the duty is the answer, and its citation says what it is
    if not points and (label := _LABEL_LINE.match(quote)) and classify_modality(quote[label.end():]) in DUTIES:
        quote = quote[label.end():]
    text = normalize_ws(quote).rstrip(".;: ")
    if len(_clause(question, text).split()) <= WHOLE_CLAUSE or len(sentences := split_sentences(quote)) < 2:
        return _unlabelled(_span(question, text, max_words))
    # A clause over `WHOLE_CLAUSE` words made of several sentences (a list's lead-in, its points and their
    # points: "The onboarding process should include ...: 1. Training. * ... * The training and acceptance must
    # be completed within 30 days of employment. 2. Access. ..."): the sentence that answers, whole, where the cut
    # below would open inside it ("30 days of employment. 2. Access. ..."): for a time question the first that
    # states a period, else the first that holds the most of the question's key terms (of those, one that states a
    # requirement: "Implement policies and procedures ..." rather than its title "Standard: Security management"),
    # and where that is a list's lead-in, with the point that answers (`_led_point`).
    own = [normalize_ws(quote[s.start:s.end]).rstrip(".;: ") for s in sentences]
    if _timed(question):
        return _unlabelled(_span(question, next((o for o in own if PERIOD.search(o)), text), max_words))
    asked = set(key_terms(question))
    held = [(len(asked & set(key_terms(o))), classify_modality(o) is not Modality.NONE) for o in own]
    best = max(held)
    chosen = own[held.index(best)] if best[0] else text
    sentence = sentences[held.index(best)] if best[0] else None
    if sentence is not None and quote[sentence.start:sentence.end].rstrip().endswith((":", "\u2014")) and (
            led := _led_point(question, quote, sentence.start, sentence.end)) is not None:  # with its point
        return led
    return _unlabelled(_span(question, chosen, max_words))


def _led_point(question: str, quote: str, start: int, end: int, *, later_only: bool = False) -> str | None:
    """A list's lead-in (`quote[start:end]`, ending with a colon or a dash) with the point under it that answers:
    for a time question one that states the kind of time asked (`_states_asked_time`), else the one that holds the
    most of the question's key terms the lead-in lacks, the points between elided ("Systems have a ... plan that
    covers the following: \u2026 how to report cyber security incidents, ..."), both verbatim; the point alone under a
    lead-in that only labels points which are requirements on their own ("Control:"). None where no point holds
    such a term, the two run over `WHOLE_CLAUSE` words, or (`later_only`) the first point answers best; of a
    point of several sentences, its sentence that answers. Pure."""
    points = points_after(quote, end, len(quote), most=50)
    opening = _unlabelled(normalize_ws(quote[start:end]))
    asked = set(key_terms(question)) - set(key_terms(opening))
    timed = _timed(question)
    held = [(timed and _states_asked_time(question, quote[a:b]), len(asked & set(key_terms(quote[a:b]))))
            for a, b in points]
    label = len(opening.split()) <= 2
    if not held or not max(held)[1] and not (label and classify_modality(quote[points[0][0]:points[0][1]])
                                             in DUTIES):
        return None
    best = held.index(max(held))  # the first where none holds an asked term: under a label, the first requirement
    point = _point_words(quote, *points[best])
    if len(sentences := [point[a:b] for a, b in split_sentences(point)]) > 1:
        # a point of several sentences ("(iii) Updates (Required). Review documentation periodically, ..."): its
        # sentence that answers, as the point is chosen
        point = max(sentences, key=lambda t: (timed and _states_asked_time(question, t),
                                              len(asked & set(key_terms(t))))).rstrip(".;, ")
    # a lead-in of a word or two over points that are requirements on their own ("Control:" over "a. Inspect fire
    # extinguishers ...") only labels them: the point is the answer (not "Implement:" over "(A) Procedures for ...")
    if label and classify_modality(point) is not Modality.NONE:
        return point
    if later_only and best == 0:
        return None
    if len(f"{opening} {point}".split()) > WHOLE_CLAUSE:
        return None
    return _led_by(opening, point, best)


def _point_words(quote: str, start: int, end: int) -> str:
    """A list point's own words, without its label and without the "; and" that joins it to the next. Pure."""
    return re.sub(r"[;,]\s*(?:and|or)$", "", _unlabelled(normalize_ws(quote[start:end])).rstrip(".;, "))


def _led_by(opening: str, point: str, index: int) -> str:
    """A point under its lead-in, the points before it elided. Pure."""
    return f"{opening} {point}" if index == 0 else f"{opening} {ELLIPSIS} {point}"


def _states_asked_time(question: str, text: str) -> bool:
    """`text` states the kind of time a time question asks: how often, a frequency (a catalogue's "[Assignment:
    organization-defined frequency]" too, not "within 30 days"); any other, a period. Pure."""
    return states_frequency(text) if asks_how_often(question) else PERIOD.search(text) is not None


def _row_cell(question: str, quote: str) -> str:
    """A pipe-table row quoted without its header (a standard's requirement rows, each opening with its id: "| 2.4.1
    | Verify that passwords are stored ... | \u2713 | 916 |"): the cell that states the requirement, verbatim (the
    first that reads as one, else the longest), unless the question asks a time that only other cells state (a
    level's "30 days", "12 hours or 30 minutes of inactivity": the row as it is, whose cells hold the answer);
    any other quote as it is. Pure."""
    line = quote.strip()
    if "\n" in line or not (line.startswith("|") and line.endswith("|")):
        return quote
    cells = [c.strip() for c in line[1:-1].split("|") if c.strip()]
    if not cells:
        return quote
    cell = next((c for c in cells if classify_modality(c) is not Modality.NONE), max(cells, key=len))
    return quote if _timed(question) and not PERIOD.search(cell) and PERIOD.search(line) else cell


_DATE = re.compile(DATE_PHRASE, re.IGNORECASE)
_ITEM_OPENING = re.compile(r"\((?:[A-Z]{2,}|\d+)\)|\d")


# A ";" that ends a clause: not one inside square brackets or parentheses ("Review accounts [Selection (one or more):
# daily; weekly] for compliance" is one clause)
_SEMICOLON_OUTSIDE_BRACKETS = re.compile(r";(?![^\[\]]*\])(?![^()]*\))")


def _clause(question: str, text: str) -> str:
    """The clause of `text` (up to a ";", not one inside brackets: a catalogue's "[Selection: daily; weekly]") that
    answers `question`: the first, or for a time question the first that states a period. Pure."""
    clauses = [c.strip() for c in _SEMICOLON_OUTSIDE_BRACKETS.split(text) if c.strip()] or [text]
    return next((c for c in clauses if PERIOD.search(c)), clauses[0]) if _timed(question) else clauses[0]


def _timed(question: str) -> bool:
    """The question asks a time ("how long", "by when", "When must ..."): its answer is the clause that states one."""
    return asks_time(question) or bool(_WHEN.match(question))


def _span(question: str, text: str, max_words: int) -> str:
    """`direct_span` of a normalised quote, its label and all."""
    clause = _clause(question, text)
    timed = _timed(question)
    words = clause.split()
    if len(words) <= WHOLE_CLAUSE:
        return " ".join(words)
    most = max(max_words, 30)
    # A long clause keeps what answers (its period; else its deciding verb and what follows it: "... for that Work
    # shall terminate as of the date such litigation is filed"), opening and ending where a clause does.
    period = (PERIOD.search(clause) or _DATE.search(clause)) if timed else None  # "prior to 28 March 2007"
    if period is not None:
        first, last = len(clause[:period.start()].split()), len(clause[:period.end()].split()) - 1
    else:
        first = next((i for i, w in enumerate(words) if _DECIDING.fullmatch(w.strip(",()").lower())), 0)
        last = first + 5
    # ... not inside a list of names or numbers ("Regulations (EU) No 1093/2010, (EU) No 1094/2010 and ..."): a
    # clause does not open with a parenthesised abbreviation or a figure
    opens = [0] + [i + 1 for i, w in enumerate(words[:first]) if w.endswith((",", ":"))
                   and not _ITEM_OPENING.match(words[i + 1])]
    start = next((i for i in opens if first - i <= most - 12), first)
    ends = [i + 1 for i, w in enumerate(words) if i > last and w.endswith((",", ":"))]
    end = next((i for i in reversed(ends) if i - start <= most + 15), ends[0] if ends else len(words))
    return " ".join(words[start:end]).rstrip(",:")


def table_answer(question: str, header: str, row: str) -> str:
    """A table row's answer to `question`, read under its header: the row's first cell (what it is about), then the
    cells the question names by their header or value or that state the time or amount it asks for
    ("Sev Rating: P0; SLA: 3 days"); every cell when it names none. Pure."""
    asked = set(key_terms(question))
    pairs = table_pairs(header, row)
    if not pairs:
        return normalize_ws(row)
    named = [(h, c) for h, c in pairs[1:] if asked & set(key_terms(f"{h} {c}")) or states_what_is_asked([question], c)]
    # a header with no letter ("#") names nothing: "2.3.1; Description: Verify ...", not "#: 2.3.1; ..."
    return read_pairs([(h if re.search(r"[^\W\d_]", h) else "", c) for h, c in [pairs[0], *(named or pairs[1:])]])


ELLIPSIS = "\u2026"
_BOUNDS = (".", ";", ":", "!", "?", "|")  # a sentence's end, or a table cell's
# a list label before a span ("(a) ", "(1)(i) ", "* ") opens a sentence too
# and a plain-text specification's "o" bullet after a lead-in or a point ("... are met: o ", normalised)
_LABEL_BEFORE = re.compile(r"(?:^|\s)(?:(?:\(?[a-z\d]{1,4}[.)])+|[-*\u2022\u25aa])$|(?:^|[.:;]\s)(?-i:o)$",
                           re.IGNORECASE)


def cut_inside(span: str, quote: str) -> tuple[bool, bool] | None:
    """Whether `span`, words of `quote` (whitespace normalised), opens and whether it ends inside a sentence or a
    table cell of the quote; None where the quote does not hold it. Pure."""
    text = normalize_ws(quote)
    at = text.lower().find(span.lower()) if span else -1
    if at < 0:
        return None
    before, after = text[:at].rstrip(), text[at + len(span):].lstrip()
    return (bool(before) and not before.endswith(_BOUNDS) and not _LABEL_BEFORE.search(before),
            bool(after) and not after.startswith(_BOUNDS))


def excerpted(span: str, quote: str, shown: str | None = None) -> str:
    """`shown` (default `span`, a span of `quote` as `direct_span` gives it, perhaps recased) marked "\u2026" where
    the span opens or ends inside a sentence of the quote (`cut_inside`: a clause of a long sentence, "\u2026
    accompanied by a written offer, valid for at least three years ... for that product model \u2026"), as a
    quotation marks what it leaves out. Pure."""
    shown = span if shown is None else shown
    opens, ends = cut_inside(span, quote) or (False, False)
    return f"{ELLIPSIS + ' ' if opens else ''}{shown}{' ' + ELLIPSIS if ends else ''}"


def _direct(question: str, req: Requirement, part: int, max_words: int) -> Statement:
    if req.table_header:
        return Statement(text=f"{table_answer(question, req.table_header, req.exact_quote)} [{req.requirement_id}].",
                         requirement_ids=[req.requirement_id], part=part, kind="direct")
    span = direct_span(question, req.exact_quote, max_words)
    text = excerpted(span, req.exact_quote)
    text = text if text.startswith(ELLIPSIS) else f"{text[:1].upper()}{text[1:]}"  # "\u2026 a physical product"
    return Statement(text=f"{text} [{req.requirement_id}].", requirement_ids=[req.requirement_id], part=part,
                     kind="direct")


_OPENING = re.compile(r"^(?:The|A|An|In|On|At|By|Upon|Before|After|Unless|Until|Once|Under|During|Where|When|If|"
                      r"Any|Each|Every|All|This|These|Such|No|Within|For)\b")


def _inside(span: str) -> str:
    """A span set inside a sentence: its opening function word in lower case ("while the Data Protection
    Officer must ..."), and an opening common word the span writes in lower case elsewhere ("while transaction
    records must be kept for five years from the date of the transaction"); names, defined terms and acronyms as
    they are ("while Customer will ..."). Pure."""
    first = span.split(" ", 1)[0]
    common = first[:1].isupper() and not first.isupper() and bool(
        re.search(rf"\b{re.escape(first.lower())}\b", span[len(first):]))
    return span[:1].lower() + span[1:] if _OPENING.match(span) or common else span


def _differing_point(quote: str, other: str) -> str | None:
    """Of a list quote, its lead-in with the point that differs from `other` ("password configurations are set to
    require: * a minimum length of 12 characters" beside "not less than 14 characters"), the points between elided;
    None for a quote that is no list, or where no one point differs alone. Pure."""
    listed = opening_list(quote)
    if listed is None or len(listed[1]) < 2:
        return None
    lead_end, points = listed
    differs = [i for i, (start, end) in enumerate(points)
               if conflicting_figures(f"{quote[:lead_end]}\n{quote[start:end]}", other, same_question=True)]
    if len(differs) != 1:
        return None
    opening = _unlabelled(normalize_ws(quote[:lead_end]))
    point = _point_words(quote, *points[differs[0]])
    if len(sentences := [point[a:b] for a, b in split_sentences(point)]) > 1:
        # a point of several sentences ("(i) Time limit (Required). Retain the documentation ... for 6 years"): its
        # sentence that differs
        point = next((t for t in sentences if conflicting_figures(t, other, same_question=True)), point).rstrip(".;, ")
    if len(opening.split()) <= 2:  # a lead-in that only labels its points ("Implementation specifications:")
        return point
    return _led_by(opening, point, differs[0])


def _direct_conflict(question: str, conflict: Conflict, by_id: dict[str, Requirement], max_words: int) -> Statement:
    """The direct answer when the sources differ: both answers, each with its ID."""
    a, b = (by_id[i] for i in conflict.requirement_ids)
    first, second = (excerpted(span, r.exact_quote, _inside(span))
                     for r, other in ((a, b), (b, a))
                     for span in [_differing_point(r.exact_quote, other.exact_quote)
                                  or direct_span(question, r.exact_quote, max_words)])
    return Statement(text=f"The sources differ: {first} [{a.requirement_id}], while {second} [{b.requirement_id}].",
                     requirement_ids=[a.requirement_id, b.requirement_id], part=conflict.part, kind="direct")


def _conflict_statement(conflict: Conflict, by_id: dict[str, Requirement]) -> Statement:
    a, b = (by_id[i] for i in conflict.requirement_ids)
    return Statement(
        text=f'The sources differ ({conflict.reason}): {_where(a)} states "{normalize_ws(a.exact_quote)}" '
             f'[{a.requirement_id}], while {_where(b)} states "{normalize_ws(b.exact_quote)}" '
             f"[{b.requirement_id}].", requirement_ids=[a.requirement_id, b.requirement_id], part=conflict.part,
        kind="conflict")


def _order(r: Requirement, *, broad: bool, scores: dict[str, float], often: bool = False,
           who: frozenset[str] = frozenset(), action: str | None = None, exemption: bool = False,
           scope: bool = False) -> tuple[bool, bool, bool, bool, bool, bool, int, float, str]:
    """Binding text first; for a broad question the law's before the policies' (REQ-S before REQ-P); for a
    question that asks how often, a quote that says how often before one that only sets a deadline ("review
    access rights every quarter" before "revoke access within 24 hours"); for one that names the action it asks
    about (`action`, agents.duties.asked_family), a quote of that action ("How quickly must complaints be
    acknowledged?" is answered by "... acknowledge a complaint in writing within five business days ...", not by
    "... procedures for the prompt handling of client complaints"); for one that asks when a duty does not apply
    (`exemption`), a quote that frees someone from it; for one that asks whom a text applies to (`scope`), a
    quote that says so; for one that asks who, the quote that
    holds more of its terms (`who`: "Who must approve shared accounts?" is answered by "... approved in writing by
    the Chief Information Security Officer", not by "System owners must review user access rights ...", each
    naming someone); then by score."""
    return (not r.binding, broad and r.requirement_id[4] != "S", often and not states_frequency(r.exact_quote),
            action is not None and not states_family(r.exact_quote, action), exemption and not exempts(r.exact_quote),
            scope and not states_scope(r.exact_quote),
            -len(who & set(key_terms(r.exact_quote))) if who else 0, -scores.get(r.requirement_id, 0.0),
            r.requirement_id)


def _with_the_quote_before(quotes: list[Requirement], scores: dict[str, float]) -> dict[str, float]:
    """Each quote scored at least as the quote just before it in its passage (of `quotes`, not overlapping it):
    what follows a duty in a rule spells it out ("Implement a security awareness and training program ..." then
    "Implement: (A) Security reminders ... (D) Password management"), so a broad answer, which cites its best
    quotes up to a cap, keeps the two together. One step only: a quote lends its own score, not one it was lent."""
    out = dict(scores)
    by_chunk: dict[str, list[Requirement]] = {}
    for r in quotes:
        by_chunk.setdefault(r.chunk_id, []).append(r)
    for mine in by_chunk.values():
        mine.sort(key=lambda r: (r.char_start, r.char_end))
        for before, r in zip(mine, mine[1:], strict=False):
            if r.char_start >= before.char_end:
                out[r.requirement_id] = max(scores.get(r.requirement_id, 0.0), scores.get(before.requirement_id, 0.0))
    return out


def _passages_together(quotes: list[Requirement]) -> list[Requirement]:
    """A broad answer's quotes after its lead in their order, but each passage's quotes together, in the order
    its text states them, where the first of them stands: a list's points read "(e) ...", "(f) ...", not
    "(h) ...", "(g) ..." as their scores fell. Which quotes are cited does not change. Pure."""
    by_chunk: dict[str, list[Requirement]] = {}
    for r in quotes:
        by_chunk.setdefault(r.chunk_id, []).append(r)
    out: list[Requirement] = []
    for r in quotes:
        if r.chunk_id in by_chunk:
            out.extend(sorted(by_chunk.pop(r.chunk_id), key=lambda q: (q.char_start, q.char_end)))
    return out


def compose_rules(verified: list[Requirement], *, parts: list[str] | None = None,
                  part_of: dict[str, int] | None = None, scores: dict[str, float] | None = None,
                  limits: AnswerSettings = _ANSWER, also: dict[str, list[int]] | None = None,
                  provisions: frozenset[int] | None = None) -> ComposedAnswer:
    """Deterministic extractive answer: per part, a direct answer (the best requirement's answering
    words), the conflicts, then the supporting requirements as quotes. Every statement cites.
    `limits`: the run's `Settings.answer`. `also`: the later parts a requirement cited for its own part answers
    too (one list whose points answer both): a part with none of its own is answered from those. `provisions`: the
    parts whose selection is a provision asked about whole (agents.provisions.provision_parts); None reads
    that from each part's question alone."""
    parts = parts or [""]
    part_of = part_of or {}
    also = also or {}
    scores = scores or {}
    by_id = {r.requirement_id: r for r in verified}
    conflicts = find_conflicts(verified, part_of, overlap=limits.same_duty_overlap, questions=parts)
    statements: list[Statement] = []
    answers, used = [], set()
    for index, question in enumerate(parts):
        # A broad question gets every duty found, the law's before the policies' (REQ-S before REQ-P); one that asks
        # what a provision says (agents.provisions), all it says, in the order its text says it
        provision = bool(asked_provisions(question)) if provisions is None else index in provisions
        broad = asks_all(question, provision)
        mine = [r for r in verified if part_of.get(r.requirement_id, 0) == index] or [
            r for r in verified if index in also.get(r.requirement_id, ())]
        mine.sort(key=partial(_order, broad=broad, scores={} if provision else _with_the_quote_before(mine, scores)
                              if broad else scores,
                              often=asks_how_often(question), action=None if broad else asked_family(question),
                              exemption=asks_exemption(question), scope=asks_scope(question),
                              who=frozenset(key_terms(question)) if asks_party(question) else frozenset()))
        if not mine:
            answers.append(PartAnswer(index=index, question=question, missing_evidence=[
                "a requirement that explicitly addresses: " + (", ".join(key_words(question)) or question)]))
            continue
        # The law's statement of the best quote's matter answers before a policy's ("Do we need MFA for remote
        # access?": the Act's duty, then the policy's), unless the question asks what a policy says; a broad
        # answer orders all its quotes so.
        law = next((r for r in mine[1:] if not broad and not asks_policy(question)
                    and mine[0].requirement_id[4] != "S"
                    and r.requirement_id[4] == "S" and r.binding and same_matter(mine[0].exact_quote, r.exact_quote)),
                   None)
        if law is not None:
            mine.remove(law)
            mine.insert(0, law)
        # A broad answer opens with the first of the quotes it cites that names its subject ("What should we do with
        # drafts?": "A firm is not required to retain drafts ...", not the retention periods beside it); the rest
        # keep their order, and the quotes cited stay the same.
        most = limits.broad_max_supporting if broad else limits.max_supporting_per_part
        # (a provision asked about whole opens with its own first requirement: its words name no subject, and "Article
        # 2" in a quote is not what the question asks)
        topic = set(broad_topic(question)) if broad and not provision else set()
        naming = [r for r in mine[:most] if not topic.isdisjoint(tokenize(r.exact_quote))]
        lead = naming[0] if naming else None
        # ... and of those from the same family (the law's, else the policies'), a duty before a definition or a
        # permission ("What must a financial institution do to keep its service providers in line on security?":
        # "Oversee service providers, by: ...", not "Service provider means any person or entity that ...")
        if lead is not None and lead.modality not in DUTIES:
            lead = next((r for r in naming if r.modality in DUTIES and r.binding
                         and r.requirement_id[4] == lead.requirement_id[4]), lead)
        if lead is not None and lead.binding:
            mine.remove(lead)
            mine.insert(0, lead)
        # The answer opens with a conflict where its best quote is in one, else with the best quote itself: "Can
        # we keep client data after the relationship ends?" is answered by the client assessment records' five
        # years, and the transaction records' two periods follow it.
        own = [c for c in conflicts if c.part == index]
        in_conflict = {i for c in own for i in c.requirement_ids}
        if mine[0].requirement_id in in_conflict:
            statements.append(_direct_conflict(question, own[0], by_id, limits.direct_max_words))
        else:
            statements.append(_direct("" if provision else question, mine[0], index, limits.direct_max_words))
        statements.extend(_conflict_statement(c, by_id) for c in own)
        support = [r for r in mine if r.requirement_id not in in_conflict][:most]
        support = [*support[:1], *_passages_together(support[1:])] if broad else support  # the lead stays first
        statements.extend(Statement(text=f'{_where(r)}{"" if r.binding else " (non-binding context)"}'
                                         + (f', in the table with the columns "{normalize_ws(r.table_header)}",'
                                            if r.table_header else "")
                                         + f' states: "{normalize_ws(r.exact_quote)}" [{r.requirement_id}]',
                                    requirement_ids=[r.requirement_id], part=index) for r in support)
        cited = [r.requirement_id for r in mine if r.requirement_id in in_conflict or r in support]
        used.update(cited)
        answers.append(PartAnswer(index=index, question=question, requirement_ids=cited))
    unused = [r.requirement_id for r in verified if r.requirement_id not in used]
    return ComposedAnswer(statements=statements, conflicts=conflicts, unused_requirement_ids=unused,
                          parts=answers if len(parts) > 1 or parts[0] else [])


# Where the best cited passage's relevance (the learned model's probability that it answers) puts an answer.
# On held-out ObliQA questions, cited passages at relevance >= 0.7 were a gold answer passage 79-92% of the
# time, at 0.4-0.7 46-58%, below 0.4 about 20% (the bench/citations.py run of the 0.2 pipeline).
CONFIDENCE_HIGH, CONFIDENCE_MEDIUM = 0.7, 0.4
_LEVELS = ("low", "medium", "high")


def grounding_confidence(verified: list[Requirement], relevance: dict[str, float | None] | None = None,
                         parts: dict[str, int] | None = None, n_parts: int = 1,
                         also: dict[str, list[int]] | None = None) -> str:
    """How well the answer is grounded: insufficient (nothing verified), else low / medium / high.

    With the learned relevance of each verified requirement's passage (`relevance`, by REQ-ID) and the
    part each answers (`parts`), each part's level is set by its best passage's relevance (high >=
    `CONFIDENCE_HIGH`, medium >= `CONFIDENCE_MEDIUM`), one level lower when every quote of the part leans
    on text elsewhere; the answer's level is its weakest part's, and low when a part has no verified
    requirement. Without relevance figures (evidence judged without the model), by count: high (>= 5, all
    explicit), medium (2-4), low (1, or any leaning on other text). A part resting on non-binding text alone
    (recitals, discussion, guidance, notes) is never above medium: it explains, it does not require. `also`: the
    later parts a requirement cited for its own part answers too, which count for a part with none of its own.
    Pure."""
    if not verified:
        return "insufficient"
    scored = {r.requirement_id: relevance[r.requirement_id] for r in verified
              if relevance and relevance.get(r.requirement_id)}
    if not scored:
        if len(verified) == 1 or any(r.refers_elsewhere for r in verified):
            return "low"
        return "high" if len(verified) >= 5 and any(r.binding for r in verified) else "medium"
    by_part: dict[int, list[Requirement]] = {}
    for r in verified:
        by_part.setdefault((parts or {}).get(r.requirement_id, 0), []).append(r)
    own = set(by_part)
    for r in verified:  # a part with none of its own, answered by a quote cited for an earlier part (`also`)
        for index in (also or {}).get(r.requirement_id, ()):
            if index not in own:
                by_part.setdefault(index, []).append(r)
    if len(by_part) < n_parts:
        return "low"
    levels = []
    for mine in by_part.values():
        best = max((scored.get(r.requirement_id) or 0.0 for r in mine), default=0.0)
        level = 2 if best >= CONFIDENCE_HIGH else 1 if best >= CONFIDENCE_MEDIUM else 0
        if all(r.refers_elsewhere for r in mine):
            level = max(0, level - 1)
        if all(not r.binding for r in mine):
            level = min(level, 1)
        levels.append(level)
    return _LEVELS[min(levels)]


class OptionChoice(BaseModel):
    """Which multiple-choice option the verified evidence supports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    option: str | None = Field(description="The letter chosen, or None when the evidence cannot decide")
    supporting_requirement_ids: list[str] = Field(default_factory=list)
    reason: str


def _support(option: str, quote: str) -> float:
    terms = set(key_terms(option))
    stated = figures(option)
    if stated:  # an option that states a figure is supported only by a quote with that figure
        return 1.0 if stated <= figures(quote) else 0.0
    return len(terms & set(tokenize(quote))) / len(terms) if terms else 0.0


def select_option(options: list[str], verified: list[Requirement], *, need: float = _ANSWER.option_support,
                  margin: float = _ANSWER.option_margin) -> OptionChoice:
    """Pick the option the verified quotes support best, by a clear margin; otherwise say so."""
    if not options or not verified:
        return OptionChoice(option=None, reason="no verified requirement to decide with")
    scored = []
    for i, option in enumerate(options):
        support = {r.requirement_id: _support(option, r.exact_quote) for r in verified}
        scored.append((max(support.values()), chr(ord("A") + i), [k for k, v in support.items() if v >= need]))
    scored.sort(key=lambda x: (-x[0], x[1]))
    best, runner_up = scored[0], scored[1] if len(scored) > 1 else (0.0, "", [])
    if best[0] < need or best[0] - runner_up[0] < margin:
        return OptionChoice(option=None, reason=f"the evidence cannot decide (best support {best[0]:.2f}, "
                                                f"next {runner_up[0]:.2f})")
    return OptionChoice(option=best[1], supporting_requirement_ids=best[2],
                        reason=f"supported by {', '.join(best[2])} (support {best[0]:.2f})")


# --- llm backend: the model writes statements; code fixes conflicts and unused IDs, Review checks ----

_CITED = re.compile(r"REQ-[SP]\d{3}")


class ComposeReply(BaseModel):
    """LLM reply schema for skills/compose.md."""

    model_config = ConfigDict(extra="forbid")

    statements: list[Statement] = Field(min_length=1, max_length=MAX_STATEMENTS + 4)


def answer_from_reply(reply: ComposeReply, verified: list[Requirement], attempt: int, *,
                      overlap: float = _ANSWER.same_duty_overlap) -> ComposedAnswer:
    """The model's statements as an answer; conflicts and unused IDs are computed by code, never taken."""
    cited = {i for s in reply.statements for i in [*s.requirement_ids, *_CITED.findall(s.text)]}
    return ComposedAnswer(statements=reply.statements, conflicts=find_conflicts(verified, overlap=overlap),
                          unused_requirement_ids=[r.requirement_id for r in verified if r.requirement_id not in cited],
                          composer="llm", attempt=attempt)


def _prompt_requirement(r: Requirement) -> dict[str, Any]:
    return {"requirement_id": r.requirement_id, "quote": normalize_ws(r.exact_quote), "where": _where(r),
            "modality": r.modality.value}


def verified_of(state: EvidenceState) -> list[Requirement]:
    """The verified requirements in graph state, in extraction order."""
    return [Requirement.model_validate(j["requirement"]) for j in state.get("judged") or [] if j["verified"]]


def rules_composition(state: EvidenceState, limits: AnswerSettings = _ANSWER) -> ComposedAnswer:
    """`compose_rules` over the verified requirements in graph state, part by part."""
    judged = [j for j in state.get("judged") or [] if j["verified"]]
    parts = [p["question"] for p in state.get("parts") or []] or [state["stem"]]
    return compose_rules(verified_of(state), parts=parts,
                         part_of={j["requirement"]["requirement_id"]: j.get("part", 0) for j in judged},
                         scores={j["requirement"]["requirement_id"]: j.get("score", 0.0) for j in judged},
                         limits=limits, also={j["requirement"]["requirement_id"]: j.get("also_parts") or []
                                              for j in judged},
                         provisions=provision_parts(state.get("parts")))


def compose_node(state: EvidenceState, deps: Deps) -> dict[str, Any]:
    """Graph node. A failed review in state means this is the one revision: the model gets the reasons."""

    verified = verified_of(state)
    limits = deps.settings.answer
    review = state.get("review")
    attempt = 2 if review and not review["passed"] else 1
    if deps.llm is None or not verified:
        answer = rules_composition(state, limits).model_copy(update={"attempt": attempt})
        return evidence_update([], 0, composition=answer.model_dump(mode="json"))
    previous = (state.get("composition") or {}).get("statements", []) if attempt == 2 else []
    answer, fallbacks, calls = llm_or_rules_within(
        deps, evidence_allowance(state, deps), "compose", "compose", ComposeReply,
        rules=lambda: rules_composition(state, limits).model_copy(update={"attempt": attempt}),
        accept=lambda reply: answer_from_reply(reply, verified, attempt, overlap=limits.same_duty_overlap),
        question=state["stem"],
        language=language_name(answer_language(state.get("language"))),
        requirements=[_prompt_requirement(r) for r in verified],
        conflicts=[c.model_dump() for c in find_conflicts(verified, overlap=limits.same_duty_overlap)],
        previous=[s["text"] for s in previous], reasons=review["reasons"] if review and attempt == 2 else [])
    return evidence_update(fallbacks, calls, composition=answer.model_dump(mode="json"))
