"""Verify: the grounding gate. A requirement passes only if its quote alone answers the question.

Embedding cosine alone separates "answers the question" from "on topic" poorly, so the rules
judge combines: cosine (rescaled), coverage of the question's key terms and of its adjacent
key-term pairs (phrases such as "exit facility", "client money"), whether the quote states what
the question asks for (a time or period when the question asks one), modality, and completeness
(a quote that leans on other text is incomplete). Over several candidates for one question
(`judge_candidates`, used by the evidence stage) a verified quote must also score close to the best
verified quote of its own document: "on topic but not the answer" is better told apart relative to
the neighbouring rules than by any absolute threshold. Calibrated on ObliQA dev: bench/calibrate_verify.py, README.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agents.evaluate import INTERROGATIVES, MODALS, key_terms
from agents.extract import MIN_WORDS, Modality, Requirement, classify_modality, is_verbatim
from engine.lexical import tokenize

REJECTION_REASONS = ("does_not_address_question", "requires_inference", "incomplete_quote", "not_verbatim")
# Score = weights . (rescaled cosine, key-term coverage, phrase coverage). Thresholds read on the
# calibration half of ObliQA dev (bench/calibrate_verify.py), rounded; see README "Evidence stage".
COSINE_FLOOR, COSINE_CEILING = 0.2, 0.7
SCORE_WEIGHTS = (0.25, 0.5, 0.25)
PASS_SCORE = 0.3
MIN_COVERAGE = 0.3
RELATIVE_MARGIN = 0.2  # a verified quote scores at least its document's best verified score minus this
QUESTION_MARGIN = 0.4  # ... and at least the best verified score over all documents minus this

_TIME = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|seventy[- ]two)\s+"
                   r"(business\s+)?(hours?|days?|weeks?|months?|years?)\b|\b(annually|quarterly|every\s+\w+|"
                   r"immediately|without\s+undue\s+delay|promptly|before|after|within|at\s+least|no\s+later\s+than)\b",
                   re.IGNORECASE)
# A question asks for a time only with a time phrase: "when" and "within" alone are mostly conditions
# and places ("when assessing ..., what must ...", "within the ADGM": 527 of the 585 ObliQA dev
# questions that a bare when/within/period rule took as asking a time ask none).
_ASKS_TIME = re.compile(r"\bhow\s+(?:long|soon|quickly|promptly|often|frequently)\b|"
                        r"\bhow\s+many\s+(?:business\s+|calendar\s+|working\s+)?(?:days|hours|weeks|months|years)\b|"
                        r"^\W*when\s+(?:must|should|shall|is|are|does|do|will|can|may|would|has|have)\b|"
                        r"\b(?:by|until|till)\s+when\b|\bwithin\s+(?:what|which|how)\b|"
                        r"\b(?:deadline|time\s*limits?|time\s*frames?|timeframes?|timelines?|frequency|intervals?)\b|"
                        r"\b(?:what|which|retention|notice|minimum|maximum|time|holding)\s+(?:\w+\s+)?periods?\b",
                        re.IGNORECASE)
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


def _term_sequence(text: str) -> list[str]:
    return [t for t in tokenize(text, query=True) if t not in MODALS and t not in INTERROGATIVES and "_" not in t]


def _pairs(terms: list[str]) -> set[tuple[str, str]]:
    return set(zip(terms, terms[1:], strict=False))


def features(question: str, quote: str, embedder: Any) -> dict[str, Any]:
    """Everything the rules judge looks at (pure given the embedder)."""
    q_vec, t_vec = embedder.encode_query(question), embedder.encode([quote])[0]
    terms = key_terms(question)
    tokens = set(tokenize(quote))
    phrases = _pairs(_term_sequence(question))
    return {
        "cosine": round(float(np.dot(q_vec, t_vec)), 4),
        "coverage": round(sum(t in tokens for t in terms) / len(terms), 4) if terms else 0.0,
        "phrase_coverage": round(len(phrases & _pairs(_term_sequence(quote))) / len(phrases), 4) if phrases else 0.0,
        "asks_time": bool(_ASKS_TIME.search(question)),
        "states_time": bool(_TIME.search(quote)),
        "modality": classify_modality(quote).value,
        "leans_on_context": bool(_LEANS_ON_CONTEXT.search(quote)),
    }


def score_of(f: dict[str, Any]) -> float:
    """The relevance score in [0, 1]: rescaled cosine, key-term coverage and phrase coverage, weighted."""
    scaled = min(1.0, max(0.0, (f["cosine"] - COSINE_FLOOR) / (COSINE_CEILING - COSINE_FLOOR)))
    w_cos, w_cov, w_phrase = SCORE_WEIGHTS
    return round(w_cos * scaled + w_cov * f["coverage"] + w_phrase * f.get("phrase_coverage", 0.0), 4)


def decide(f: dict[str, Any]) -> tuple[bool, str | None, str]:
    """(verified, rejection reason, rationale) from the features of one quote. Pure."""
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


def relative_check(verdicts: list[Verdict], groups: list[str] | None = None,
                   margin: float | None = None) -> list[Verdict]:
    """Within each group (the document a quote comes from), reject verified quotes scoring more than
    `margin` below the group's best verified one; over all groups, those more than QUESTION_MARGIN
    below the best verified quote of any document (a document that only shares words with the
    question, while another one answers it). Pure.

    Per document, because the quotes that are "on topic but not the answer" are mostly neighbouring
    rules of the same document, while another source may state the same duty in other words (a
    policy's "kept" against a regulation's "retain") and must still be heard, conflicts included.
    """
    margin = RELATIVE_MARGIN if margin is None else margin
    groups = groups or [""] * len(verdicts)
    best: dict[str, float] = {}
    for v, g in zip(verdicts, groups, strict=True):
        if v.verified:
            best[g] = max(best.get(g, 0.0), v.score)
    top = max(best.values(), default=0.0)

    def check(v: Verdict, g: str) -> Verdict:
        if not v.verified:
            return v
        if v.score < best[g] - margin:
            why = f"another requirement of the same document addresses the question more directly " \
                  f"(score {v.score} vs best {best[g]})"
        elif v.score < top - QUESTION_MARGIN:
            why = f"shares only words with the question; another source answers it (score {v.score} vs best {top})"
        else:
            return v
        return v.model_copy(update={"verified": False, "rejection_reason": "does_not_address_question",
                                    "rationale": why})

    return [check(v, g) for v, g in zip(verdicts, groups, strict=True)]


def judge(question: str, quote: str, *, backend: str = "rules", embedder: Any = None) -> Verdict:
    """Public, stable API: does `quote` (a sentence or a passage) answer `question`? (absolute gate only)"""
    if backend != "rules":
        raise ValueError("judge() outside a run supports the rules backend")
    f = features(question, quote, embedder or _default_embedder())
    verified, reason, rationale = decide(f)
    return Verdict(verified=verified, rejection_reason=reason, rationale=rationale, score=score_of(f), features=f)


class _Prefetched:
    """An embedder view holding the candidates' vectors, encoded in one batch."""

    def __init__(self, embedder: Any, texts: list[str]) -> None:
        self.embedder = embedder
        unique = list(dict.fromkeys(texts))
        self.vectors = dict(zip(unique, embedder.encode(unique), strict=True)) if unique else {}

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] if t in self.vectors else self.embedder.encode([t])[0] for t in texts])

    def encode_query(self, text: str) -> np.ndarray:
        return self.embedder.encode_query(text)


