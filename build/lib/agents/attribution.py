"""Attribution: each figure, period, deadline and modal verb of a statement belongs to the quotes it cites.

Review (`agents/review.py`) checks that a statement's words are found in its quotes; that alone
lets a statement take "A firm must retain transaction records for at least" from a regulation
and "five years" from a policy and cite both. These checks read a statement as segments, each
ending at a bracketed citation ("... [REQ-S001, REQ-P001]"; text after the last bracket belongs
to it too), and attribute every claim of a segment to each requirement its bracket names:

* a quoted span must be a contiguous part of one of those quotes;
* outside quotation marks, every period or deadline ("five years", "72 hours", "annually",
  "without undue delay") must appear in each of those quotes, and every other number in each
  quote or in its document title or section;
* outside quotation marks, every modal verb or negation ("must", "shall", "may", "should",
  "not", "required", ...) must be used by each of those quotes;
* a parenthesised comparison "(six years vs five years)" sets sources side by side: each side
  need only appear in one quote the statement cites;
* where a statement cites requirements that conflict (`agents.compose.find_conflicts`), it must
  present both: each side's periods, or its negation, appear in the statement;
* over the whole answer, a conflict one of whose requirements is cited must be presented by a
  statement that cites both.

Document titles and section paths of the cited requirements are taken out of a segment before its
claims are read, so a title such as "Data Protection Act 2023" claims nothing. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.compose import find_conflicts
from agents.extract import Requirement
from engine.config import AnswerSettings
from engine.text import ATTRIBUTED_FORCE, NUMBER, PERIOD, normalize_ws

_QUOTED = re.compile(r'["\u201c]([^"\u201c\u201d]{3,})["\u201d]')
_BRACKET = re.compile(r"\[\s*(REQ-[SP]\d{3}(?:\s*,\s*REQ-[SP]\d{3})*)\s*\]")
_CITED = re.compile(r"REQ-[SP]\d{3}")
_COMPARISON = re.compile(r"\(([^()]*\b(?:vs\.?|versus)\s[^()]*)\)", re.IGNORECASE)
_OVERLAP = AnswerSettings().same_duty_overlap  # the default; review passes its settings' value
_NEGATED = re.compile(r"\b(?:must|shall|may|should|can|need|are|is)\s+not\b|\b(?:cannot|never|prohibited|forbidden)\b",
                      re.IGNORECASE)


def _norm(text: str) -> str:
    return normalize_ws(text).lower().replace("-", " ")


def periods(text: str) -> set[str]:
    """Periods and deadlines stated in `text`, normalized ("five years", "72 hours", "annually")."""
    return {_norm(m.group(0)) for m in PERIOD.finditer(text)}


def _numbers(text: str) -> set[str]:
    return {_norm(m.group(0)) for m in NUMBER.finditer(PERIOD.sub(" ", text))}


def _forces(text: str) -> set[str]:
    return {m.group(0).lower() for m in ATTRIBUTED_FORCE.finditer(text)}


def segments(text: str, statement_ids: Iterable[str]) -> list[tuple[str, list[str]]]:
    """(text, cited IDs) per segment: up to each bracketed citation; trailing text joins the last segment."""
    out: list[tuple[str, list[str]]] = []
    start = 0
    for m in _BRACKET.finditer(text):
        out.append((text[start:m.start()], _CITED.findall(m.group(1))))
        start = m.end()
    tail = text[start:]
    if out:
        out[-1] = (out[-1][0] + " " + tail, out[-1][1])
    else:
        out.append((tail, sorted(set(statement_ids))))
    return out


def _without(text: str, reqs: list[Requirement]) -> str:
    """`text` without the cited requirements' titles and section paths (they claim nothing)."""
    names = sorted({n for r in reqs for n in (r.document_title, r.section_path, *r.section_path.split(" > "))
                    if len(n) > 3}, key=len, reverse=True)  # a bare number ("4") stays: `where` covers it
    for name in names:
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return text


