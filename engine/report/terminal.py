"""An audit's answer as a person reads it on a terminal: the direct answer, the cited requirements as
wrapped prose with their citations, conflicts and missing evidence; rejected candidates only on request.

Pure: lines in, lines out, at a given width (the caller passes the terminal's), so the output can be
measured (`bench`/tests: an unanswerable question prints well under 40 lines at 80 columns). IDs are
never cut: lines are broken between words only.
"""

from __future__ import annotations

import textwrap
from typing import Any, NamedTuple

from agents.asks import states_scope
from agents.modality import exempts
from engine.ingest.citations import derived_citation, own_section
from engine.text import normalize_ws


class Line(NamedTuple):
    text: str
    style: str = ""  # a rich style name: "bold", "green", "red", "yellow", "dim"


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """`text` broken between words (never inside an id or a word) to `width` columns."""
    return textwrap.wrap(normalize_ws(text), width=max(20, width), break_long_words=False, break_on_hyphens=False,
                         initial_indent=indent if first is None else first, subsequent_indent=indent) or [indent]


def citation_of(req: dict[str, Any]) -> str:
    return req.get("citation") or derived_citation(req.get("section_number") or "", req.get("section_path") or "")


def _source(req: dict[str, Any]) -> str:
    """Where a quote stands, as a reader looks for it: its citation ("Section 3.1(a)", "Article 5(2)", "AC-2(1)"),
    else its section's heading ("Employee Onboarding"), then the document and its version."""
    where = citation_of(req) or own_section(req.get("section_path"), req.get("document_title"))  # not "Debug, Debug v1"
    return f"{where + ', ' if where else ''}{req.get('document_title', '?')} v{req.get('document_version', '?')}"


