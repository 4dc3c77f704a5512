"""Verify: the grounding gate. A requirement passes only if its quote alone answers the question.

Embedding cosine alone separates "answers the question" from "on topic" poorly, so the rules
judge combines: cosine (rescaled), coverage of the question's key terms, whether the quote
states what the question asks for (a time limit for "how long/when", an actor for "who"),
modality, and completeness (a quote that leans on other text is incomplete).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agents.evaluate import key_terms
from agents.extract import Modality, classify_modality
from engine.lexical import tokenize

REJECTION_REASONS = ("does_not_address_question", "requires_inference", "incomplete_quote", "not_verbatim")
# Thresholds (sample corpus; see README "Verify"). Score = 0.5 * rescaled cosine + 0.5 * key-term coverage.
COSINE_FLOOR, COSINE_CEILING = 0.2, 0.7
PASS_SCORE = 0.45
MIN_COVERAGE = 0.25

_TIME = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|seventy[- ]two)\s+"
                   r"(business\s+)?(hours?|days?|weeks?|months?|years?)\b|\b(annually|quarterly|every\s+\w+|"
                   r"immediately|without\s+undue\s+delay|promptly|before|after|within|at\s+least|no\s+later\s+than)\b",
                   re.IGNORECASE)
_ASKS_TIME = re.compile(r"\bhow\s+(long|soon|quickly|often)\b|\bwhen\b|\bdeadline\b|\bperiod\b|\bwithin\b|"
                        r"\bhow\s+many\s+(days|hours|years|months)\b", re.IGNORECASE)
_LEANS_ON_CONTEXT = re.compile(r"^\s*(such|these|those|this|that|it|they|the\s+foregoing|the\s+above)\b", re.I)


class Verdict(BaseModel):
    """The gate's decision on one quote."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verified: bool
    rejection_reason: str | None = Field(default=None, description="One of REJECTION_REASONS when not verified")
    rationale: str
    score: float
    features: dict[str, Any] = Field(default_factory=dict)


@lru_cache(maxsize=1)
def _default_embedder() -> Any:
    from engine.config import load_settings
    from engine.embeddings import Embedder

    return Embedder.from_settings(load_settings())


def features(question: str, quote: str, embedder: Any) -> dict[str, Any]:
    """Everything the rules judge looks at (pure given the embedder)."""
    q_vec, t_vec = embedder.encode_query(question), embedder.encode([quote])[0]
    cosine = float(np.dot(q_vec, t_vec))
    terms = key_terms(question)
    tokens = set(tokenize(quote))
    covered = [t for t in terms if t in tokens]
    return {
        "cosine": round(cosine, 4),
        "coverage": round(len(covered) / len(terms), 4) if terms else 0.0,
        "asks_time": bool(_ASKS_TIME.search(question)),
        "states_time": bool(_TIME.search(quote)),
        "modality": classify_modality(quote).value,
        "leans_on_context": bool(_LEANS_ON_CONTEXT.search(quote)),
    }


def score_of(f: dict[str, Any]) -> float:
    scaled = min(1.0, max(0.0, (f["cosine"] - COSINE_FLOOR) / (COSINE_CEILING - COSINE_FLOOR)))
    return round(0.5 * scaled + 0.5 * f["coverage"], 4)


def decide(f: dict[str, Any]) -> tuple[bool, str | None, str]:
    """(verified, rejection reason, rationale) from the features. Pure."""
    score = score_of(f)
    if f["modality"] == Modality.NONE.value:
        return False, "does_not_address_question", "the text imposes, permits or recommends nothing"
    if score < PASS_SCORE or f["coverage"] < MIN_COVERAGE:
        return False, "does_not_address_question", f"score {score} / coverage {f['coverage']} below the gate"
    if f["asks_time"] and not f["states_time"]:
        return False, "requires_inference", "the question asks for a time or period; the quote states none"
    if f["leans_on_context"]:
        return False, "incomplete_quote", "the quote depends on preceding text"
    return True, None, f"addresses the question (score {score}, key terms {f['coverage']:.0%})"


def judge(question: str, quote: str, *, backend: str = "rules", embedder: Any = None) -> Verdict:
    """Public, stable API: does `quote` (a sentence or a passage) answer `question`?"""
    if backend != "rules":
        raise ValueError("judge() outside a run supports the rules backend")
    f = features(question, quote, embedder or _default_embedder())
    verified, reason, rationale = decide(f)
    return Verdict(verified=verified, rejection_reason=reason, rationale=rationale, score=score_of(f), features=f)
