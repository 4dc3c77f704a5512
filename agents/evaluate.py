"""Evaluate: how well a research step's evidence covers its aspect.

A step's confidence is the learned relevance model's probability that the step's own best chunk
answers the step's aspect (pair head; a retry's reworded query is not what is judged). Without a
model (pure function calls): the fused score is min-max
normalized per query (the best hit is always near 1), so it says nothing absolute; confidence mixes
the best dense cosine, rescaled from the range the base MiniLM gives (unrelated text about 0.1-0.3,
on-topic requirement text 0.5-0.8), with the share of the aspect's key terms that the best hits contain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.select import relevance_model
from agents.state import EvidenceItem, ResearchState, ResearchStep
from engine.config import ResearchStepSettings
from engine.relevance.protocol import RelevanceGate
from engine.terms import key_terms, tokenize

if TYPE_CHECKING:
    from agents.deps import Deps

_STEP = ResearchStepSettings()  # the defaults; evaluate_node passes its settings' group


def coverage(aspect: str, texts: list[str]) -> float:
    """Share of the aspect's key terms present in the texts."""
    terms = set(key_terms(aspect))
    if not terms:
        return 0.0
    found = set()
    for text in texts:
        found |= terms & set(tokenize(text))
    return len(found) / len(terms)


def step_confidence(aspect: str, hits: list[EvidenceItem], top: int = 5, model: RelevanceGate | None = None,
                    limits: ResearchStepSettings = _STEP) -> float:
    """Confidence in [0, 1] for one step's new evidence: with the relevance model, the probability
    (pair head) that the step's best chunk answers the aspect itself (not the step's reworded query);
    without it, the best cosine rescaled between `limits.cosine_floor` and `limits.cosine_ceiling`."""
    if not hits:
        return 0.0
    if model is not None:
        return round(max(model.pair_probabilities(aspect, [h["text"] for h in hits[:top]])), 4)
    best = max((h.get("dense_score") or 0.0) for h in hits[:top])
    floor, ceiling = limits.cosine_floor, limits.cosine_ceiling
    dense_part = min(1.0, max(0.0, (best - floor) / (ceiling - floor)))
    return round(0.5 * dense_part + 0.5 * coverage(aspect, [h["text"] for h in hits[:top]]), 4)


def uncovered_terms(question: str, evidence: list[EvidenceItem]) -> list[str]:
    """Key terms of the question that no evidence mentions (what is still unanswered)."""
    terms = key_terms(question)
    seen: set[str] = set()
    for item in evidence:
        seen |= set(tokenize(item["text"]))
    return [t for t in terms if t not in seen and len(t) >= 4 and not t.isdigit()]


def evaluate_node(state: ResearchState, deps: Deps) -> dict[str, Any]:
    """Score the step, mark it completed or failed, and log it."""
    current = state["current"]
    found = set(current.get("found", []))
    hits = [e for e in state["evidence"] if e["chunk_id"] in found]
    limits = deps.settings.research
    confidence = step_confidence(current["aspect"], hits, model=relevance_model(deps), limits=limits)
    status = "completed" if confidence >= deps.settings.research_threshold else "failed"
    earlier = [e["text"] for e in state["evidence"] if e["chunk_id"] not in found]
    covered_before = status == "failed" and coverage(current["aspect"], earlier) >= limits.answered_by_earlier
    if covered_before:  # new chunks exclude earlier ones, so an aspect already answered finds little new
        status = "completed"
    step: ResearchStep = {"index": len(state["steps"]) + 1, "aspect": current["aspect"], "attempt": current["attempt"],
            "queries": current.get("queries", []),
            "retrieved": [{"chunk_id": h["chunk_id"], "score": h["score"], "dense_score": h["dense_score"],
                           "lexical_score": h["lexical_score"]} for h in hits],
            "cross_references": current.get("cross_references", []), "confidence": confidence, "status": status,
            "covered_by_earlier_evidence": covered_before}
    memory = {} if status == "completed" else {"dead_ends": [f"'{current['aspect']}' (attempt {current['attempt']}): "
                                                             f"confidence {confidence}"]}
    return {"steps": [step], "iterations": state["iterations"] + 1, "memory": memory}