def _cited_ids(answer: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for statement in answer.get("statements") or []:
        for rid in statement.get("requirement_ids", []):
            seen.setdefault(rid, None)
    return list(seen)


def modality_label(req: dict[str, Any]) -> str:
    """A requirement's modality as a reader reads it: a quote that imposes nothing says what it does instead, where
    it frees someone from a duty ("none: exemption") or says whom a text applies to ("none: scope"). The record
    keeps the modality alone."""
    kind = str(req.get("modality", ""))
    if kind == "none":
        quote = req.get("exact_quote", "")
        kind += ": exemption" if exempts(quote) else ": scope" if states_scope(quote) else ""
    return kind


def _requirement(req: dict[str, Any], width: int, note: str = "") -> list[Line]:
    kind = modality_label(req)
    if req.get("binding") is False:
        kind += ", non-binding context"
    head = f"{req['requirement_id']}  {_source(req)} ({kind}){note}"
    lines = [Line(x, "bold") for x in wrap(head, width, "      ", "  ")]
    if req.get("table_header"):
        lines += [Line(x) for x in wrap(f"a row of the table with the columns {req['table_header']}", width, "      ")]
    lines += [Line(x) for x in wrap(f"\u201c{req['exact_quote']}\u201d", width, "      ")]
    return lines


def _answer(answer: dict[str, Any], record: dict[str, Any], width: int) -> list[Line]:
    parts = answer.get("parts") or []
    llm_prose = (record.get("review") or {}).get("composer") == "llm"
    out: list[Line] = []
    if len(parts) > 1:
        for part in parts:
            out += [Line(x, "bold") for x in wrap(f"({part['index'] + 1}) {part['question']}", width, "    ", "  ")]
            if part.get("direct_answer"):
                out += [Line(x) for x in wrap(part["direct_answer"], width, "      ", "    ")]
                if part.get("found"):
                    out += [Line(x, "yellow") for x in wrap(found_line(part["found"]), width, "      ", "    ")]
            else:
                missing = "; ".join(part.get("missing_evidence") or []) or "no verified requirement"
                out += [Line(x, "red") for x in wrap(f"No authoritative evidence for this part: {missing}", width,
                                                       "      ", "    ")]
            if llm_prose:
                out += _prose(answer, width, part["index"])
        return out
    text = answer.get("direct_answer") or answer.get("final_answer") or ""
    out += [Line(x, "" if answer.get("status") == "ANSWERED" else "red") for x in wrap(text, width, "    ", "  ")]
    found = (parts[0].get("found") if parts else None) if answer.get("status") == "ANSWERED" else None
    if found:
        out += [Line(x, "yellow") for x in wrap(found_line(found), width, "    ", "  ")]
    if llm_prose:
        out += _prose(answer, width, None)
    return out


def found_line(found: dict[str, int]) -> str:
    """What a broad question's answer found ("12 requirements found: 5 in the law, 7 in other sources; 10 of
    them duties or prohibitions"), and where it cites fewer, how many it cites (records before 0.6.11 do not
    say)."""
    line = (f"{found['total']} requirement(s) found: {found['law']} in the law (REQ-S), {found['other']} in other "
            f"sources (REQ-P); {found['duties']} of them duties or prohibitions")
    cited = found.get("cited", found["total"])
    return line + (f"; {cited} cited, the others verified but not cited" if cited < found["total"] else "")


def _prose(answer: dict[str, Any], width: int, part: int | None) -> list[Line]:
    """Statements a language model wrote (the rules composer's supporting statements only repeat quotes)."""
    out = []
    for statement in answer.get("statements") or []:
        if statement.get("kind") == "direct" or (part is not None and statement.get("part", 0) != part):
            continue
        out += [Line(x) for x in wrap(statement["text"], width, "      ", "    - ")]
    return out


def _header(record: dict[str, Any], width: int) -> list[Line]:
    out = [Line(x, "bold") for x in wrap(f"Question: {record['question']}", width, "  ", "")]
    scope = record.get("scope")
    if scope:
        docs = ", ".join(f"{d['title']} ({d['document_id']})" for d in scope.get("documents", []))
        types = ", ".join(scope.get("source_types", []))
        text = "Scope: " + "; ".join(x for x in (docs and f"documents {docs}", types and f"source types {types}") if x)
        out += [Line(x, "yellow") for x in wrap(text, width, "  ", "")]
    memory = (record.get("research") or {}).get("working_memory") or {}
    if memory.get("searched_for"):
        out += [Line(x, "yellow") for x in wrap(f"searched for: {memory['searched_for']}", width, "  ", "")]
    language = record.get("language") or {}
    if language.get("note"):
        out += [Line(x, "yellow") for x in wrap(f"language: {language['note']}", width, "  ", "")]
    return out


def answer_lines(record: dict[str, Any], *, width: int = 80, show_rejected: bool = False,
                 rejected_hint: str = "--show-rejected lists them") -> list[Line]:
    """The lines of an audit record's answer (an `ask` or `trail show`), each at most `width` columns
    unless one word is longer."""
    answer = record.get("answer") or {}
    reqs = {r["requirement_id"]: r for r in record.get("requirements", [])}
    out = _header(record, width)
    status = answer.get("status", "?")
    review = record.get("review") or {}
    verdict = "" if status == "REJECTED" else f" · review {'passed' if review.get('passed') else 'FAILED'}"
    colour = "green" if status == "ANSWERED" else "red"
    out += [Line(""), Line(f"{status} · grounding confidence {answer.get('grounding_confidence')}{verdict}",
                           f"bold {colour}"), Line(""), Line("Answer", "bold")]
    out += _answer(answer, record, width)
    if answer.get("conflicts"):
        out += [Line(""), Line("Conflicts (the sources differ)", "bold yellow")]
        for c in answer["conflicts"]:
            out += [Line(x) for x in wrap(f"{' vs '.join(c['requirement_ids'])}: {c['reason']}", width, "    ", "  ")]
    cited = [reqs[r] for r in _cited_ids(answer) if r in reqs and reqs[r].get("verified")]
    if cited:
        cited.sort(key=lambda r: r.get("binding") is False)
        out += [Line(""), Line(f"Cited requirements ({len(cited)})", "bold")]
        for req in cited:
            out += _requirement(req, width)
    # the answer's own list names each part's ("part 2: ..."); the parts' lists are read only where it has none
    missing = list(dict.fromkeys(answer.get("missing_evidence") or [
        m for p in answer.get("parts") or [] for m in p.get("missing_evidence") or []]))
    if missing:
        out += [Line(""), Line("Missing evidence", "bold red")]
        for item in missing:
            out += [Line(x) for x in wrap(item, width, "    ", "  - ")]
    if answer.get("unused_requirements"):
        out += [Line("")] + [Line(x, "dim") for x in wrap(
            "Verified but not cited: " + ", ".join(answer["unused_requirements"]), width, "  ")]
    rejected = [r for r in reqs.values() if not r.get("verified")]
    if rejected and show_rejected:
        out += [Line(""), Line(f"Rejected candidates ({len(rejected)})", "bold")]
        for req in rejected:  # with why, as the verifier wrote it: what a reviewer asks first
            out += _requirement(req, width, f" rejected: {req.get('rejection_reason')}")
            if req.get("rationale"):
                out += [Line(x, "dim") for x in wrap(f"why: {req['rationale']}", width, "        ", "      ")]
    elif rejected:
        out += [Line("")] + [Line(x, "dim") for x in wrap(
            f"{len(rejected)} rejected candidate(s) not shown: {rejected_hint} (--json and the trail hold them "
            "all).", width, "  ")]
    return out


def research_line(record: dict[str, Any], width: int = 80) -> list[Line]:
    """One line on how the evidence was searched."""
    research = record.get("research") or {}
    steps, found = len(research.get("steps") or []), len(research.get("evidence") or [])
    text = f"Research: {steps} step(s), {found} passage(s) examined (--verbose shows the queries and run metrics)."
    return [Line("")] + [Line(x, "dim") for x in wrap(text, width, "  ")]