def judge_candidates(question: str, quotes: list[str], *, groups: list[str] | None = None,
                     embedder: Any = None) -> list[Verdict]:
    """`judge` for every candidate quote of one question, then the relative check within each group
    (`groups[i]`: the document quote i comes from; one group when None)."""
    batched = _Prefetched(embedder or _default_embedder(), quotes)
    return relative_check([judge(question, q, embedder=batched) for q in quotes], groups)


class JudgedRequirement(BaseModel):
    """A requirement and the gate's verdict on it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requirement: Requirement
    verified: bool
    rejection_reason: str | None
    rationale: str
    score: float
    decided_by: str = Field(default="rules", description="code (verbatim/length checks), rules (the gate) or llm")


def _code_check(req: Requirement, chunks: dict[str, dict[str, Any]]) -> JudgedRequirement | None:
    """What code alone decides, whatever the backend: verbatim at the offsets, and a quote long enough."""
    chunk = chunks.get(req.chunk_id)
    if chunk is None or not is_verbatim(chunk["text"], req.char_start, req.char_end, req.exact_quote):
        return JudgedRequirement(requirement=req, verified=False, rejection_reason="not_verbatim",
                                 rationale="the quote is not the chunk text at its offsets", score=0.0,
                                 decided_by="code")
    if len(req.exact_quote.split()) < MIN_WORDS:
        return JudgedRequirement(requirement=req, verified=False, rejection_reason="incomplete_quote",
                                 rationale=f"a quote of fewer than {MIN_WORDS} words", score=0.0, decided_by="code")
    return None


def verify_requirements(question: str, requirements: list[Requirement], chunks: dict[str, dict[str, Any]],
                        embedder: Any) -> list[JudgedRequirement]:
    """The rules gate; the verbatim check comes first and is decided by code alone."""
    checked = {r.requirement_id: _code_check(r, chunks) for r in requirements}
    eligible = [r for r in requirements if checked[r.requirement_id] is None]
    verdicts = dict(zip((r.requirement_id for r in eligible),
                        judge_candidates(question, [r.exact_quote for r in eligible],
                                         groups=[r.document_id for r in eligible], embedder=embedder), strict=True))
    return [checked[r.requirement_id] or JudgedRequirement(
        requirement=r, verified=(v := verdicts[r.requirement_id]).verified, rejection_reason=v.rejection_reason,
        rationale=v.rationale, score=v.score) for r in requirements]


# --- llm backend: verdicts are accepted only for requirements that passed the code checks -----------

class LLMVerdict(BaseModel):
    """The model's verdict on one requirement (reply item of skills/verify.md)."""

    model_config = ConfigDict(extra="forbid")

    requirement_id: str = Field(description="A REQ-ID from the list given")
    verified: bool = Field(description="True only if the quote alone explicitly answers the question")
    rejection_reason: Literal["does_not_address_question", "requires_inference", "incomplete_quote"] | None = Field(
        default=None, description="Required when verified is false; null when true")
    rationale: str = Field(default="", max_length=400, description="One line: why")


