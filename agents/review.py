"""Review: fail any statement without a REQ-ID, citing an unknown ID, or quoting what its
requirements do not say."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from agents.compose import ComposedAnswer
from agents.evaluate import key_terms
from agents.extract import Requirement, normalize_ws

_QUOTED = re.compile(r'"([^"]{3,})"')
_CITED = re.compile(r"REQ-[SP]\d{3}")
MIN_UNQUOTED_OVERLAP = 0.6


class Review(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    revised: bool = False


def review_answer(answer: ComposedAnswer, verified: list[Requirement]) -> Review:
    """Code checks only; an LLM's answer gets the same checks as the rules one."""
    quotes = {r.requirement_id: normalize_ws(r.exact_quote) for r in verified}
    reasons = []
    for i, statement in enumerate(answer.statements, 1):
        ids = set(statement.requirement_ids) | set(_CITED.findall(statement.text))
        if not ids:
            reasons.append(f"statement {i} cites no REQ-ID")
            continue
        unknown = sorted(ids - quotes.keys())
        if unknown:
            reasons.append(f"statement {i} cites unknown or unverified {', '.join(unknown)}")
            continue
        cited = " ".join(quotes[x] for x in ids)
        spans = _QUOTED.findall(statement.text)
        for span in spans:
            if normalize_ws(span) not in cited:
                reasons.append(f"statement {i} quotes text its requirements do not contain: \"{span[:60]}\"")
        if not spans:
            terms = set(key_terms(statement.text))
            support = set(key_terms(cited))
            if terms and len(terms & support) / len(terms) < MIN_UNQUOTED_OVERLAP:
                reasons.append(f"statement {i} says more than its quotes")
    return Review(passed=not reasons, reasons=reasons)