def _segment_problems(i: int, segment: str, ids: list[str], by_id: dict[str, Requirement],
                      comparisons: list[str]) -> list[str]:
    """Claims of one segment against each quote its bracket names. Comparisons are collected, not judged."""
    reqs = [by_id[x] for x in ids if x in by_id]
    if not reqs:
        return []
    problems = []
    for span in _QUOTED.findall(segment):
        owners = [r.requirement_id for r in by_id.values() if _norm(span) in _norm(r.exact_quote)]
        if owners and not set(owners) & set(ids):  # a span in no quote at all is Review's own finding
            problems.append(f"statement {i} puts \"{normalize_ws(span)[:50]}\" under {', '.join(ids)}; it is the "
                            f"text of {', '.join(owners)}")
    comparisons += _COMPARISON.findall(segment)
    bare = _without(_QUOTED.sub(" \u2026 ", _COMPARISON.sub(" ", segment)), reqs)
    for r in reqs:
        where = f"{r.document_title} {r.section_path}"
        missing = sorted(periods(bare) - periods(r.exact_quote))
        if missing:
            said = ", ".join(sorted(periods(r.exact_quote))) or "no period"
            problems.append(f"statement {i} gives {', '.join(missing)} to {r.requirement_id}, whose quote says {said}")
        numbers = sorted(_numbers(bare) - _numbers(r.exact_quote) - _numbers(where))
        if numbers:
            problems.append(f"statement {i} gives the figure(s) {', '.join(numbers)} to {r.requirement_id}, whose "
                            "quote does not state them")
        force = sorted(_forces(bare) - _forces(r.exact_quote))
        if force:
            problems.append(f"statement {i} gives the force \"{', '.join(force)}\" to {r.requirement_id}, whose "
                            f"quote does not use it")
    return problems


def _comparison_problems(i: int, comparisons: list[str], reqs: list[Requirement]) -> list[str]:
    stated = set().union(*(periods(r.exact_quote) for r in reqs)) if reqs else set()
    missing = sorted({p for c in comparisons for p in periods(c)} - stated)
    return [f"statement {i} compares {', '.join(missing)}, which no quote it cites states"] if missing else []


def _presents(text: str, side: Requirement) -> bool:
    """Whether `text` shows what sets `side` apart in a conflict: its periods, or its negation."""
    shown = periods(text)
    own = periods(side.exact_quote)
    if own:
        return own <= shown
    negation = _NEGATED.search(side.exact_quote)
    return negation is None or _norm(negation.group(0)) in _norm(text)


def conflict_problems(i: int, text: str, reqs: list[Requirement], overlap: float = _OVERLAP) -> list[str]:
    """A statement citing requirements in conflict must present each side."""
    out = []
    by_id = {r.requirement_id: r for r in reqs}
    for conflict in find_conflicts(reqs, overlap=overlap):
        hidden = [x for x in conflict.requirement_ids if not _presents(text, by_id[x])]
        if hidden:
            out.append(f"statement {i} cites {' and '.join(conflict.requirement_ids)}, which conflict "
                       f"({conflict.reason}), but does not present {', '.join(hidden)}: present both sides")
    return out


def statement_problems(i: int, text: str, ids: set[str], by_id: dict[str, Requirement],
                       overlap: float = _OVERLAP) -> list[str]:
    """Attribution and conflict problems of statement `i` (IDs already known to be verified)."""
    comparisons: list[str] = []
    problems = [p for segment, seg_ids in segments(text, ids)
                for p in _segment_problems(i, segment, seg_ids, by_id, comparisons)]
    cited = [by_id[x] for x in sorted(ids) if x in by_id]
    return problems + _comparison_problems(i, comparisons, cited) + conflict_problems(i, text, cited, overlap)


def answer_conflict_problems(statements: list[tuple[str, set[str]]], verified: list[Requirement],
                             overlap: float = _OVERLAP) -> list[str]:
    """A conflict any of whose requirements the answer cites must be presented by one statement citing both."""
    cited = set().union(*(ids for _, ids in statements)) if statements else set()
    out = []
    for conflict in find_conflicts(verified, overlap=overlap):
        pair = set(conflict.requirement_ids)
        if not pair & cited or any(pair <= ids for _, ids in statements):
            continue
        a, b = conflict.requirement_ids
        how = f"{a} and {b} in different statements" if pair <= cited else \
            f"{', '.join(sorted(pair & cited))} but not {', '.join(sorted(pair - cited))}"
        out.append(f"the answer cites {how}, although they conflict ({conflict.reason}): present both in one "
                   "statement")
    return out