class VerifyReply(BaseModel):
    """LLM reply schema for skills/verify.md."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[LLMVerdict] = Field(max_length=80)


def apply_llm_verdicts(judged: list[JudgedRequirement], verdicts: list[LLMVerdict],
                       notes: list[str]) -> list[JudgedRequirement] | None:
    """Apply the model's verdicts where code allows them: the model may reject what code accepts, never
    accept what code rejects (the verbatim and length checks, and the rules gate: relevance, the time
    rule, the relative checks).

    Only requirements that code verified are open to the model. Verdicts on other IDs (unknown,
    rejected by code) and self-contradicting ones (verified with a reason, rejected without) are
    ignored and noted; requirements the model skipped keep the rules verdict. Returns None when no
    verdict was usable (the caller then records a fallback).
    """
    eligible = {j.requirement.requirement_id for j in judged if j.verified}
    rejected = {j.requirement.requirement_id for j in judged if not j.verified}
    usable: dict[str, LLMVerdict] = {}
    ignored, overruled = [], []
    for verdict in verdicts:
        if verdict.verified and verdict.requirement_id in rejected:
            overruled.append(verdict.requirement_id)
        elif verdict.requirement_id not in eligible or verdict.verified == (verdict.rejection_reason is not None):
            ignored.append(verdict.requirement_id)
        else:
            usable.setdefault(verdict.requirement_id, verdict)
    if ignored:
        notes.append(f"verify: ignored llm verdicts on unknown, unverifiable or contradictory {', '.join(ignored)}")
    if overruled:
        notes.append(f"verify: ignored llm verdicts accepting {', '.join(overruled)}: code rejected them")
    skipped = sorted(eligible - usable.keys())
    if skipped and usable:
        notes.append(f"verify: no llm verdict for {', '.join(skipped)}; rules verdict kept")
    if not usable:
        return None
    return [j.model_copy(update={"verified": usable[rid].verified, "rejection_reason": usable[rid].rejection_reason,
                                 "rationale": usable[rid].rationale or "llm verdict", "decided_by": "llm"})
            if (rid := j.requirement.requirement_id) in usable else j for j in judged]


def verify_node(state: dict, deps: Any) -> dict:
    """Graph node: code checks, then the rules gate, or the model's verdicts where code allows them."""
    from agents.runtime import evidence_allowance, evidence_update, llm_or_rules_within

    question = state["stem"]
    requirements = [Requirement.model_validate(r) for r in state.get("requirements") or []]
    chunks = {e["chunk_id"]: e for e in state["evidence"]}
    by_rules = verify_requirements(question, requirements, chunks, deps.embedder)
    eligible = [j.requirement for j in by_rules if j.verified]  # the model may only reject what code accepts
    judged, fallbacks, notes, calls = by_rules, [], [], 0
    if deps.llm is not None and eligible:
        judged, fallbacks, calls = llm_or_rules_within(
            deps, evidence_allowance(state, deps), "verify", "verify", VerifyReply, rules=lambda: by_rules,
            accept=lambda reply: apply_llm_verdicts(by_rules, reply.verdicts, notes), question=question,
            requirements=[{"requirement_id": r.requirement_id, "quote": " ".join(r.exact_quote.split()),
                           "document_title": r.document_title, "section_path": r.section_path} for r in eligible])
    return evidence_update(fallbacks + notes, calls, judged=[j.model_dump(mode="json") for j in judged])
